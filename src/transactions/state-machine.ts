import { FINAL_STATES, TXN_STATES, type TxnState } from '../shared/txn-states.js'

/**
 * The transaction state machine. The states themselves stand in src/shared/txn-states.ts (the
 * events, the status stream and the attempt log name them too) and are re-exported here for the
 * engine's files. Each kind's table of allowed transitions is part of its declaration (`kinds.ts`
 * in its flow's folder); the repository refuses any transition not in it (`canTransition`).
 */
export { FINAL_STATES, TXN_STATES, type TxnState }

/**
 * A kind of transaction. Open on purpose: each flow declares its kinds (src/transactions/kinds.ts
 * defines the declaration, src/wiring/kinds.ts lists them), so that a new kind touches nothing here; the
 * registry refuses a kind that is not declared.
 */
export type TxnKind = string

/** Every quote can be confirmed, cancelled, expire, or fail at confirm for want of funds. */
export const QUOTE_EXITS = ['expired', 'usercanceled', 'failed'] as const
/** A send or payout over its approval threshold waits at confirm for a second operator. */
export const AWAITS_APPROVAL = { processing: ['srccreated', 'rejected'] } as const
