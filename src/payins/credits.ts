import type { Queryable } from '../db/db.js'
import { storable } from '../operators/audit.js'
import { postEntry, systemAccountId } from '../ledger/ledger.js'
import { assert } from '../shared/assert.js'
import { nowBy } from '../shared/clock.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { asAccountId, asTxnId, newId, type AccountId, type TxnId } from '../shared/ids.js'
import { getTxn, setRailRef, setSrcFee } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import { postReceiveEntry, receiveIntoWalletPostings } from '../transactions/receive-fx.js'
import { parseRate } from '../shared/amount.js'
import { newDeposit } from '../bitcoin/deposit.js'
import { receiveFee } from '../bitcoin/receive-credit.js'
import { BANK_CREDIT_AMOUNT_MAX, type BankCredit, type CreditSink } from '../payouts/vnd/bank-credit.js'
import type { PayinDeps } from './deps.js'
import { amountOutcome, memoCandidates } from './match.js'
import { receiveCompletionMsg } from '../transactions/receive-outcome.js'
import { sql } from '../db/sql.js'

/**
 * Incoming bank transfers (VietQR pay-in, docs/payouts.md), each recorded once in `bank_credits`
 * by its partner reference and credited in the same database transaction:
 * - its memo names a receive still waiting (srccreated): the receive completes with what arrived,
 *   less the receive fee (`msg` `underpaid` or `overpaid` when that is not what was asked);
 * - its memo names a receive that expired or completed already: a `deposit` of its own, completed
 *   at once, to the wallet the receive credits, at its quoted rate (`srcDetails.forTxnId` names it);
 * - no memo of ours: the money goes to `sys:suspense:VND` and the credit waits, `unassigned`, for
 *   an operator to assign it (`assignCredit`).
 * Money that arrives is never dropped and never credited twice.
 */

export type CreditStatus = 'matched' | 'deposit' | 'unassigned' | 'assigned'
export type CreditOutcome = 'exact' | 'underpaid' | 'overpaid' | 'late' | 'second_payment' | 'unmatched'

export interface IngestOutcome {
  creditId: string
  bankRef: string
  status: CreditStatus
  outcome: CreditOutcome
  /** The transaction credited: the receive, or the deposit made for the transfer; null in suspense. */
  txnId: string | null
  /** True when this bankRef had been recorded before: nothing was done, the first outcome is returned. */
  duplicate: boolean
}

const BANK_REF = /^[A-Za-z0-9._:-]{1,128}$/
const MEMO_MAX = 500

/** Where money credited to a wallet comes from: straight from the bank, or out of suspense. */
type Source = 'bank' | 'suspense'

/** The sink of bank credits (bank-credit.ts): record, match and credit one transfer, once. */
export async function ingestBankCredit(deps: PayinDeps, credit: BankCredit): Promise<IngestOutcome> {
  if (!BANK_REF.test(credit.bankRef))
    throw fieldError('invalid_request', 'bankRef', 'is not a bank reference')
  if (
    typeof credit.amountMinor !== 'bigint' ||
    credit.amountMinor <= 0n ||
    credit.amountMinor > BANK_CREDIT_AMOUNT_MAX
  )
    throw fieldError(
      'invalid_amount',
      'amount',
      `must be a positive whole number of dong, at most ${BANK_CREDIT_AMOUNT_MAX}`,
    )
  if (credit.memo.length > MEMO_MAX)
    throw fieldError('invalid_request', 'memo', `is longer than ${MEMO_MAX} characters`)
  if (!Number.isSafeInteger(credit.bookedAtMs))
    throw fieldError('invalid_request', 'bookedAtMs', 'is not a time')
  const at = nowBy(deps)
  return deps.db.tx(async (q) => {
    const creditId = newId('bcr')
    // A second delivery of the same transfer (or one racing this) finds the first row and stops.
    // Free text from a bank (memo, payer): what PostgreSQL cannot store is replaced, never refused.
    const { rowCount } = await q.query(
      sql`INSERT INTO bank_credits (id, bank_ref, amount_minor, memo, booked_at, payer, status, outcome, created_at)
       VALUES (${creditId}, ${credit.bankRef}, ${credit.amountMinor}, ${storable(credit.memo)}, ${credit.bookedAtMs}, ${
         credit.payer
           ? JSON.stringify(credit.payer, (_k, v) => (typeof v === 'string' ? storable(v) : v))
           : null
       }, 'unassigned', 'unmatched', ${at}) ON CONFLICT (bank_ref) DO NOTHING`,
    )
    if (rowCount === 0) return { ...(await recordedOutcome(q, credit.bankRef)), duplicate: true }
    const named = await receiveNamed(q, credit.memo)
    let result: Pick<IngestOutcome, 'status' | 'outcome' | 'txnId'>
    if (!named) {
      await postEntry(q, {
        txnId: null,
        kind: 'bank_suspense',
        now: at,
        postings: [
          { accountId: systemAccountId('bank', 'VND'), ccy: 'VND', amount: -credit.amountMinor },
          { accountId: systemAccountId('suspense', 'VND'), ccy: 'VND', amount: credit.amountMinor },
        ],
      })
      // The entry names no transaction: reconciliation finds it by this credit (src/reconcile/refs.ts).
      // It is the last journal entry this connection wrote, in this database transaction.
      await q.query(
        sql`UPDATE bank_credits SET suspense_entry_id = currval(pg_get_serial_sequence('journal_entries', 'id'))
          WHERE id = ${creditId}`,
      )
      result = { status: 'unassigned', outcome: 'unmatched', txnId: null }
    } else if (named.txn.state === 'srccreated') {
      const done = await completeVndReceive(
        deps,
        q,
        named.txn,
        { bankRef: credit.bankRef, arrived: credit.amountMinor, from: 'bank' },
        at,
      )
      result = {
        status: 'matched',
        outcome: amountOutcome(named.txn.srcAmountMinor, credit.amountMinor),
        txnId: done.id,
      }
    } else {
      const late = named.txn.state === 'expired'
      const deposit = await creditDeposit(deps, q, {
        accountId: named.txn.accountId,
        into: named.txn,
        bankRef: credit.bankRef,
        arrived: credit.amountMinor,
        from: 'bank',
        srcDetails: {
          bankRef: credit.bankRef,
          memo: named.memo,
          forTxnId: named.txn.id,
          ...(late ? { latePayment: true } : { secondPayment: true }),
        },
        at,
      })
      result = { status: 'deposit', outcome: late ? 'late' : 'second_payment', txnId: deposit.id }
    }
    await q.query(
      sql`UPDATE bank_credits SET memo_token = ${named?.memo ?? null}, status = ${result.status}, outcome = ${result.outcome}, txn_id = ${result.txnId} WHERE id = ${creditId}`,
    )
    return { creditId, bankRef: credit.bankRef, ...result, duplicate: false }
  })
}

/** The sink the bank partner's transport calls (notifications, statement polling). */
export function creditSink(deps: PayinDeps): CreditSink {
  return async (credit) => {
    await ingestBankCredit(deps, credit)
  }
}

async function recordedOutcome(q: Queryable, bankRef: string): Promise<Omit<IngestOutcome, 'duplicate'>> {
  const { rows } = await q.query<{
    id: string
    status: CreditStatus
    outcome: CreditOutcome
    txn_id: string | null
  }>(sql`SELECT id, status, outcome, txn_id FROM bank_credits WHERE bank_ref = ${bankRef}`)
  const row = rows[0]
  assert(row, 'a bank reference that conflicted is recorded')
  return { creditId: row.id, bankRef, status: row.status, outcome: row.outcome, txnId: row.txn_id }
}

/** The receive whose memo the description names (locked), with that memo; the first one that is ours. */
async function receiveNamed(
  q: Queryable,
  description: string,
): Promise<{ memo: string; txn: Txn } | undefined> {
  for (const memo of memoCandidates(description)) {
    const { rows } = await q.query<{ txn_id: TxnId }>(
      sql`SELECT txn_id FROM vnd_receive_memos WHERE memo = ${memo}`,
    )
    const txn = rows[0] && (await getTxn(q, rows[0].txn_id, { lock: true }))
    if (txn) return { memo, txn }
  }
  return undefined
}

/**
 * Complete a VND receive (locked, srccreated) with what arrived. The quoted fee stands when the
 * amount asked for arrived; a short or over payment is charged the receive fee on what arrived,
 * never more than it, as on-chain receives are. The rest goes to the receive's wallet, converted at
 * its quoted rate when that is a BTC or USDT one.
 */
async function completeVndReceive(
  deps: PayinDeps,
  q: Queryable,
  txn: Txn,
  credit: { bankRef: string; arrived: bigint; from: Source },
  at: number,
): Promise<Txn> {
  const { bankRef, arrived, from } = credit
  const outcome = amountOutcome(txn.srcAmountMinor, arrived)
  const fee = outcome === 'exact' ? txn.srcFeeMinor : receiveFee(deps.config.fees.vnd_receive!, arrived)
  if (fee !== txn.srcFeeMinor) await setSrcFee(q, txn.id, fee)
  const credited = await postReceiveEntry(deps.accounts, q, txn, {
    railAccount: systemAccountId(from, 'VND'),
    receivedMinor: arrived,
    feeMinor: fee,
    kind: 'vnd_receive',
    now: at,
  })
  return deps.repository.transition(
    q,
    txn,
    'completed',
    {
      msg: receiveCompletionMsg(txn.srcAmountMinor, arrived),
      srcSettledMinor: arrived,
      destSettledMinor: credited,
      // From now on the bank's reference of the transfer, as a payout's is (reconciliation).
      railRef: bankRef,
    },
    { now: at },
  )
}

/**
 * A completed `deposit` (method vnd-instant) of dong that arrived for an account with no receive
 * waiting. One that belongs to a receive (`into`: late, a second transfer, or assigned to it) goes
 * to that receive's wallet at its quoted rate, as a second payment of a Lightning invoice does
 * (src/lightning/second-payment.ts): the payer paid on the terms the receive set. Without a receive
 * it is dong into the VND wallet.
 */
async function creditDeposit(
  deps: PayinDeps,
  q: Queryable,
  d: {
    accountId: AccountId
    into?: Pick<Txn, 'destCcy' | 'fxRate'>
    bankRef: string
    arrived: bigint
    from: Source
    srcDetails: Record<string, unknown>
    at: number
  },
): Promise<Txn> {
  const destCcy = d.into?.destCcy ?? 'VND'
  const fxRate = d.into?.fxRate ?? '1'
  const walletId = await deps.accounts.walletId(q, d.accountId, destCcy)
  if (!walletId)
    throw fieldError('unsupported_currency_pair', 'accountId', `the account has no ${destCcy} wallet`)
  const fee = receiveFee(deps.config.fees.vnd_receive!, d.arrived)
  const { postings, creditedMinor } = receiveIntoWalletPostings({
    railAccount: systemAccountId(d.from, 'VND'),
    walletId,
    srcCcy: 'VND',
    destCcy,
    receivedMinor: d.arrived,
    feeMinor: fee,
    fxRate: parseRate(fxRate),
  })
  const row = await deps.repository.insertTxn(
    q,
    newDeposit({
      accountId: d.accountId,
      key: `vnd:${d.bankRef}`,
      method: 'vnd-instant',
      ccy: 'VND',
      amountMinor: d.arrived,
      feeMinor: fee,
      srcDetails: d.srcDetails,
      at: d.at,
      nextCheckAtMs: null,
      credit: { ccy: destCcy, fxRate, amountMinor: creditedMinor },
    }),
    { event: true },
  )
  assert(row, 'a deposit transaction has no extRefId to collide on')
  await setRailRef(q, row.id, d.bankRef)
  await postEntry(q, { txnId: row.id, kind: 'deposit', now: d.at, postings })
  return deps.repository.transition(
    q,
    { ...row, railRef: d.bankRef },
    'completed',
    { srcSettledMinor: d.arrived, destSettledMinor: creditedMinor },
    { now: d.at },
  )
}

export interface AssignInput {
  creditId: string
  accountId: string
  /** A VND receive of that account the transfer was meant for; without it, a deposit. */
  txnId?: string
  operatorId: string
  reason: string
}

/**
 * An operator's assignment of a credit in suspense to an account, exactly once (the credit row is
 * locked, and only an `unassigned` one moves): to the named receive when it still waits (it
 * completes), else as a deposit (into the named receive's wallet at its quoted rate, or without one
 * into the VND wallet); the money leaves sys:suspense:VND. The route records the audit row
 * in the same database transaction.
 */
export async function assignCredit(
  deps: PayinDeps,
  input: AssignInput,
): Promise<{ creditId: string; accountId: string; txnId: string; amount: bigint; bankRef: string }> {
  const at = nowBy(deps)
  return deps.db.tx(async (q) => {
    const { rows } = await q.query<{
      id: string
      bank_ref: string
      amount_minor: bigint
      status: CreditStatus
    }>(
      sql`SELECT id, bank_ref, amount_minor, status FROM bank_credits WHERE id = ${input.creditId} FOR UPDATE`,
    )
    const credit = rows[0]
    if (!credit) throw new ApiError('not_found', `No bank credit ${input.creditId}`)
    if (credit.status !== 'unassigned')
      throw new ApiError('invalid_state', `Bank credit ${credit.id} is ${credit.status}, not unassigned`)
    const arrived = BigInt(credit.amount_minor)
    const receive = input.txnId
      ? await getTxn(q, asTxnId(input.txnId), { accountId: asAccountId(input.accountId), lock: true })
      : undefined
    if (input.txnId && receive?.kind !== 'vnd_receive')
      throw fieldError('invalid_request', 'txnId', 'is not a VND receive of this account')
    let txn: Txn
    if (receive?.state === 'srccreated') {
      txn = await completeVndReceive(
        deps,
        q,
        receive,
        { bankRef: credit.bank_ref, arrived, from: 'suspense' },
        at,
      )
    } else {
      if (!(await deps.accounts.get(input.accountId)))
        throw fieldError('not_found', 'accountId', 'is not an account of this service')
      txn = await creditDeposit(deps, q, {
        accountId: asAccountId(input.accountId),
        ...(receive ? { into: receive } : {}),
        bankRef: credit.bank_ref,
        arrived,
        from: 'suspense',
        srcDetails: {
          bankRef: credit.bank_ref,
          assignedCredit: credit.id,
          ...(receive ? { forTxnId: receive.id } : {}),
        },
        at,
      })
    }
    await q.query(
      sql`UPDATE bank_credits SET status = 'assigned', txn_id = ${txn.id}, assigned_by = ${input.operatorId}, assigned_reason = ${input.reason}, assigned_at = ${at}
        WHERE id = ${credit.id} AND status = 'unassigned'`,
    )
    return {
      creditId: credit.id,
      accountId: input.accountId,
      txnId: txn.id,
      amount: arrived,
      bankRef: credit.bank_ref,
    }
  })
}

export interface CreditRow {
  creditId: string
  bankRef: string
  amountMinor: bigint
  /** The transfer's description as the bank gave it (the payer's name and account are never listed). */
  memo: string
  bookedAt: number
  status: CreditStatus
  outcome: CreditOutcome
  txnId: string | null
  createdAt: number
}

/** Credits in one status, oldest booked first, and how many there are. */
export async function listCredits(
  q: Queryable,
  status: CreditStatus,
  limit: number,
): Promise<{ total: number; rows: CreditRow[] }> {
  const [{ rows }, { rows: count }] = await Promise.all([
    q.query(
      sql`SELECT id, bank_ref, amount_minor, memo, booked_at, status, outcome, txn_id, created_at FROM bank_credits
        WHERE status = ${status} ORDER BY booked_at, id LIMIT ${limit}`,
    ),
    q.query<{ n: bigint }>(sql`SELECT count(*)::int8 AS n FROM bank_credits WHERE status = ${status}`),
  ])
  return {
    total: Number(count[0]!.n),
    rows: rows.map((r: any) => ({
      creditId: r.id,
      bankRef: r.bank_ref,
      amountMinor: BigInt(r.amount_minor),
      memo: r.memo,
      bookedAt: Number(r.booked_at),
      status: r.status,
      outcome: r.outcome,
      txnId: r.txn_id,
      createdAt: Number(r.created_at),
    })),
  }
}
