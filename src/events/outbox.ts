import type { Queryable } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'
import { FINAL_STATES, type TxnState } from '../transactions/state-machine.js'
import { DELIVERY_CHANNEL, TXN_CHANNEL } from './channels.js'

/** A select-list item for the statement holding outboxCtes: how many deliveries it enqueued. */
export const ENQUEUED_COLUMN = sql`(SELECT count(*) FROM delivery)::int AS enqueued`

export interface OutboxTxn {
  id: string
  account_id: string
  state: TxnState
  msg: string
  ext_ref_id: string | null
  updated_at: bigint | number
}

/**
 * The outbox writes of a state change to `state`, to be put into the statement that makes the
 * change (one round trip for both): WITH items that write the event and its deliveries for the row
 * returned by the WITH item named `changed` (rows with the column names of `transactions`). The
 * caller then announces the change with `notifyChange`, which the database layer sends once the
 * transaction has committed.
 */
export function outboxCtes(state: TxnState, config: OutboxConfig): Sql {
  const [stamp, deliver] = outboxParams(state, config)
  const now = sql.param(stamp)
  return sql`event AS (
       INSERT INTO events (txn_id, account_id, txn_state, msg, ext_ref_id, updated_at, created_at)
       SELECT id, account_id, state, msg, COALESCE(ext_ref_id, ''), updated_at, ${now} FROM changed
       RETURNING id, account_id),
     delivery AS (
       INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at, created_at, updated_at)
       SELECT event.id, w.id, 'pending', ${now}, ${now}, ${now}
         FROM event JOIN webhooks w ON w.account_id = event.account_id AND w.deleted_at IS NULL
        WHERE ${deliver}::boolean
       RETURNING id)`
}

/**
 * Announces a committed change of a transaction to every listener (status streams), and when its
 * statement enqueued webhook deliveries, wakes the delivery workers.
 */
export async function notifyChange(q: Queryable, txnId: string, enqueued = 0): Promise<void> {
  await q.notify(TXN_CHANNEL, txnId)
  if (enqueued > 0) await q.notify(DELIVERY_CHANNEL)
}

/** A row read back with ENQUEUED_COLUMN, without that column, and the count it held. */
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
  const [now, withDeliveries] = outboxParams(txn.state, config)
  // One statement: the event and its deliveries; then the NOTIFY, which leaves after the commit.
  const written = await q.query(
    `WITH event AS (
       INSERT INTO events (txn_id, account_id, txn_state, msg, ext_ref_id, updated_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id)
     INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at, created_at, updated_at)
     SELECT event.id, w.id, 'pending', $7, $7, $7 FROM event, webhooks w
      WHERE $8::boolean AND w.account_id = $2 AND w.deleted_at IS NULL`,
    [txn.id, txn.account_id, txn.state, txn.msg, txn.ext_ref_id ?? '', txn.updated_at, now, withDeliveries],
  )
  await notifyChange(q, txn.id, written.rowCount)
}
