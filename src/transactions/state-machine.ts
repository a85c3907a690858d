/**
 * The transaction state machine: one table of allowed transitions per kind of transaction,
 * shared by every flow. Any transition not in the table is refused.
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

export type TxnKind =
  | 'swap'
  | 'ln_receive'
  | 'onchain_receive'
  | 'ln_send'
  | 'onchain_send'
  | 'tron_payout'
  | 'vnd_payout'
  /** A deposit to an account's static address, created by the watcher when the money is seen. */
  | 'deposit'
  /**
   * Money of a completed bank payout that the beneficiary's bank sent back, returned to the wallet
   * it came from; created completed, once per payout (src/payouts/returns.ts).
   */
  | 'payout_return'
  /** Dong paid in by bank transfer against a VietQR code (src/payins/receive.ts). */
  | 'vnd_receive'

export const FINAL_STATES: ReadonlySet<TxnState> = new Set([
  'completed',
  'expired',
  'failed',
  'usercanceled',
  'rejected',
  'error',
])

type Table = Partial<Record<TxnState, readonly TxnState[]>>

// Every quote can be confirmed, cancelled, expire, or fail at confirm for want of funds.
const QUOTE_EXITS = ['expired', 'usercanceled', 'failed'] as const
// A send or payout over its approval threshold waits at confirm for a second operator.
const AWAITS_APPROVAL = { processing: ['srccreated', 'rejected'] } as const

export const TRANSITIONS: Record<TxnKind, Table> = {
  swap: { quoted: ['completed', ...QUOTE_EXITS] },
  ln_receive: { quoted: ['srccreated', ...QUOTE_EXITS], srccreated: ['completed', 'expired'] },
  onchain_receive: {
    quoted: ['srcintent', ...QUOTE_EXITS],
    srcintent: ['srccreated', 'expired'],
    srccreated: ['completed'],
  },
  deposit: { srccreated: ['completed'] },
  ln_send: {
    quoted: ['srccreated', 'completed', ...QUOTE_EXITS],
    srccreated: ['completed', 'failed', 'error'],
  },
  onchain_send: {
    quoted: ['srccreated', 'processing', ...QUOTE_EXITS],
    ...AWAITS_APPROVAL,
    srccreated: ['destsent', 'failed', 'error'],
    // failed: the transaction was refused on rebroadcast or conflicted; the hold, still open, is released.
    destsent: ['completed', 'failed', 'error'],
  },
  tron_payout: {
    quoted: ['srccreated', 'processing', ...QUOTE_EXITS],
    ...AWAITS_APPROVAL,
    srccreated: ['destsent', 'failed', 'rejected', 'error'],
    destsent: ['completed', 'failed', 'rejected', 'error'],
  },
  vnd_payout: {
    quoted: ['srccreated', 'processing', ...QUOTE_EXITS],
    ...AWAITS_APPROVAL,
    srccreated: ['destsent', 'failed', 'rejected', 'error'],
    destsent: ['completed', 'failed', 'rejected', 'error'],
  },
  // Created completed: it has no transitions.
  payout_return: {},
  vnd_receive: { quoted: ['srccreated', ...QUOTE_EXITS], srccreated: ['completed', 'expired'] },
}

export function canTransition(kind: TxnKind, from: TxnState, to: TxnState): boolean {
  return TRANSITIONS[kind][from]?.includes(to) ?? false
}

/** The contract's reqStatus of each side: '0' pending, '1' in progress, '2' completed, '3' failed. */
export function reqStatuses(state: TxnState): { src: string; dest: string } {
  switch (state) {
    case 'quoted':
    case 'srcintent':
      return { src: '0', dest: '0' }
    case 'srccreated':
    case 'processing':
      return { src: '1', dest: '0' }
    case 'destsent':
      return { src: '2', dest: '1' }
    case 'completed':
      return { src: '2', dest: '2' }
    default:
      return { src: '3', dest: '3' }
  }
}
