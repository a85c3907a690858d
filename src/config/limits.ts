import { RATE_CODES, isCurrency, precisionOf } from '../shared/currency.js'
import { RAIL_KINDS, type RailKind } from './rail-ops.js'

/**
 * The limits' settings (src/limits, docs/limits.md), read from the environment once:
 *
 * - `LIMITS_CCY`: the reference currency every amount limit is counted in (default USD).
 * - `LIMITS_<TIER>_<LIMIT>` and `LIMITS_<TIER>_<LIMIT>_<METHOD>`: a tier's limit over every method
 *   together, or over one method (its name upper-cased, `-` written `_`: `LIGHTNING`, `ON_CHAIN`,
 *   `TRON`, `VND_INSTANT`). TIER is one word of letters and digits (`STANDARD`, `PREMIUM`, or a tier
 *   an operator names and assigns to accounts). The amount limits are exact decimal text in
 *   LIMITS_CCY; `SENDS_PER_HOUR` is a count, `NEW_DESTINATION_COOLDOWN_S` seconds.
 * - `HOT_WALLET_CAP_<RAIL>_PER_HOUR`: decimal text in the rail's currency (BTC for LIGHTNING and
 *   ONCHAIN, USDT for TRON, VND for BANK); the kind registry says which currency, so the text is
 *   converted to minor units when the limits are wired.
 * - `LIMITS_ENABLED=true`: run the limits gate on every send even when no tier sets a limit (for
 *   operators who set only per-account overrides or allow-lists).
 *
 * Unset means no limit; with none set at all the gate concerns no kind and nothing is read.
 */

/** The amount limits, in minor units of the reference currency. */
export const AMOUNT_LIMITS = [
  'per_transaction',
  'daily_outgoing',
  'monthly_outgoing',
  'daily_incoming',
  'monthly_incoming',
] as const
export type AmountLimit = (typeof AMOUNT_LIMITS)[number]

/** Every limit a tier may set, by its name in the API (`details.limit`) and the overrides. */
export const LIMIT_NAMES = [...AMOUNT_LIMITS, 'sends_per_hour', 'new_destination_cooldown'] as const
export type LimitName = (typeof LIMIT_NAMES)[number]

/** One set of limits: every limit it sets; an absent one is no limit. */
export type LimitSet = Partial<Record<LimitName, bigint>>

export interface TierLimits {
  /** Over every method together. */
  all: LimitSet
  /** Per method, keyed by the method's setting spelling (`ON_CHAIN`): see `methodKey`. */
  byMethod: Record<string, LimitSet>
}

export interface LimitsConfig {
  ccy: string
  /** Each tier that sets a limit, by its lower-case name. */
  tiers: Record<string, TierLimits>
  /** Per rail, the decimal text of its hourly cap in the rail's currency. */
  hotWalletCaps: Partial<Record<RailKind, string>>
  /** LIMITS_ENABLED=true: the gate runs even when no tier sets a limit. */
  enabled: boolean
}

export class LimitsConfigError extends Error {
  override name = 'ConfigError'
}

/** A method as its settings name it: `on-chain` is `ON_CHAIN`. */
export function methodKey(method: string): string {
  return method.toUpperCase().replace(/-/g, '_')
}

const SETTING_OF: Record<LimitName, string> = {
  per_transaction: 'PER_TRANSACTION',
  daily_outgoing: 'DAILY_OUTGOING',
  monthly_outgoing: 'MONTHLY_OUTGOING',
  daily_incoming: 'DAILY_INCOMING',
  monthly_incoming: 'MONTHLY_INCOMING',
  sends_per_hour: 'SENDS_PER_HOUR',
  new_destination_cooldown: 'NEW_DESTINATION_COOLDOWN_S',
}

/** Exact decimal text in `ccy` as minor units; refuses more decimals than the currency has. */
export function decimalMinor(name: string, text: string, ccy: string): bigint {
  const precision = precisionOf(ccy)
  const m = /^(\d{1,18})(?:\.(\d+))?$/.exec(text.trim())
  const frac = m?.[2] ?? ''
  if (!m || frac.length > precision)
    throw new LimitsConfigError(
      `${name}: expected a decimal ${ccy} amount with at most ${precision} decimals, got ${JSON.stringify(text)}`,
    )
  return BigInt(m[1]! + frac.padEnd(precision, '0'))
}

function count(name: string, text: string, max: number): bigint {
  if (!/^\d{1,9}$/.test(text.trim()) || Number(text) > max)
    throw new LimitsConfigError(
      `${name}: expected a whole number from 0 to ${max}, got ${JSON.stringify(text)}`,
    )
  return BigInt(text.trim())
}

export function limitsConfig(env: Record<string, string | undefined>): LimitsConfig {
  const ccy = (env.LIMITS_CCY || 'USD').trim().toUpperCase()
  if (!isCurrency(ccy) || !(RATE_CODES as readonly string[]).includes(ccy))
    throw new LimitsConfigError(
      `LIMITS_CCY: expected a currency code with a rate, got ${JSON.stringify(env.LIMITS_CCY)}`,
    )
  const tiers: Record<string, TierLimits> = {}
  const hotWalletCaps: Partial<Record<RailKind, string>> = {}
  const entries = Object.entries(SETTING_OF) as Array<[LimitName, string]>
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined || raw.trim() === '') continue
    const hot = /^HOT_WALLET_CAP_([A-Z]+)_PER_HOUR$/.exec(name)
    if (hot) {
      const rail = hot[1]!.toLowerCase() as RailKind
      if (!RAIL_KINDS.includes(rail))
        throw new LimitsConfigError(`${name}: no rail ${hot[1]} (${RAIL_KINDS.join(', ')})`)
      if (!/^\d{1,18}(?:\.\d{1,18})?$/.test(raw.trim()))
        throw new LimitsConfigError(`${name}: expected a decimal amount, got ${JSON.stringify(raw)}`)
      hotWalletCaps[rail] = raw.trim()
      continue
    }
    if (!name.startsWith('LIMITS_') || name === 'LIMITS_CCY' || name === 'LIMITS_ENABLED') continue
    const m = /^LIMITS_([A-Z0-9]+)_(.+)$/.exec(name)
    const rest = m?.[2] ?? ''
    const found = entries.find(([, s]) => rest === s || rest.startsWith(`${s}_`))
    if (!m || !found)
      throw new LimitsConfigError(
        `${name}: expected LIMITS_<TIER>_<LIMIT>[_<METHOD>] with LIMIT one of ${Object.values(SETTING_OF).join(', ')}`,
      )
    const [limit, setting] = found
    const method = rest === setting ? undefined : rest.slice(setting.length + 1)
    if (method !== undefined && !/^[A-Z0-9_]+$/.test(method))
      throw new LimitsConfigError(`${name}: ${method} is not a method's setting name`)
    const value =
      limit === 'sends_per_hour'
        ? count(name, raw, 1_000_000)
        : limit === 'new_destination_cooldown'
          ? count(name, raw, 30 * 86_400)
          : decimalMinor(name, raw, ccy)
    const tier = (tiers[m[1]!.toLowerCase()] ??= { all: {}, byMethod: {} })
    const set = method === undefined ? tier.all : (tier.byMethod[method] ??= {})
    set[limit] = value
  }
  return { ccy, tiers, hotWalletCaps, enabled: env.LIMITS_ENABLED === 'true' }
}
