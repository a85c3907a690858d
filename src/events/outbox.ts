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
  // One statement, one round trip: the event, its deliveries and the NOTIFY. $1 and $2 stay the
  // channel and the transaction id, which is how mirrorTxnNotifies (notifier.ts) recognises it.
  await q.query(
    `WITH event AS (
       INSERT INTO events (txn_id, account_id, txn_state, msg, ext_ref_id, updated_at, created_at)
       VALUES ($2, $3, $4, $5, $6, $7, $8) RETURNING id),
     delivery AS (
       INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at, created_at, updated_at)
       SELECT event.id, w.id, 'pending', $8, $8, $8 FROM event, webhooks w
        WHERE $9::boolean AND w.account_id = $3 AND w.deleted_at IS NULL)
     SELECT pg_notify($1, $2)`,
    [
      TXN_CHANNEL,
      txn.id,
      txn.account_id,
      txn.state,
      txn.msg,
      txn.ext_ref_id ?? '',
      txn.updated_at,
      now,
      variant === 'a' || FINAL_STATES.has(txn.state),
    ],
  )
}
