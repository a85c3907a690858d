/**
 * The transaction state machine's states. Each kind's table of allowed transitions is part of its
 * declaration (src/transactions/kinds.ts); any transition not in it is refused.
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

/**
 * A kind of transaction. Open on purpose: each flow declares its kinds (src/transactions/kinds.ts
 * defines the declaration, src/kinds.ts lists them), so that a new kind touches nothing here; the
 * registry refuses a kind that is not declared.
 */
export type TxnKind = string

export const FINAL_STATES: ReadonlySet<TxnState> = new Set([
  'completed',
  'expired',
  'failed',
  'usercanceled',
  'rejected',
  'error',
])

/** Every quote can be confirmed, cancelled, expire, or fail at confirm for want of funds. */
export const QUOTE_EXITS = ['expired', 'usercanceled', 'failed'] as const
/** A send or payout over its approval threshold waits at confirm for a second operator. */
export const AWAITS_APPROVAL = { processing: ['srccreated', 'rejected'] } as const
