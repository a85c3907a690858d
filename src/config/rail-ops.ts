/**
 * The rails by name and each one's operational settings (when a transaction counts as stuck, how
 * its retries back off). They are settings, read by src/config, so they stand below the rails.
 */

/** The kinds of rail a transaction can move on. */
export type RailKind = 'lightning' | 'onchain' | 'tron' | 'bank' | 'ethereum'

export const RAIL_KINDS: readonly RailKind[] = ['lightning', 'onchain', 'tron', 'bank', 'ethereum']

/** Per rail: when a transaction counts as stuck, and how its retries back off. */
export interface RailOpsSettings {
  /** A non-final transaction this rail has not brought to an outcome within this long is stuck. */
  stuckAfterMs: number
  /** The first retry's nominal wait; each further failure in a row doubles it. */
  retryBaseMs: number
  /** The longest wait between two retries. */
  retryMaxMs: number
}

export type RailOpsConfig = Record<RailKind, RailOpsSettings>

/**
 * Defaults: a Lightning payment normally resolves in seconds, and one still in flight after an hour
 * is held up somewhere on its route; Bitcoin confirmations can take hours when fees jump; a TRON
 * transfer is final within a minute or two; a bank partner may hold a payout for review; an
 * Ethereum transfer is final (the `finalized` tag) about 13 minutes after it is mined, longer when
 * its fee has to be raised.
 */
export const RAIL_OPS_DEFAULTS: RailOpsConfig = {
  lightning: { stuckAfterMs: 60 * 60_000, retryBaseMs: 15_000, retryMaxMs: 10 * 60_000 },
  onchain: { stuckAfterMs: 6 * 60 * 60_000, retryBaseMs: 15_000, retryMaxMs: 15 * 60_000 },
  tron: { stuckAfterMs: 60 * 60_000, retryBaseMs: 15_000, retryMaxMs: 10 * 60_000 },
  bank: { stuckAfterMs: 4 * 60 * 60_000, retryBaseMs: 30_000, retryMaxMs: 30 * 60_000 },
  ethereum: { stuckAfterMs: 2 * 60 * 60_000, retryBaseMs: 15_000, retryMaxMs: 10 * 60_000 },
}
