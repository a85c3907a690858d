import type { Queryable } from '../db/db.js'
import type { AccountId, TxnId } from '../shared/ids.js'
import { sql, type Sql } from '../db/sql.js'
import type { TxnState } from './state-machine.js'
import { txnFromRow, type Txn } from './txn.js'

/** Transactions read by one statement at most; a larger batch is split. */
const BATCH_READS_MAX = 200

interface Waiting {
  resolve(row: Txn | undefined): void
  reject(err: unknown): void
}

export interface TxnReader {
  /** The transaction `id` of `accountId`, read from the database; undefined when it has no such one. */
  get(id: TxnId, accountId: AccountId): Promise<Txn | undefined>
}

/**
 * Reads of single transactions, coalesced: the reads asked for in one turn of the event loop go to
 * the database as one statement. Under load each round trip to PostgreSQL costs the process more
 * than the rest of a read, and many requests arrive together; a lone read still leaves at once
 * (after the current turn, without a timer). Nothing is cached: every read sees what was committed
 * before it was asked for, and the account is matched by the database as in a single read.
 */
export function createTxnReader(db: Pick<Queryable, 'query'>): TxnReader {
  let queued = new Map<string, { id: string; accountId: string; waiting: Waiting[] }>()

  const flush = () => {
    const batch = [...queued.values()]
    queued = new Map()
    for (let i = 0; i < batch.length; i += BATCH_READS_MAX) void read(batch.slice(i, i + BATCH_READS_MAX))
  }

  async function read(batch: Array<{ id: string; accountId: string; waiting: Waiting[] }>): Promise<void> {
    try {
      const { rows } =
        batch.length === 1
          ? await db.query(
              sql`SELECT * FROM transactions WHERE id = ${batch[0]!.id} AND account_id = ${batch[0]!.accountId}`,
            )
          : await db.query(
              sql`SELECT t.* FROM unnest(${batch.map((b) => b.id)}::text[], ${batch.map((b) => b.accountId)}::text[]) AS r(id, account_id)
                 JOIN transactions t ON t.id = r.id AND t.account_id = r.account_id`,
            )
      const found = new Map(rows.map(txnFromRow).map((row) => [keyOf(row.id, row.accountId), row]))
      for (const b of batch) {
        const row = found.get(keyOf(b.id, b.accountId))
        for (const w of b.waiting) w.resolve(row)
      }
    } catch (err) {
      for (const b of batch) for (const w of b.waiting) w.reject(err)
    }
  }

  return {
    get(id, accountId) {
      return new Promise((resolve, reject) => {
        if (queued.size === 0) setImmediate(flush)
        const key = keyOf(id, accountId)
        const same = queued.get(key)
        if (same) same.waiting.push({ resolve, reject })
        else queued.set(key, { id, accountId, waiting: [{ resolve, reject }] })
      })
    },
  }
}

const keyOf = (id: string, accountId: string) => `${id}\u0000${accountId}`

/**
 * The transaction of `kind` a rail knows by `railRef` (a Lightning receive by its payment hash, the
 * deposit a second payment to it made). With `lock`, its row is locked for the caller's transaction.
 */
export async function txnByRailRef(
  q: Queryable,
  kind: string,
  railRef: string,
  opts: { lock?: boolean } = {},
): Promise<Txn | undefined> {
  const lock = opts.lock ? sql` FOR UPDATE` : sql.empty
  const { rows } = await q.query(
    sql`SELECT * FROM transactions WHERE rail_ref = ${railRef} AND kind = ${kind}${lock}`,
  )
  return rows[0] ? txnFromRow(rows[0]) : undefined
}

/**
 * The state of another transaction of `kind` with `railRef` in one of `states`, if there is one:
 * the Lightning send asks whether a payment hash is already being paid, or was paid, by another.
 */
export async function otherStateByRailRef(
  q: Queryable,
  input: { kind: string; railRef: string; exceptId: string; states: readonly TxnState[] },
): Promise<TxnState | undefined> {
  const { rows } = await q.query<{ state: TxnState }>(
    sql`SELECT state FROM transactions
        WHERE kind = ${input.kind} AND rail_ref = ${input.railRef} AND id <> ${input.exceptId}
          AND state = ANY(${[...input.states]}::text[])
        LIMIT 1`,
  )
  return rows[0]?.state
}

/** Whether `accountId` has the transaction `id` (a stream is opened only on one of its own). */
export async function hasTxn(q: Queryable, id: TxnId, accountId: AccountId): Promise<boolean> {
  const { rows } = await q.query(
    sql`SELECT id FROM transactions WHERE id = ${id} AND account_id = ${accountId}`,
  )
  return rows.length > 0
}

/** The account of each of `ids` that exists, by transaction id. */
export async function accountIdsOf(q: Queryable, ids: readonly TxnId[]): Promise<Map<TxnId, AccountId>> {
  if (ids.length === 0) return new Map()
  const { rows } = await q.query<{ id: TxnId; account_id: AccountId }>(
    sql`SELECT id, account_id FROM transactions WHERE id = ANY(${[...ids]}::text[])`,
  )
  return new Map(rows.map((r) => [r.id, r.account_id]))
}

/**
 * The ids of the accounts that have a transaction with this extRefId, as a subquery for a statement
 * of another module (the console's account search), so that the search stays one statement.
 */
export function accountIdsWithExtRef(extRefId: unknown): Sql {
  return sql`SELECT account_id FROM transactions WHERE ext_ref_id = ${extRefId}`
}

/**
 * Whether the transaction `idColumn` names still counts against a limit, as a condition for a
 * statement of another module (the limits' window sums, src/limits/repository.ts), so that the sum
 * stays one statement: it has left `quoted`, did not end without moving its money (expired,
 * cancelled, failed, rejected) and was not returned (a payout whose money came back). So a
 * transaction gives its amount back in the same database transaction as the change of its state.
 * `held`: whether one waiting in `processing` for an operator counts (an account's limits: yes; a
 * hot wallet's hourly cap: no, nothing left the wallet yet).
 */
export function stillCounts(idColumn: Sql, opts: { held: boolean }): Sql {
  const gone = [
    'quoted',
    'expired',
    'usercanceled',
    'failed',
    'rejected',
    ...(opts.held ? [] : ['processing']),
  ]
  return sql`EXISTS (SELECT 1 FROM transactions t WHERE t.id = ${idColumn} AND t.state <> ALL(${gone}::text[]) AND t.dest_details ->> 'returnTxnId' IS NULL)`
}

/**
 * Transactions of `kind` in `state`, oldest first, at most `limit`: recovery after a restore
 * (src/reconcile/recovery.ts) asks the rail about the sends the restored database has not handed it.
 */
export async function txnsInState(
  q: Queryable,
  kind: string,
  state: TxnState,
  limit: number,
): Promise<Txn[]> {
  const { rows } = await q.query(
    sql`SELECT * FROM transactions WHERE kind = ${kind} AND state = ${state}
        ORDER BY created_at, id LIMIT ${limit}`,
  )
  return rows.map(txnFromRow)
}
