import { createHash, randomBytes } from 'node:crypto'
import type { Queryable } from '../../db/db.js'
import { RailFailure, type BankPayoutRail } from '../../rails/rail.js'
import { readSandboxPayout } from '../tron/sandbox.js'
import { sandboxPayoutPayments, sandboxPayoutReserves } from '../../rails/sandbox-reserves.js'
import { sandboxAccountName } from './sandbox-accounts.js'
import { sql } from '../../db/sql.js'

export interface SandboxBankDeps {
  db: Queryable
  /** How long after submission a transfer settles (`SANDBOX_PAYOUT_DELAY_MS`). */
  delayMs: number
  now?: () => number
}

/** The sandbox bank's answers, as the contract describes them (section 9). */
export const SANDBOX_BANK_OUTCOMES = {
  /** An account number ending 0000: the bank refuses the transfer. */
  rejected: { suffix: '0000', reason: 'rejected_by_bank' },
  /** An account number ending 1111: the transfer is accepted, then fails. */
  failed: { suffix: '1111', reason: 'beneficiary_account_closed' },
} as const

/**
 * The sandbox VND bank: a transfer is recorded in `sandbox_payouts` under a bank reference, its
 * outcome decided at submission from the account number's last four digits, and reads as pending
 * until `delayMs` has passed. The account number and the beneficiary are not stored: the outcome
 * is all the sandbox needs from them.
 */
export function createSandboxBankRail(deps: SandboxBankDeps): BankPayoutRail {
  const now = deps.now ?? Date.now
  return {
    name: 'sandbox',

    // What the sandbox bank account holds, from its own records (reconciliation, src/reconcile):
    // what it paid out, and the customers' transfers in (recordSandboxTransferIn).
    async reserves() {
      const out = await sandboxPayoutReserves(deps.db, 'bank', 'VND')
      const { rows } = await deps.db.query<{ total: unknown }>(
        sql`SELECT COALESCE(SUM(amount_minor), 0)::int8 AS total FROM sandbox_bank_transfers_in`,
      )
      return { ...out, balances: { VND: out.balances.VND! + BigInt(rows[0]!.total as bigint) } }
    },
    async payments(sinceMs) {
      const { rows } = await deps.db.query<{ bank_ref: string; amount_minor: unknown; created_at: unknown }>(
        sql`SELECT bank_ref, amount_minor, created_at FROM sandbox_bank_transfers_in WHERE created_at >= ${sinceMs}`,
      )
      return [
        ...(await sandboxPayoutPayments(deps.db, 'bank', sinceMs)),
        ...rows.map((r) => ({
          ref: r.bank_ref,
          direction: 'in' as const,
          amountMinor: BigInt(r.amount_minor as bigint),
          at: Number(r.created_at),
        })),
      ]
    },

    async submitPayout(input) {
      if (input.amountMinor <= 0n)
        throw new RailFailure('invalid_amount', 'a transfer must move a positive amount', false)
      const at = now()
      const { rejected, failed } = SANDBOX_BANK_OUTCOMES
      const outcome = input.bankAcctNum.endsWith(rejected.suffix)
        ? { status: 'rejected', reason: rejected.reason }
        : input.bankAcctNum.endsWith(failed.suffix)
          ? { status: 'failed', reason: failed.reason }
          : { status: 'completed', reason: '' }
      const digest = createHash('sha256')
        .update(`sandbox-bank:${input.requestId}:`)
        .update(randomBytes(16))
        .digest('hex')
      const bankRef = `SBX${digest.slice(0, 16).toUpperCase()}`
      await deps.db.query(
        sql`INSERT INTO sandbox_payouts (ref, kind, request_id, amount_minor, status, reason, settle_at, created_at)
         VALUES (${bankRef}, 'bank', ${input.requestId}, ${input.amountMinor}, ${outcome.status}, ${outcome.reason}, ${at + deps.delayMs}, ${at}) ON CONFLICT (request_id) DO NOTHING`,
      )
      // A repeated request finds the first transfer: the bank never pays twice for one request.
      const { rows } = await deps.db.query<{ ref: string }>(
        sql`SELECT ref FROM sandbox_payouts WHERE request_id = ${input.requestId} AND kind = 'bank'`,
      )
      if (!rows[0])
        throw new RailFailure('request_conflict', `request ${input.requestId} is not a bank payout`, false)
      return { bankRef: rows[0].ref }
    },

    async getPayout(bankRef) {
      return readSandboxPayout(deps.db, 'bank', bankRef, now())
    },

    // A deterministic holder's name per account (sandbox-accounts.ts); nothing is stored.
    accountName: async ({ institutionCode, bankAcctNum }) => sandboxAccountName(institutionCode, bankAcctNum),
  }
}

/**
 * A customer's transfer into our collecting account at the sandbox bank (src/payins/routes.ts): a
 * new bank reference, recorded as held. The caller hands the credit to the bank-credit sink.
 */
export async function recordSandboxTransferIn(
  db: Queryable,
  amountMinor: bigint,
  at: number,
): Promise<{ bankRef: string }> {
  const bankRef = `SBXIN${randomBytes(8).toString('hex').toUpperCase()}`
  await db.query(
    sql`INSERT INTO sandbox_bank_transfers_in (bank_ref, amount_minor, created_at) VALUES (${bankRef}, ${amountMinor}, ${at})`,
  )
  return { bankRef }
}
