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
