/**
 * The states a transaction can be in, and which of them are final. They stand in src/shared
 * because the events, the status stream and the rails' attempt log name them as well as the engine;
 * each kind's table of allowed transitions is in its flow's declaration (`kinds.ts` in the flow's
 * folder), which the repository enforces (`canTransition`, src/transactions/repository.ts).
 */
export type TxnState =
  | 'quoted'
  | 'srcintent'
  | 'srccreated'
  /**
   * A payout or on-chain send above its approval threshold, confirmed with its funds held, waiting
   * for a second operator (src/approvals/). Approval moves it on to srccreated as a confirm would;
   * rejection or expiry ends it rejected with the hold released (contract section 10).
   */
  | 'processing'
  | 'destsent'
  | 'completed'
  | 'expired'
  | 'failed'
  | 'usercanceled'
  | 'rejected'
  | 'error'

/** Every state, in the order of the lifecycle (the list filter's `txnStatuses` values). */
export const TXN_STATES: readonly TxnState[] = [
  'quoted',
  'srcintent',
  'srccreated',
  'processing',
  'destsent',
  'completed',
  'expired',
  'failed',
  'usercanceled',
  'rejected',
  'error',
]

export const FINAL_STATES: ReadonlySet<TxnState> = new Set([
  'completed',
  'expired',
  'failed',
  'usercanceled',
  'rejected',
  'error',
])
