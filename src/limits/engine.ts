import type { Queryable } from '../db/db.js'
import { accountTier } from '../accounts/reads.js'
import { methodKey, type LimitName, type LimitSet, type LimitsConfig } from '../config/limits.js'
import type { Rate } from '../shared/amount.js'
import { ceilDiv, formatMinor } from '../shared/amount.js'
import { precisionOf } from '../shared/currency.js'
import { ApiError, type ErrorDetail } from '../shared/errors.js'
import {
  accountSettings,
  DAY_MS,
  destinationHistory,
  HOUR_MS,
  MONTH_MS,
  windowUse,
  type AccountLimitSettings,
  type MethodUse,
} from './repository.js'

/**
 * The limits' arithmetic and checks, shared by the confirm gate (gate.ts), the quote's informative
 * check and the account's GET /limits (routes.ts).
 *
 * A transaction's value is its destination amount (what reaches the payee, or what a receive
 * credits) in the reference currency LIMITS_CCY, at the BTC rates of its quote, rounded UP to the
 * reference currency's minor unit: a limit of 1000.00 USD is never passed by rounding many small
 * sends down. A limit is "at most": a send that brings the window exactly to the limit passes, one
 * minor unit more is refused.
 */

/** `minor` of `ccy` in minor units of `refCcy`, at `perBtc` rates (units per 1 BTC), rounded up. */
export function refValue(
  minor: bigint,
  ccy: string,
  refCcy: string,
  ccyPerBtc: Rate,
  refPerBtc: Rate,
): bigint {
  if (ccy === refCcy) return minor
  // value = minor / 10^p(ccy) * (ref/10^rs) / (c/10^cs), in ref minor units: * 10^p(ref)
  const num = minor * refPerBtc.num * 10n ** BigInt(ccyPerBtc.scale + precisionOf(refCcy))
  const den = ccyPerBtc.num * 10n ** BigInt(refPerBtc.scale + precisionOf(ccy))
  return ceilDiv(num, den)
}

/** An account's limits in effect: its tier's, with its unexpired overrides over them. */
export interface EffectiveLimits {
  tier: string
  all: LimitSet
  byMethod: Record<string, LimitSet>
  settings: AccountLimitSettings
}

export async function effectiveLimits(
  q: Queryable,
  config: LimitsConfig,
  accountId: string,
  at: number,
  destination?: string,
): Promise<EffectiveLimits> {
  const settings = await accountSettings(q, accountId, at, destination)
  const tier = settings.tier ?? (await accountTier(q, accountId)) ?? 'standard'
  const defaults = config.tiers[tier] ?? { all: {}, byMethod: {} }
  const all: LimitSet = { ...defaults.all }
  const byMethod: Record<string, LimitSet> = {}
  for (const [m, set] of Object.entries(defaults.byMethod)) byMethod[m] = { ...set }
  for (const o of settings.overrides) {
    // An amount override counted in another reference currency (LIMITS_CCY changed since) is not applied.
    const isAmount = o.name !== 'sends_per_hour' && o.name !== 'new_destination_cooldown'
    if (isAmount && o.refCcy !== config.ccy) continue
    const set = o.method === '' ? all : (byMethod[methodKey(o.method)] ??= {})
    set[o.name as LimitName] = o.amount
  }
  return { tier, all, byMethod, settings }
}

export interface Candidate {
  txnId: string
  accountId: string
  direction: 'in' | 'out'
  method: string
  refMinor: bigint
  destination: string | undefined
}

export function limitRefusal(detail: ErrorDetail & { limit: string }): ApiError {
  return new ApiError(
    'limit_exceeded',
    `The ${detail.limit.replace(/_/g, ' ')} limit does not allow this transaction`,
    [detail],
  )
}

const WINDOWS = {
  daily_outgoing: { ms: DAY_MS, direction: 'out', pick: 'day' },
  monthly_outgoing: { ms: MONTH_MS, direction: 'out', pick: 'month' },
  daily_incoming: { ms: DAY_MS, direction: 'in', pick: 'day' },
  monthly_incoming: { ms: MONTH_MS, direction: 'in', pick: 'month' },
} as const

/** Whether any limit of `limits` could concern a transaction in `direction` by `method`. */
function scopes(limits: EffectiveLimits, method: string): Array<{ set: LimitSet; method: string | null }> {
  const out: Array<{ set: LimitSet; method: string | null }> = [{ set: limits.all, method: null }]
  const own = limits.byMethod[methodKey(method)]
  if (own) out.push({ set: own, method })
  return out
}

/** The use of the windows summed over `method` (null: every method). */
function useOf(use: MethodUse[], method: string | null) {
  const rows = method === null ? use : use.filter((u) => u.method === method)
  const min = (vs: Array<number | null>) => {
    const xs = vs.filter((v): v is number => v !== null)
    return xs.length ? Math.min(...xs) : null
  }
  return {
    day: rows.reduce((s, r) => s + r.day, 0n),
    month: rows.reduce((s, r) => s + r.month, 0n),
    hourCount: rows.reduce((s, r) => s + r.hourCount, 0),
    dayOldest: min(rows.map((r) => r.dayOldest)),
    monthOldest: min(rows.map((r) => r.monthOldest)),
    hourOldest: min(rows.map((r) => r.hourOldest)),
  }
}

/**
 * Check `c` against the account's limits at `at`: the first limit it would go over is thrown as
 * 403 limit_exceeded. `stage` 'quote' leaves out the new-destination cool-down, whose clock the
 * quote itself starts.
 */
export async function checkLimits(
  q: Queryable,
  config: LimitsConfig,
  c: Candidate,
  at: number,
  stage: 'quote' | 'confirm',
): Promise<void> {
  const limits = await effectiveLimits(q, config, c.accountId, at, c.destination)
  const ccy = config.ccy
  const text = (minor: bigint) => formatMinor(minor < 0n ? 0n : minor, ccy)
  const field = c.direction === 'out' ? 'destReq.amtRequested' : 'sourceReq.amtRequested'
  if (c.direction === 'out' && limits.settings.allowListOnly && !(c.destination && limits.settings.allowed)) {
    throw limitRefusal({
      field: 'destReq.reqDetails',
      issue: 'destination not on the allow-list',
      limit: 'allow_list',
    })
  }
  const sc = scopes(limits, c.method)
  const needsWindows = sc.some(
    ({ set }) =>
      (Object.keys(WINDOWS) as Array<keyof typeof WINDOWS>).some(
        (name) => set[name] !== undefined && WINDOWS[name].direction === c.direction,
      ) ||
      (c.direction === 'out' && set.sends_per_hour !== undefined),
  )
  const use = needsWindows
    ? await windowUse(q, { accountId: c.accountId, direction: c.direction, refCcy: ccy, at, except: c.txnId })
    : []
  for (const { set, method } of sc) {
    const issue = method ? `over the ${method} limit` : 'over the limit'
    if (c.direction === 'out' && set.per_transaction !== undefined && c.refMinor > set.per_transaction) {
      throw limitRefusal({
        field,
        issue,
        limit: 'per_transaction',
        ccy,
        remaining: text(set.per_transaction),
      })
    }
    const u = useOf(use, method)
    for (const name of Object.keys(WINDOWS) as Array<keyof typeof WINDOWS>) {
      const w = WINDOWS[name]
      const cap = set[name]
      if (cap === undefined || w.direction !== c.direction) continue
      const used = u[w.pick]
      if (used + c.refMinor > cap) {
        const oldest = w.pick === 'day' ? u.dayOldest : u.monthOldest
        throw limitRefusal({
          field,
          issue,
          limit: name,
          ccy,
          remaining: text(cap - used),
          ...(oldest !== null ? { resetsAt: oldest + w.ms } : {}),
        })
      }
    }
    if (
      c.direction === 'out' &&
      set.sends_per_hour !== undefined &&
      BigInt(u.hourCount) + 1n > set.sends_per_hour
    ) {
      const left = set.sends_per_hour - BigInt(u.hourCount)
      throw limitRefusal({
        field: 'destReq',
        issue: 'too many sends in the last hour',
        limit: 'velocity',
        remaining: String(left < 0n ? 0n : left),
        ...(u.hourOldest !== null ? { resetsAt: u.hourOldest + HOUR_MS } : {}),
      })
    }
    const cooldown = set.new_destination_cooldown
    if (
      stage === 'confirm' &&
      c.direction === 'out' &&
      cooldown !== undefined &&
      cooldown > 0n &&
      c.destination
    ) {
      const { firstQuotedAt } = await destinationHistory(q, c.accountId, c.destination)
      const free = (firstQuotedAt ?? at) + Number(cooldown) * 1000
      if (at < free)
        throw limitRefusal({
          field: 'destReq.reqDetails',
          issue: 'a new destination is in its cool-down',
          limit: 'new_destination',
          resetsAt: free,
        })
    }
  }
}
