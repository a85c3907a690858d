/**
 * Reads of the events and their webhook deliveries for other modules (the console), named by what
 * they answer; the statements that write them are in outbox.ts and delivery-records.ts.
 */
import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'

/** Whether webhook delivery `deliveryId` carries an event of transaction `txnId`. */
export async function isDeliveryOfTxn(q: Queryable, deliveryId: string, txnId: string): Promise<boolean> {
  const { rows } = await q.query(
    sql`SELECT 1 FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         WHERE d.id = ${deliveryId} AND e.txn_id = ${txnId}`,
  )
  return rows.length > 0
}

/** A transaction's events in order (the console's timeline); at most `limit`. */
export async function eventsOfTxn(
  q: Queryable,
  txnId: string,
  limit: number,
): Promise<Array<{ txn_state: string; msg: string; created_at: string }>> {
  const { rows } = await q.query<{ txn_state: string; msg: string; created_at: string }>(
    sql`SELECT txn_state, msg, created_at FROM events WHERE txn_id = ${txnId} ORDER BY id LIMIT ${sql.int(limit)}`,
  )
  return rows
}
