import type { Queryable } from '../db/db.js'
import { FINAL_STATES, type TxnState } from '../transactions/state-machine.js'

/** The NOTIFY channel that carries a transaction id after each committed state change. */
export const TXN_CHANNEL = 'svcpay_txn'

export interface OutboxTxn {
  id: string
  account_id: string
  state: TxnState
  msg: string
  ext_ref_id: string | null
  updated_at: bigint | number
}

/**
 * Record a state change in the outbox, inside the caller's database transaction: the event row, a
 * delivery for the account's live webhook (variant b only for final states), and a NOTIFY that
 * PostgreSQL sends only if the transaction commits.
 */
export async function recordEvent(q: Queryable, txn: OutboxTxn, variant: 'a' | 'b'): Promise<void> {
  const now = Date.now()
  const { rows } = await q.query<{ id: bigint }>(
    `INSERT INTO events (txn_id, account_id, txn_state, msg, ext_ref_id, updated_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [txn.id, txn.account_id, txn.state, txn.msg, txn.ext_ref_id ?? '', txn.updated_at, now],
  )
  if (variant === 'a' || FINAL_STATES.has(txn.state)) {
    await q.query(
      `INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at, created_at, updated_at)
       SELECT $1, id, 'pending', $3, $3, $3 FROM webhooks WHERE account_id = $2 AND deleted_at IS NULL`,
      [rows[0]!.id, txn.account_id, now],
    )
  }
  await q.query('SELECT pg_notify($1, $2)', [TXN_CHANNEL, txn.id])
}
