import type { Queryable } from '../db/db.js'
import type { AccountId, TxnId } from '../shared/ids.js'
import type { TxnKind, TxnState } from './state-machine.js'
import { FINAL_STATES } from './state-machine.js'
import type { KindRegistry } from './kinds.js'
import { sql, type Sql } from '../db/sql.js'
import { notifyChange, outboxCtes, recordEvent, takeEnqueued, type OutboxConfig } from '../events/outbox.js'
import { assert, InvariantError } from '../shared/assert.js'
import { entryCtes, holdCtes, type EntryInput } from '../ledger/ledger.js'
import {
  INSERT_COLUMN_NAMES,
  insertColumns,
  patchColumns,
  txnFromRow,
  type NewTxn,
  type Txn,
  type TxnPatch,
} from './txn.js'

/** The time of a change, as its caller took it (the same instant as the change's ledger entry). */
export interface ChangeTime {
  now: number
}

/** What a new transaction may be written with: its outbox event; with it, the hold of a quote. */
export interface InsertOptions {
  event?: boolean
  hold?: { accountId: AccountId; ccy: string; amount: bigint; now: number }
}

/**
 * The writes of transactions that need the service's configuration, built once with it (see
 * src/container.ts) and handed to the flows in their deps: every outbox event they write follows the
 * configured webhook variant and is stamped by the configured clock. A change's own time (`now` of
 * a transition or settlement) is still the caller's, who uses the same instant for its ledger entry.
 */
export interface TxnRepository {
  /** The clock the outbox is stamped with, for the service's own times. */
  now: () => number
  /**
   * Insert a new transaction; returns undefined when its (account, extRefId) already exists. With
   * `event`, its outbox event is written by the same statement (one round trip), as recordEvent
   * would; with `hold` as well, the wallet hold of a wallet-funded quote (see holdCtes), when it is
   * covered.
   */
  insertTxn(q: Queryable, txn: NewTxn, opts?: InsertOptions): Promise<Txn | undefined>
  /** See `transition` below. */
  transition(q: Queryable, txn: Txn, to: TxnState, patch: TxnPatch, at: ChangeTime): Promise<Txn>
  /** See `settleQuoted` below. */
  settleQuoted(
    q: Queryable,
    txn: Txn,
    settlement: { entry: EntryInput; to: TxnState; patch: TxnPatch },
    at: ChangeTime,
  ): Promise<Txn | undefined>
  /** Write the outbox event of a transaction inserted without one (a deposit, a payout return). */
  recordEvent(q: Queryable, txn: Txn): Promise<void>
}

/** The repository's configuration: the outbox's, and the kind registry whose state machines it keeps. */
export interface TxnRepositoryConfig extends OutboxConfig {
  kinds: Pick<KindRegistry, 'transitions'>
}

export function createTxnRepository(config: TxnRepositoryConfig): TxnRepository {
  const { kinds, ...outbox } = config
  return {
    now: config.now,
    insertTxn: (q, txn, opts = {}) => insertTxn(q, txn, opts, outbox),
    transition: (q, txn, to, patch, at) => transition(q, txn, to, patch, { ...at, outbox, kinds }),
    settleQuoted: (q, txn, settlement, at) => settleQuoted(q, txn, settlement, { ...at, outbox, kinds }),
    recordEvent: (q, txn) =>
      recordEvent(
        q,
        {
          id: txn.id,
          account_id: txn.accountId,
          state: txn.state,
          msg: txn.msg,
          ext_ref_id: txn.extRefId,
          updated_at: txn.updatedAtMs,
        },
        outbox,
      ),
  }
}

/** Whether a kind's table allows the transition; the repository writes no other. */
export function canTransition(
  transitions: KindRegistry['transitions'],
  kind: TxnKind,
  from: TxnState,
  to: TxnState,
): boolean {
  return transitions.get(kind)?.[from]?.includes(to) ?? false
}

/** A change's time, the outbox configuration its event is written with, and the state machines. */
type ChangeOptions = ChangeTime & { outbox: OutboxConfig; kinds: Pick<KindRegistry, 'transitions'> }

// The WITH item holding the row an insert or a transition wrote, which the outbox reads.
const CHANGED = sql.ident('changed')

// The same for every insert: checked and joined once, not at every quote.
const INSERT_COLUMN_LIST = sql.join(INSERT_COLUMN_NAMES.map(sql.ident), sql`, `)

async function insertTxn(
  q: Queryable,
  txn: NewTxn,
  opts: InsertOptions,
  outbox: OutboxConfig,
): Promise<Txn | undefined> {
  const values = insertColumns(txn).map(([, value]) => sql`${value}`)
  const insert = sql`INSERT INTO transactions (${INSERT_COLUMN_LIST})
     VALUES (${sql.join(values, sql`, `)})
     ON CONFLICT (account_id, ext_ref_id) DO NOTHING RETURNING *`
  if (!opts.event) {
    const { rows } = await q.query(insert)
    return rows[0] ? txnFromRow(rows[0]) : undefined
  }
  const hold = opts.hold
    ? sql`, ${holdCtes({ txnId: txn.id, ...opts.hold }, sql`EXISTS (SELECT 1 FROM changed)`)}`
    : sql.empty
  const written = outboxCtes(CHANGED, txn.state, outbox)
  const { rows } = await q.query(
    sql`WITH ${CHANGED} AS (${insert}), ${written.ctes}${hold} SELECT changed.*, ${written.enqueued} FROM changed`,
  )
  if (!rows[0]) return undefined
  const [row, enqueued] = takeEnqueued(rows[0])
  await notifyChange(q, row.id, enqueued)
  return txnFromRow(row)
}

export async function getTxn(q: Queryable, id: TxnId, opts: { accountId?: AccountId; lock?: boolean } = {}) {
  const account = opts.accountId ? sql` AND account_id = ${opts.accountId}` : sql.empty
  const lock = opts.lock ? sql` FOR UPDATE` : sql.empty
  const { rows } = await q.query(sql`SELECT * FROM transactions WHERE id = ${id}${account}${lock}`)
  return rows[0] ? txnFromRow(rows[0]) : undefined
}

/**
 * Lock a transaction for confirm, reading with it the sum of its open holds (one round trip);
 * undefined when it does not exist for this account.
 */
export async function lockForConfirm(
  q: Queryable,
  id: TxnId,
  accountId: AccountId,
): Promise<{ txn: Txn; pendingHold: bigint } | undefined> {
  const { rows } = await q.query<{ pending_hold?: bigint | null }>(
    sql`SELECT t.*, (SELECT SUM(h.amount) FROM holds h WHERE h.txn_id = t.id AND h.status = 'pending')::int8 AS pending_hold
       FROM transactions t WHERE t.id = ${id} AND t.account_id = ${accountId} FOR UPDATE OF t`,
  )
  const row = rows[0]
  if (!row) return undefined
  return { txn: txnFromRow(row), pendingHold: row.pending_hold ?? 0n }
}

export async function getByExtRef(q: Queryable, accountId: AccountId, extRefId: string) {
  const { rows } = await q.query(
    sql`SELECT * FROM transactions WHERE account_id = ${accountId} AND ext_ref_id = ${extRefId}`,
  )
  return rows[0] ? txnFromRow(rows[0]) : undefined
}

export class StaleTransition extends Error {}

/**
 * Move a transaction to `to`, applying `patch`, and write its outbox event, inside the caller's
 * database transaction. Refuses transitions outside the state machine (a bug), and throws
 * `StaleTransition` when the row is no longer in the state the caller read (a lost race).
 */
async function transition(
  q: Queryable,
  txn: Txn,
  to: TxnState,
  patch: TxnPatch,
  opts: ChangeOptions,
): Promise<Txn> {
  // The change and its outbox event in one statement (one round trip).
  const change = transitionCtes(txn, to, patch, opts)
  const { rows } = await q.query(sql`WITH ${change.ctes} SELECT changed.*, ${change.enqueued} FROM changed`)
  if (!rows[0]) throw new StaleTransition(`transaction ${txn.id} is no longer ${txn.state}`)
  const [row, enqueued] = takeEnqueued(rows[0])
  await notifyChange(q, row.id, enqueued)
  return txnFromRow(row)
}

/**
 * A transition as WITH items: `changed`, the updated row (none when the row is no longer in
 * `txn.state`), then its outbox event and deliveries. With `onlyIf`, a condition on earlier WITH
 * items, nothing changes unless it holds. The caller announces the change with
 * notifyChange once the row came back.
 */
function transitionCtes(
  txn: Pick<Txn, 'id' | 'kind' | 'state'>,
  to: TxnState,
  patch: TxnPatch,
  opts: ChangeOptions,
  onlyIf?: Sql,
): { ctes: Sql; enqueued: Sql } {
  if (!canTransition(opts.kinds.transitions, txn.kind, txn.state, to)) {
    throw new InvariantError(`transition ${txn.kind} ${txn.state} -> ${to} is not allowed`)
  }
  const now = sql.param(opts.now)
  const sets = [
    sql`state = ${to}`,
    sql`updated_at = ${now}`,
    sql`src_updated_at = ${now}`,
    sql`dest_updated_at = ${now}`,
  ]
  for (const [column, value] of patchColumns(patch)) sets.push(sql`${sql.ident(column)} = ${value}`)
  if (!('nextCheckAtMs' in patch) && FINAL_STATES.has(to)) sets.push(sql`next_check_at = NULL`)
  const gate = onlyIf ? sql` AND ${onlyIf}` : sql.empty
  const outbox = outboxCtes(CHANGED, to, opts.outbox)
  return {
    ctes: sql`${CHANGED} AS (UPDATE transactions SET ${sql.join(sets, sql`, `)} WHERE id = ${txn.id} AND state = ${txn.state}${gate} RETURNING *),
     ${outbox.ctes}`,
    enqueued: outbox.enqueued,
  }
}

/**
 * Confirm a quote in one statement (one round trip, no database transaction around it): lock the
 * row while it is still `quoted`, unexpired, with the amounts this process quoted and its hold in
 * place; settle the hold and write the entry; make the transition and its outbox event. Every write
 * is gated on that lock, so when any condition fails nothing is written and undefined comes back
 * (the caller then takes the ordinary path, which tells why). The entry's own check and a check
 * that the transition went with the entry undo the whole statement if either fails.
 */
async function settleQuoted(
  q: Queryable,
  txn: Txn,
  settlement: { entry: EntryInput; to: TxnState; patch: TxnPatch },
  opts: ChangeOptions,
): Promise<Txn | undefined> {
  const gate = sql`quoted_txn AS (
       SELECT t.id FROM transactions t
        WHERE t.id = ${txn.id} AND t.account_id = ${txn.accountId} AND t.state = 'quoted'
          AND t.expires_at > ${opts.now} AND t.src_amount = ${txn.srcAmountMinor}
          AND t.src_fee = ${txn.srcFeeMinor} AND t.src_network_fee = ${txn.srcNetworkFeeMinor}
          AND t.dest_amount = ${txn.destAmountMinor}
          AND EXISTS (SELECT 1 FROM holds h WHERE h.txn_id = t.id AND h.status = 'pending')
        FOR UPDATE OF t)`
  const locked = sql`EXISTS (SELECT 1 FROM quoted_txn)`
  const entry = entryCtes({ ...settlement.entry, settleHolds: true }, locked)
  assert(entry, 'a settlement writes an entry')
  const change = transitionCtes(txn, settlement.to, settlement.patch, opts, locked)
  const together = sql`ledger_require((SELECT count(*) FROM changed) = (SELECT count(*) FROM quoted_txn),
       ${`confirm of ${txn.kind} changed the transaction and its entry together`})`
  // One row whatever happened, so that both checks are always evaluated.
  const { rows } = await q.query<{ id: string | null; checked?: boolean }>(
    sql`WITH ${gate}, ${entry.ctes}, ${change.ctes}
     SELECT ${entry.check} AND ${together} AS checked, changed.*, ${change.enqueued}
       FROM (SELECT 1) AS one LEFT JOIN changed ON true`,
  )
  if (!rows[0]?.id) return undefined
  const [row, enqueued] = takeEnqueued(rows[0])
  const txnRow = txnFromRow(row)
  await notifyChange(q, txnRow.id, enqueued)
  return txnRow
}

/**
 * How `scheduleCheck` treats the check already set:
 * - 'earliest': keep whichever is sooner (an earlier check already planned still happens);
 * - 'exact': replace it (`null` clears it: nothing left to look at);
 * - 'latest': not earlier than `atMs`, to hold the worker off a row for a while (another
 *   statement is about to move it); an unset check becomes `atMs` (GREATEST skips NULL).
 */
export type CheckMode = 'earliest' | 'exact' | 'latest'

/** The value `next_check_at` takes in each mode, `atMs` being the time asked for. */
function checkSet(mode: CheckMode, atMs: number | bigint | null): Sql {
  const at = sql.param(atMs)
  if (mode === 'earliest') return sql`LEAST(COALESCE(next_check_at, ${at}), ${at})`
  if (mode === 'latest') return sql`GREATEST(next_check_at, ${at})`
  return sql`${at}`
}

/** The rows `scheduleCheck` sets the check of. */
export type CheckTarget =
  /** One transaction, by id. */
  | TxnId
  /** The transactions of `kind` a rail knows by `railRef`. */
  | { kind: TxnKind; railRef: string }
  /**
   * The payout of `kind` a rail knows by `payoutRef` that a partner's notice may be about: still
   * sent, or, for a kind whose completed payouts may come back (`returnable`: a bank payout), a
   * completed one with no return recorded (the notice may be its return).
   */
  | { kind: TxnKind; payoutRef: string; returnable: boolean }
  /**
   * Every transaction waiting for on-chain confirmations: each (kind, state) the kind registry
   * declares as such (`confirmationWaits`).
   */
  | { awaiting: ReadonlyArray<{ kind: TxnKind; state: TxnState }> }

function targetWhere(target: CheckTarget): Sql {
  if (typeof target === 'string') return sql`id = ${target}`
  if ('awaiting' in target) {
    assert(target.awaiting.length > 0, 'some kind waits for confirmations')
    return sql.join(
      target.awaiting.map(({ kind, state }) => sql`(kind = ${kind} AND state = ${state})`),
      sql` OR `,
    )
  }
  if ('railRef' in target) return sql`kind = ${target.kind} AND rail_ref = ${target.railRef}`
  if (!target.returnable)
    return sql`rail_ref = ${target.payoutRef} AND kind = ${target.kind} AND state = 'destsent'`
  return sql`rail_ref = ${target.payoutRef} AND kind = ${target.kind}
        AND (state = 'destsent' OR (state = 'completed' AND dest_details->>'returnTxnId' IS NULL))`
}

/**
 * The one way to set a transaction's `next_check_at` outside a transition's patch. `only.state`
 * skips a row that has moved on since it was read; `only.scheduled` skips a row with no check set
 * (it is waiting for nothing). Returns whether any row was changed.
 */
export async function scheduleCheck(
  q: Queryable,
  target: CheckTarget,
  atMs: number | bigint | null,
  mode: CheckMode,
  only: { state?: TxnState; scheduled?: boolean } = {},
): Promise<boolean> {
  assert(atMs !== null || mode === 'exact', 'only an exact check can be cleared')
  let where = targetWhere(target)
  if (only.state !== undefined) where = sql`(${where}) AND state = ${only.state}`
  if (only.scheduled) where = sql`(${where}) AND next_check_at IS NOT NULL`
  const { rowCount } = await q.query(
    sql`UPDATE transactions SET next_check_at = ${checkSet(mode, atMs)} WHERE ${where}`,
  )
  return Boolean(rowCount)
}

/**
 * Claim up to `max` transactions whose check is due at `now`, skipping rows another worker holds,
 * and put their next check `leaseMs` later so that no other worker takes them meanwhile. Returns
 * their ids.
 */
export async function claimDue(q: Queryable, now: number, leaseMs: number, max: number): Promise<TxnId[]> {
  const { rows } = await q.query<{ id: TxnId }>(
    sql`UPDATE transactions SET next_check_at = ${now + leaseMs}
      WHERE id IN (SELECT id FROM transactions WHERE next_check_at <= ${now}
                    ORDER BY next_check_at LIMIT ${max} FOR UPDATE SKIP LOCKED)
      RETURNING id`,
  )
  return rows.map((r) => r.id)
}

/** Record the reference the rail knows a transaction by (an address, a payment hash). */
export async function setRailRef(q: Queryable, id: TxnId, railRef: string): Promise<void> {
  await q.query(sql`UPDATE transactions SET rail_ref = ${railRef} WHERE id = ${id}`)
}

/** Charge `fee` as the source fee of a transaction (a receive's fee on what arrived). */
export async function setSrcFee(q: Queryable, id: TxnId, fee: bigint): Promise<void> {
  await q.query(sql`UPDATE transactions SET src_fee = ${fee} WHERE id = ${id}`)
}

/**
 * Note the confirmations a receive or deposit still waiting in srccreated has, and look at it again
 * by `checkAtMs` (in the same statement; an earlier check already planned still happens).
 */
export async function recordConfirmations(
  q: Queryable,
  id: TxnId,
  confirmations: number,
  checkAtMs: number,
): Promise<void> {
  await q.query(
    sql`UPDATE transactions SET src_details = jsonb_set(src_details, '{confirmations}', ${JSON.stringify(confirmations)}::jsonb),
            next_check_at = ${checkSet('earliest', checkAtMs)}
      WHERE id = ${id} AND state = 'srccreated'`,
  )
}

/** Note the fee rate an on-chain send still in srccreated is about to be broadcast at. */
export async function recordSendRate(q: Queryable, id: TxnId, satPerVb: number): Promise<void> {
  await q.query(
    sql`UPDATE transactions SET dest_details = jsonb_set(dest_details, '{feeRateSentSatPerVb}', ${JSON.stringify(satPerVb)}::jsonb)
      WHERE id = ${id} AND state = 'srccreated'`,
  )
}

/**
 * Replace a transaction's destination details without a transition (an on-chain send followed on
 * to the transaction that replaced its own); with `checkAtMs`, its next check too, in the same
 * statement.
 */
export async function setDestDetails(
  q: Queryable,
  id: TxnId,
  details: Record<string, unknown>,
  checkAtMs?: number,
): Promise<void> {
  const check = checkAtMs !== undefined ? sql`, next_check_at = ${checkSet('exact', checkAtMs)}` : sql.empty
  await q.query(
    sql`UPDATE transactions SET dest_details = ${JSON.stringify(details)}${check} WHERE id = ${id}`,
  )
}

/**
 * Settle the return of a payout just inserted (insertTxn leaves these unset): it points at the
 * payout by `rail_ref`, says why as its `msg` and is settled for both amounts. Returns the row.
 */
export async function settleReturn(
  q: Queryable,
  id: TxnId,
  settled: { payoutId: string; reason: string; src: bigint; dest: bigint },
): Promise<Txn | undefined> {
  const { rows } = await q.query(
    sql`UPDATE transactions SET rail_ref = ${settled.payoutId}, msg = ${settled.reason},
            src_settled = ${settled.src}, dest_settled = ${settled.dest}
      WHERE id = ${id} RETURNING *`,
  )
  return rows[0] ? txnFromRow(rows[0]) : undefined
}

/** Mark a completed payout returned: its details name the return and why, its message says so. */
export async function markPayoutReturned(
  q: Queryable,
  payout: Pick<Txn, 'id' | 'destDetails'>,
  returned: { returnTxnId: string; reason: string; at: number },
): Promise<void> {
  const details = JSON.stringify({
    ...payout.destDetails,
    returnTxnId: returned.returnTxnId,
    returnReason: returned.reason,
  })
  await q.query(
    sql`UPDATE transactions SET dest_details = ${details}, msg = ${'payout_returned'}, updated_at = ${returned.at}
      WHERE id = ${payout.id}`,
  )
}
