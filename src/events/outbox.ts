import type { Queryable } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'
import { FINAL_STATES, type TxnState } from '../shared/txn-states.js'
import { DELIVERY_CHANNEL, TXN_CHANNEL } from './channels.js'

// The names of the WITH items the outbox defines. They are written by this module alone: a caller
// reads them through what outboxCtes returns, never by spelling them.
const EVENT = sql.ident('event')
const DELIVERY = sql.ident('delivery')

export interface OutboxTxn {
  id: string
  account_id: string
  state: TxnState
  msg: string
  ext_ref_id: string | null
  updated_at: bigint | number
}

/** The outbox's part of a statement: its WITH items, and what the statement's select list reads of them. */
export interface OutboxWrites {
  /** WITH items (no leading WITH, no trailing comma) writing the event and its deliveries. */
  ctes: Sql
  /** A select-list item, `enqueued`: how many deliveries the statement enqueued. */
  enqueued: Sql
  /** The names of the WITH items `ctes` defines, for a caller that must read them. */
  names: { event: Sql; delivery: Sql }
}

/**
 * The outbox writes of a state change to `state`, to be put into the statement that makes the
 * change (one round trip for both): WITH items that write the event and its deliveries for the row
 * returned by the caller's WITH item `changed` (its name, as sql.ident; rows with the column names
 * of `transactions`). The caller then announces the change with `notifyChange`, which the database
 * layer sends once the transaction has committed.
 */
export function outboxCtes(changed: Sql, state: TxnState, config: OutboxConfig): OutboxWrites {
  const [stamp, deliver] = outboxParams(state, config)
  const now = sql.param(stamp)
  const ctes = sql`${EVENT} AS (
       INSERT INTO events (txn_id, account_id, txn_state, msg, ext_ref_id, updated_at, created_at)
       SELECT id, account_id, state, msg, COALESCE(ext_ref_id, ''), updated_at, ${now} FROM ${changed}
       RETURNING id, account_id),
     ${DELIVERY} AS (
       INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at, created_at, updated_at)
       SELECT ${EVENT}.id, w.id, 'pending', ${now}, ${now}, ${now}
         FROM ${EVENT} JOIN webhooks w ON w.account_id = ${EVENT}.account_id AND w.deleted_at IS NULL
        WHERE ${deliver}::boolean
       RETURNING id)`
  return {
    ctes,
    enqueued: sql`(SELECT count(*) FROM ${DELIVERY})::int AS enqueued`,
    names: { event: EVENT, delivery: DELIVERY },
  }
}

/**
 * Announces a committed change of a transaction to every listener (status streams), and when its
 * statement enqueued webhook deliveries, wakes the delivery workers.
 */
export async function notifyChange(q: Queryable, txnId: string, enqueued = 0): Promise<void> {
  await q.notify(TXN_CHANNEL, txnId)
  if (enqueued > 0) await q.notify(DELIVERY_CHANNEL)
}

/** A row read back with OutboxWrites.enqueued, without that column, and the count it held. */
export function takeEnqueued<T extends object>(row: T & { enqueued?: number }): [T, number] {
  const enqueued = row.enqueued ?? 0
  delete row.enqueued
  return [row, enqueued]
}

/**
 * How the outbox writes: the webhook variant (b delivers final states only) and the clock its event
 * and delivery rows are stamped with.
 */
export interface OutboxConfig {
  webhookVariant: 'a' | 'b'
  now: () => number
}

/** The time an outbox event is stamped with, and whether it gets deliveries, for a change to `state`. */
function outboxParams(state: TxnState, config: OutboxConfig): [number, boolean] {
  return [config.now(), config.webhookVariant === 'a' || FINAL_STATES.has(state)]
}

/**
 * Record a state change in the outbox, inside the caller's database transaction: the event row, a
 * delivery for the account's live webhook (variant b only for final states), and a NOTIFY that
 * PostgreSQL sends only if the transaction commits.
 */
export async function recordEvent(q: Queryable, txn: OutboxTxn, config: OutboxConfig): Promise<void> {
  // One statement: the row as outboxCtes reads a changed transaction, the event and its deliveries
  // written by outboxCtes itself; then the NOTIFY, which leaves after the commit.
  const recorded = sql.ident('recorded')
  const row = sql`SELECT ${txn.id}::text AS id, ${txn.account_id}::text AS account_id, ${txn.state}::text AS state,
       ${txn.msg}::text AS msg, ${txn.ext_ref_id}::text AS ext_ref_id, ${txn.updated_at}::int8 AS updated_at`
  const outbox = outboxCtes(recorded, txn.state, config)
  const { rows } = await q.query<{ enqueued: number }>(
    sql`WITH ${recorded} AS (${row}), ${outbox.ctes} SELECT ${outbox.enqueued}`,
  )
  await notifyChange(q, txn.id, rows[0]!.enqueued)
}
