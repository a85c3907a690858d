import { createHash, randomBytes } from 'node:crypto'
import type { Queryable } from '../../db/db.js'
import { RailFailure, type PayoutState, type TronRail } from '../../rails/rail.js'
import { sandboxPayoutPayments, sandboxPayoutReserves } from '../../rails/sandbox-reserves.js'
import { sql } from '../../db/sql.js'

export interface SandboxTronDeps {
  db: Queryable
  /** Destination addresses whose transfers fail (`SANDBOX_TRON_FAIL`). */
  failAddresses: readonly string[]
  /** How long after submission a transfer settles (`SANDBOX_PAYOUT_DELAY_MS`). */
  delayMs: number
  now?: () => number
}

/** The reason a transfer to a `SANDBOX_TRON_FAIL` address fails with. */
export const SANDBOX_TRON_FAIL_REASON = 'transfer_reverted'

/**
 * The sandbox TRON network: a USDT transfer is recorded in `sandbox_payouts` with a transaction
 * hash (64 hex, as TRON transaction ids are) and its outcome, decided at submission: it fails when
 * the address is listed in `SANDBOX_TRON_FAIL` and succeeds otherwise. Until `delayMs` has passed
 * the transfer reads as pending, as a real one does until it is confirmed.
 */
export function createSandboxTronRail(deps: SandboxTronDeps): TronRail {
  const now = deps.now ?? Date.now
  const failing = new Set(deps.failAddresses)
  return {
    name: 'sandbox',

    // What the sandbox hot wallet holds, from its own records (reconciliation, src/reconcile).
    reserves: () => sandboxPayoutReserves(deps.db, 'tron', 'USDT'),
    payments: (sinceMs) => sandboxPayoutPayments(deps.db, 'tron', sinceMs),

    async sendUsdt({ to, amountMinor, requestId }) {
      if (amountMinor <= 0n)
        throw new RailFailure('invalid_amount', 'a transfer must move a positive amount', false)
      const at = now()
      // The hash only has to be unique; the random part keeps it so across sandbox databases.
      const txHash = createHash('sha256')
        .update(`sandbox-tron:${requestId}:`)
        .update(randomBytes(16))
        .digest('hex')
      const fails = failing.has(to)
      await deps.db.query(
        sql`INSERT INTO sandbox_payouts (ref, kind, request_id, amount_minor, status, reason, settle_at, created_at)
         VALUES (${txHash}, 'tron', ${requestId}, ${amountMinor}, ${fails ? 'failed' : 'completed'}, ${fails ? SANDBOX_TRON_FAIL_REASON : ''}, ${at + deps.delayMs}, ${at}) ON CONFLICT (request_id) DO NOTHING`,
      )
      // A repeated request finds the first transfer: the rail never sends twice for one request.
      const { rows } = await deps.db.query<{ ref: string }>(
        sql`SELECT ref FROM sandbox_payouts WHERE request_id = ${requestId} AND kind = 'tron'`,
      )
      if (!rows[0])
        throw new RailFailure('request_conflict', `request ${requestId} is not a TRON transfer`, false)
      return { txHash: rows[0].ref }
    },

    async getTransfer(txHash) {
      return readSandboxPayout(deps.db, 'tron', txHash, now())
    },
  }
}

/** The state of a sandbox payout as its network reports it at `at`: pending until it settles. */
export async function readSandboxPayout(
  db: Queryable,
  kind: 'tron' | 'bank',
  ref: string,
  at: number,
): Promise<PayoutState> {
  const { rows } = await db.query<{
    status: 'completed' | 'failed' | 'rejected'
    reason: string
    settle_at: bigint
  }>(sql`SELECT status, reason, settle_at FROM sandbox_payouts WHERE ref = ${ref} AND kind = ${kind}`)
  const row = rows[0]
  if (!row)
    throw new RailFailure('unknown_payout', `the sandbox ${kind} network knows no payout ${ref}`, false)
  if (BigInt(at) < row.settle_at) return { status: 'pending' }
  if (row.status === 'completed') return { status: 'completed' }
  return { status: row.status, reason: row.reason }
}
