import type { Queryable } from '../db/db.js'
import type { TxnKind } from '../transactions/state-machine.js'
import type { Txn } from '../transactions/txn.js'
import type { ReviewReason } from './policy.js'

/**
 * Another module's reason to hold a confirmed send for an operator, beside the four-eyes
 * thresholds: a hot-wallet cap, a screening hit, a provider that could not be asked. The approval
 * gate (gate.ts) asks every check that concerns the kind, inside the confirm's database
 * transaction with the row locked, and holds the send in `processing` with all the reasons given;
 * a second operator then approves (it goes on) or rejects it (its hold is released), and one left
 * undecided expires, exactly as a send above a threshold.
 *
 * A check may only concern kinds that can wait in `processing`; the gate refuses at start a check
 * that concerns any other.
 */
export interface ReviewCheck {
  name: string
  concerns(kind: TxnKind): boolean
  /** Why this send must wait for an operator; empty when it need not. */
  reasons(q: Queryable, txn: Txn, at: number): Promise<ReviewReason[]>
}
