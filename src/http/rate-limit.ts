import type { FastifyReply } from 'fastify'
import type { Redis } from 'ioredis'
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible'
import { clientNet } from '../shared/client-net.js'
import { ConfigError } from '../config/config.js'

/**
 * Rate limits (spec "Limits", contract section 8): per-account tiers with a minute window and a
 * one-second burst window, per-API-key limits on a few endpoints, and a per-address limit for
 * requests that fail authentication; and windows of their own for the Lightning Addresses and for
 * each account's bank account-name inquiries. Counters live in Redis when a client is given, so every
 * instance shares them; otherwise, and while Redis is unreachable, each instance counts in memory.
 *
 * Counting rule: a request is counted in every window that applies only when all of them admit it.
 * When one window refuses, the point is handed back to the windows that had admitted it, so a
 * client hammering a refused window does not also burn its budget in the others. See
 * docs/rate-limits.md.
 */

export type RateLimitTier = 'standard' | 'premium'
export type RateLimitBackend = 'redis' | 'memory'

export interface TierLimits {
  perMinute: number
  perSecond: number
}

/** A per-API-key limit on one route, matched by HTTP method and Fastify route pattern. */
export interface EndpointLimit {
  method: string
  /** The Fastify route pattern, as `request.routeOptions.url` gives it, e.g. `/api/v2/transaction/:txnId`. */
  route: string
  perMinute: number
}

export interface RateLimitConfig {
  /** When false nothing is counted and every request is admitted. */
  enabled: boolean
  tiers: Record<RateLimitTier, TierLimits>
  endpoints: EndpointLimit[]
  /** Per client address, for requests that fail authentication. */
  unauthenticatedPerMinute: number
  /**
   * Per operator (the admin token is the operator `system`), for its requests refused after it
   * was authenticated (role, CSRF, any other 4xx): counted apart from its address's budget.
   */
  operatorRefusalsPerMinute: number
  /** Each Lightning Address (LNURL-pay, docs/lightning-address.md): its requests and amounts. */
  lightningAddress: LightningAddressLimits
  /**
   * Bank account-name inquiries (`GET /api/v2/fiat/account-name`) per account and hour: each one
   * costs a bank fee and names a stranger, so they have a window of their own.
   */
  accountNamePerHour: number
}

/** What one Lightning Address accepts: LNURL requests per minute, and the amounts of a payment. */
export interface LightningAddressLimits {
  /** Requests to its `/.well-known/lnurlp/{username}` and callback together, per minute. */
  perMinute: number
  /**
   * LNURL requests of one client (an IPv4 address, an IPv6 /64) per minute, to any name, claimed
   * or not: below `perMinute`, so that one client cannot spend an address's window, nor probe
   * names at will.
   */
  perClientPerMinute: number
  /** The least a payer may send, in sats (`minSendable` is this in msat). */
  minSats: bigint
  /** The most a payer may send, in sats (never above RECEIVE_MAX_BTC). */
  maxSats: bigint
}

/** The numbers of the specification's Limits section. */
export const DEFAULT_RATE_LIMITS: Readonly<RateLimitConfig> = Object.freeze({
  enabled: true,
  tiers: Object.freeze({
    standard: Object.freeze({ perMinute: 60, perSecond: 5 }),
    premium: Object.freeze({ perMinute: 300, perSecond: 20 }),
  }),
  endpoints: Object.freeze([
    Object.freeze({ method: 'GET', route: '/api/v2/transaction/:txnId', perMinute: 60 }),
    Object.freeze({ method: 'GET', route: '/api/v2/transaction', perMinute: 30 }),
    Object.freeze({ method: 'POST', route: '/api/v2/webhook', perMinute: 10 }),
  ]) as EndpointLimit[],
  unauthenticatedPerMinute: 30,
  operatorRefusalsPerMinute: 60,
  lightningAddress: Object.freeze({
    perMinute: 60,
    perClientPerMinute: 20,
    minSats: 1n,
    maxSats: 10_000_000n,
  }),
  accountNamePerHour: 30,
})

/** Which counter a decision reports on. */
export type RateLimitScope =
  | 'account'
  | 'api-key-endpoint'
  | 'client-address'
  | 'operator'
  | 'lightning-address'
  | 'lightning-address-client'
  | 'account-name'

/**
 * The outcome of one request against every window that applies. The numbers describe the tightest
 * window: when admitted, the one with the fewest points left; when refused, the refusing window with
 * the longest wait.
 */
export interface Decision {
  allowed: boolean
  /** Requests allowed in the reported window. */
  limit: number
  /** Requests left in the reported window (0 when refused). */
  remaining: number
  /** Unix seconds when the reported window resets. */
  resetSec: number
  /** Whole seconds to wait, at least 1; only when refused. */
  retryAfterSec?: number
  /** Length of the reported window in seconds (1, 60 or 3600). */
  windowSec: number
  scope: RateLimitScope
}

export interface ConsumeInput {
  accountId: string
  tier: RateLimitTier
  keyId: string
  method: string
  /** The Fastify route pattern of the request, or '' when it matched no route. */
  route: string
}

export interface RateLimiter {
  /** Counts one authenticated request against the account windows and the key's endpoint window. */
  consume(input: ConsumeInput): Promise<Decision>
  /** Counts one request that failed authentication against its client address. */
  consumeAnonymous(ip: string): Promise<Decision>
  /**
   * Counts one LNURL-pay request (well-known or callback) against its client's window and, for a
   * claimed name (`username` given), against that Lightning Address's window too.
   */
  consumeAddress(username: string | undefined, client: string): Promise<Decision>
  /** Counts one bank account-name inquiry against the account's hourly window for them. */
  consumeAccountName(accountId: string): Promise<Decision>
  /**
   * Reads the client address window without counting: `allowed` is false once the address has no
   * failures left in it. Used to report the headers on answers nothing counted, and to refuse
   * credentials from a spent address before checking them.
   */
  peekAnonymous(ip: string): Promise<Decision>
  /** Counts one request of an authenticated operator that was refused, against that operator. */
  consumeOperatorRefusal(operatorId: string): Promise<Decision>
  /** Reads an operator's window of refusals without counting; `allowed` is false once spent. */
  peekOperatorRefusals(operatorId: string): Promise<Decision>
  /** Where counting happens now: shared in Redis, or per instance in memory. */
  backend(): RateLimitBackend
  /** Detaches from the Redis client (which stays open: its owner closes it). */
  close(): void
}

export interface RateLimitLog {
  warn(obj: object, msg: string): void
  info(obj: object, msg: string): void
}

export interface RateLimiterDeps {
  /**
   * Shared counters when given. Build it with `enableOfflineQueue: false` and a `commandTimeout`
   * so that an unreachable or hung Redis fails fast into the in-memory insurance instead of
   * holding requests.
   */
  redis?: Redis | undefined
  config: RateLimitConfig
  log: RateLimitLog
  /** Milliseconds since the epoch; only used to turn window ends into Unix seconds. */
  now?: () => number
  onBackendChange?: (backend: RateLimitBackend) => void
  /** Prefix of every Redis key; tests use a unique one per run. */
  keyPrefix?: string
}

const DEFAULT_KEY_PREFIX = 'svcpay:rl'
const MINUTE_SEC = 60
const SECOND_SEC = 1
const HOUR_SEC = 3600
// A hand-back this close to a window's end could land in the next window and grant it an extra
// point; the window is about to reset anyway, so the hand-back is skipped.
const REFUND_MIN_MS = 50
const LIMIT_MAX = 1_000_000

/** A request's record of whether any of its windows fell back to in-memory counting. */
interface ConsumeTrace {
  usedMemory: boolean
}

/**
 * The in-memory limiter Redis limiters fall back to. rate-limiter-flexible hands the caller's
 * options to the insurance limiter unchanged, so marking the trace here is how one request learns
 * that Redis did not answer it.
 */
class InsuranceMemoryLimiter extends RateLimiterMemory {
  override consume(
    key: string | number,
    pointsToConsume?: number,
    options: { [key: string]: unknown } = {},
  ): Promise<RateLimiterRes> {
    const trace = options.trace as ConsumeTrace | undefined
    if (trace) trace.usedMemory = true
    return super.consume(key, pointsToConsume, options)
  }
}

interface Window {
  limiter: RateLimiterAbstract
  points: number
  windowSec: number
  scope: RateLimitScope
}

interface Outcome {
  window: Window
  key: string
  allowed: boolean
  res: RateLimiterRes
}

/** Builds the limiter; see {@link RateLimiterDeps}. The config is checked and a bad one throws. */
export function createRateLimiter(deps: RateLimiterDeps): RateLimiter {
  const { redis, config, log } = deps
  checkConfig(config)
  const now = deps.now ?? Date.now
  const prefix = deps.keyPrefix ?? DEFAULT_KEY_PREFIX
  const tracker = redis ? createBackendTracker(redis, log, deps.onBackendChange) : undefined

  function window(keyPrefix: string, points: number, windowSec: number, scope: RateLimitScope): Window {
    const opts = { keyPrefix, points, duration: windowSec }
    const limiter = redis
      ? new RateLimiterRedis({
          ...opts,
          storeClient: redis,
          // Without this, commands to a disconnected client wait in its queue (or fail only after
          // retries) and every request stalls; with it they go to the insurance at once.
          rejectIfRedisNotReady: true,
          insuranceLimiter: new InsuranceMemoryLimiter(opts),
        })
      : new RateLimiterMemory(opts)
    return { limiter, points, windowSec, scope }
  }

  // Both tiers share one counter per account and window, so an account moved to another tier keeps
  // what it has already used in the current window (in Redis; in-memory counters are per limiter).
  const accountMinute = {
    standard: window(`${prefix}:acct:m`, config.tiers.standard.perMinute, MINUTE_SEC, 'account'),
    premium: window(`${prefix}:acct:m`, config.tiers.premium.perMinute, MINUTE_SEC, 'account'),
  }
  const accountSecond = {
    standard: window(`${prefix}:acct:s`, config.tiers.standard.perSecond, SECOND_SEC, 'account'),
    premium: window(`${prefix}:acct:s`, config.tiers.premium.perSecond, SECOND_SEC, 'account'),
  }
  const endpoints = new Map<string, Window>()
  for (const e of config.endpoints) {
    const id = endpointId(e.method, e.route)
    endpoints.set(id, window(`${prefix}:ep:${id}`, e.perMinute, MINUTE_SEC, 'api-key-endpoint'))
  }
  const anonymous = window(`${prefix}:anon:m`, config.unauthenticatedPerMinute, MINUTE_SEC, 'client-address')
  const operatorRefusals = window(`${prefix}:op:m`, config.operatorRefusalsPerMinute, MINUTE_SEC, 'operator')
  const lnAddress = window(
    `${prefix}:lnaddr:m`,
    config.lightningAddress.perMinute,
    MINUTE_SEC,
    'lightning-address',
  )
  const lnClient = window(
    `${prefix}:lnaddr:client:m`,
    config.lightningAddress.perClientPerMinute,
    MINUTE_SEC,
    'lightning-address-client',
  )
  const accountName = window(`${prefix}:acctname:h`, config.accountNamePerHour, HOUR_SEC, 'account-name')

  async function decide(counted: Array<[Window, string]>): Promise<Decision> {
    const requestSeq = tracker?.begin() ?? 0
    const trace: ConsumeTrace = { usedMemory: false }
    const outcomes = await Promise.all(counted.map(([w, key]) => attempt(w, key, trace)))
    tracker?.report(requestSeq, trace.usedMemory)

    const refused = outcomes.filter((o) => !o.allowed)
    if (refused.length > 0) {
      await refund(outcomes.filter((o) => o.allowed))
      const longest = refused.reduce((a, b) => (b.res.msBeforeNext > a.res.msBeforeNext ? b : a))
      return toDecision(longest, now())
    }
    const tightest = outcomes.reduce((a, b) =>
      b.res.remainingPoints < a.res.remainingPoints ||
      (b.res.remainingPoints === a.res.remainingPoints && b.res.msBeforeNext > a.res.msBeforeNext)
        ? b
        : a,
    )
    return toDecision(tightest, now())
  }

  async function peek(w: Window, key: string): Promise<Decision> {
    if (!config.enabled) return openDecision(w, now())
    const res = await w.limiter.get(key)
    if (!res || res.msBeforeNext <= 0) return openDecision(w, now())
    const remaining = Math.max(0, w.points - res.consumedPoints)
    const seen = new RateLimiterRes(remaining, res.msBeforeNext, res.consumedPoints)
    return toDecision({ window: w, key, allowed: remaining > 0, res: seen }, now())
  }

  return {
    async consume(input) {
      const minute = accountMinute[input.tier]
      const second = accountSecond[input.tier]
      if (!minute || !second) throw new Error(`rate limit: unknown tier ${String(input.tier)}`)
      if (!config.enabled) return openDecision(minute, now())
      const counted: Array<[Window, string]> = [
        [minute, input.accountId],
        [second, input.accountId],
      ]
      const endpoint = endpoints.get(endpointId(input.method, input.route))
      if (endpoint) counted.push([endpoint, input.keyId])
      return decide(counted)
    },

    async consumeAnonymous(ip) {
      if (!config.enabled) return openDecision(anonymous, now())
      return decide([[anonymous, ip]])
    },

    async consumeAddress(username, client) {
      if (!config.enabled) return openDecision(lnAddress, now())
      const key = clientNet(client)
      return decide(
        username === undefined
          ? [[lnClient, key]]
          : [
              [lnAddress, username],
              [lnClient, key],
            ],
      )
    },

    async consumeAccountName(accountId) {
      if (!config.enabled) return openDecision(accountName, now())
      return decide([[accountName, accountId]])
    },

    async peekAnonymous(ip) {
      return peek(anonymous, ip)
    },

    async consumeOperatorRefusal(operatorId) {
      if (!config.enabled) return openDecision(operatorRefusals, now())
      return decide([[operatorRefusals, operatorId]])
    },

    async peekOperatorRefusals(operatorId) {
      return peek(operatorRefusals, operatorId)
    },

    backend() {
      return tracker ? tracker.current() : 'memory'
    },

    close() {
      tracker?.close()
    },
  }
}

async function attempt(window: Window, key: string, trace: ConsumeTrace): Promise<Outcome> {
  try {
    const res = await window.limiter.consume(key, 1, { trace })
    return { window, key, allowed: true, res }
  } catch (err) {
    // rate-limiter-flexible refuses by rejecting with the counter's state; anything else is a
    // failure the insurance limiter should have absorbed, so it is a bug and propagates.
    if (err instanceof RateLimiterRes) return { window, key, allowed: false, res: err }
    throw err
  }
}

/** Hands the point back to windows that admitted a request another window refused. */
async function refund(admitted: Outcome[]): Promise<void> {
  await Promise.allSettled(
    admitted.filter((o) => o.res.msBeforeNext > REFUND_MIN_MS).map((o) => o.window.limiter.reward(o.key, 1)),
  )
}

function toDecision(o: Outcome, nowMs: number): Decision {
  const waitMs = Math.max(0, o.res.msBeforeNext)
  const decision: Decision = {
    allowed: o.allowed,
    limit: o.window.points,
    remaining: o.allowed ? o.res.remainingPoints : 0,
    resetSec: Math.ceil((nowMs + waitMs) / 1000),
    windowSec: o.window.windowSec,
    scope: o.window.scope,
  }
  if (!o.allowed) decision.retryAfterSec = Math.max(1, Math.ceil(waitMs / 1000))
  return decision
}

/** With limits switched off: the nominal numbers, nothing counted. */
function openDecision(w: Window, nowMs: number): Decision {
  return {
    allowed: true,
    limit: w.points,
    remaining: w.points,
    resetSec: Math.ceil(nowMs / 1000) + w.windowSec,
    windowSec: w.windowSec,
    scope: w.scope,
  }
}

function endpointId(method: string, route: string): string {
  return `${method.toUpperCase()}:${route}`
}

/**
 * Follows whether Redis answers, from the outcome of real requests rather than from connection
 * events, so that a hung or refusing server counts as down too. Changes are logged once per outage
 * and once per recovery. A request that started before the last change cannot flip the state back,
 * so answers racing an outage do not make the log flap.
 */
function createBackendTracker(
  redis: Redis,
  log: RateLimitLog,
  onChange: ((backend: RateLimitBackend) => void) | undefined,
) {
  let state: RateLimitBackend = 'redis'
  let started = 0
  let changedAt = 0
  let lastError: string | undefined
  const onError = (err: Error): void => {
    lastError = err.message
  }
  // The listener records the cause for the outage warning; it also keeps ioredis from printing
  // every reconnection failure on its own.
  redis.on('error', onError)
  // A lazy client only connects on its first command, and the limiters never send one to a client
  // that is not ready, so it is asked to connect here; ioredis retries on its own afterwards.
  if (redis.status === 'wait') redis.connect().catch(() => undefined)

  function change(next: RateLimitBackend): void {
    state = next
    changedAt = started
    if (next === 'memory') {
      log.warn(
        { redisStatus: redis.status, redisError: lastError },
        'rate limits: Redis unavailable, counting per instance in memory until it answers again',
      )
    } else {
      log.info({}, 'rate limits: Redis answers again, counting shared across instances')
    }
    try {
      onChange?.(next)
    } catch (err) {
      log.warn({ err }, 'rate limits: onBackendChange threw')
    }
  }

  return {
    begin(): number {
      started += 1
      return started
    },
    report(requestSeq: number, usedMemory: boolean): void {
      if (requestSeq <= changedAt) return
      const next: RateLimitBackend = usedMemory ? 'memory' : 'redis'
      if (next !== state) change(next)
    },
    current(): RateLimitBackend {
      return state
    },
    close(): void {
      redis.off('error', onError)
    },
  }
}

function checkConfig(config: RateLimitConfig): void {
  const check = (what: string, n: number): void => {
    if (!Number.isInteger(n) || n < 1 || n > LIMIT_MAX) {
      throw new ConfigError(`rate limits: ${what} must be a whole number from 1 to ${LIMIT_MAX}, got ${n}`)
    }
  }
  for (const tier of ['standard', 'premium'] as const) {
    check(`${tier} per minute`, config.tiers[tier].perMinute)
    check(`${tier} per second`, config.tiers[tier].perSecond)
  }
  check('unauthenticated per minute', config.unauthenticatedPerMinute)
  check('operator refusals per minute', config.operatorRefusalsPerMinute)
  const a = config.lightningAddress
  check('Lightning Address per minute', a.perMinute)
  check('Lightning Address per client per minute', a.perClientPerMinute)
  check('account-name inquiries per hour', config.accountNamePerHour)
  if (a.minSats < 1n || a.maxSats < a.minSats)
    throw new ConfigError(
      `rate limits: Lightning Address amounts need 1 <= minimum (${a.minSats}) <= maximum (${a.maxSats}) sats`,
    )
  const seen = new Set<string>()
  for (const e of config.endpoints) {
    check(`${e.method} ${e.route} per minute`, e.perMinute)
    const id = endpointId(e.method, e.route)
    if (seen.has(id)) throw new ConfigError(`rate limits: ${e.method} ${e.route} is listed twice`)
    seen.add(id)
  }
}

/**
 * Sets X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset and, on a refusal,
 * Retry-After (whole seconds, at least 1).
 */
export function applyRateLimitHeaders(reply: FastifyReply, decision: Decision): void {
  reply.header('X-RateLimit-Limit', String(decision.limit))
  reply.header('X-RateLimit-Remaining', String(decision.remaining))
  reply.header('X-RateLimit-Reset', String(decision.resetSec))
  if (!decision.allowed) reply.header('Retry-After', String(retryAfterOf(decision)))
}

/**
 * Like {@link applyRateLimitHeaders} for a window counted after the guard's: its headers replace
 * those already set when it is the tighter (fewer left; on a tie it resets later), or refused.
 */
export function applyTighterRateLimitHeaders(reply: FastifyReply, decision: Decision): void {
  const set = reply.getHeader('x-ratelimit-remaining')
  if (!decision.allowed || set === undefined || decision.remaining <= Number(set)) {
    applyRateLimitHeaders(reply, decision)
  }
}

const SCOPE_TEXT: Record<RateLimitScope, string> = {
  account: 'for this account',
  'api-key-endpoint': 'for this endpoint and API key',
  'client-address': 'for unauthenticated requests from this address',
  operator: 'for refused requests of this operator',
  'lightning-address': 'for this Lightning Address',
  'lightning-address-client': 'to Lightning Addresses from this client',
  'account-name': 'for bank account-name inquiries of this account',
}

/** The 429 body of the specification: `{ error: 'rate_limit_exceeded', message }`. */
export function rateLimitErrorBody(decision: Decision): { error: 'rate_limit_exceeded'; message: string } {
  const per =
    decision.windowSec === 1
      ? 'second'
      : decision.windowSec === 60
        ? 'minute'
        : decision.windowSec === 3600
          ? 'hour'
          : `${decision.windowSec} seconds`
  const wait = retryAfterOf(decision)
  return {
    error: 'rate_limit_exceeded',
    message: `Rate limit exceeded: ${decision.limit} requests per ${per} ${SCOPE_TEXT[decision.scope]}; retry after ${wait} ${wait === 1 ? 'second' : 'seconds'}`,
  }
}

function retryAfterOf(decision: Decision): number {
  return decision.retryAfterSec ?? Math.max(1, decision.resetSec - Math.floor(Date.now() / 1000))
}

/**
 * Reads the rate-limit variables over {@link DEFAULT_RATE_LIMITS}. Unset or empty means the
 * default; a value that is not a whole number from 1 to 1,000,000 throws a ConfigError naming the
 * variable.
 */
export function rateLimitConfigFromEnv(env: Record<string, string | undefined>): RateLimitConfig {
  const d = DEFAULT_RATE_LIMITS
  const endpoint = (method: string, route: string, name: string): EndpointLimit => {
    const fallback = d.endpoints.find((e) => e.method === method && e.route === route)
    if (!fallback) throw new Error(`rate limits: no default for ${method} ${route}`)
    return { method, route, perMinute: envLimit(env, name, fallback.perMinute) }
  }
  return {
    enabled: envEnabled(env.RATE_LIMITS_ENABLED),
    tiers: {
      standard: {
        perMinute: envLimit(env, 'RATE_LIMIT_STANDARD_PER_MINUTE', d.tiers.standard.perMinute),
        perSecond: envLimit(env, 'RATE_LIMIT_STANDARD_PER_SECOND', d.tiers.standard.perSecond),
      },
      premium: {
        perMinute: envLimit(env, 'RATE_LIMIT_PREMIUM_PER_MINUTE', d.tiers.premium.perMinute),
        perSecond: envLimit(env, 'RATE_LIMIT_PREMIUM_PER_SECOND', d.tiers.premium.perSecond),
      },
    },
    endpoints: [
      endpoint('GET', '/api/v2/transaction/:txnId', 'RATE_LIMIT_TXN_GET_PER_MINUTE'),
      endpoint('GET', '/api/v2/transaction', 'RATE_LIMIT_TXN_LIST_PER_MINUTE'),
      endpoint('POST', '/api/v2/webhook', 'RATE_LIMIT_WEBHOOK_CREATE_PER_MINUTE'),
    ],
    unauthenticatedPerMinute: envLimit(env, 'RATE_LIMIT_UNAUTH_PER_MINUTE', d.unauthenticatedPerMinute),
    operatorRefusalsPerMinute: envLimit(env, 'RATE_LIMIT_OPERATOR_PER_MINUTE', d.operatorRefusalsPerMinute),
    lightningAddress: {
      perMinute: envLimit(env, 'RATE_LIMIT_LN_ADDRESS_PER_MINUTE', d.lightningAddress.perMinute),
      perClientPerMinute: envLimit(
        env,
        'RATE_LIMIT_LN_ADDRESS_PER_CLIENT_PER_MINUTE',
        d.lightningAddress.perClientPerMinute,
      ),
      minSats: envSats(env, 'RATE_LIMIT_LN_ADDRESS_MIN_SATS', d.lightningAddress.minSats),
      maxSats: envSats(env, 'RATE_LIMIT_LN_ADDRESS_MAX_SATS', d.lightningAddress.maxSats),
    },
    accountNamePerHour: envLimit(env, 'RATE_LIMIT_ACCOUNT_NAME_PER_HOUR', d.accountNamePerHour),
  }
}

/** 21 million BTC in sats: no amount bound can be larger. */
const SATS_MAX = 2_100_000_000_000_000n

function envSats(env: Record<string, string | undefined>, name: string, fallback: bigint): bigint {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  if (!/^\d{1,16}$/.test(text) || BigInt(text) < 1n || BigInt(text) > SATS_MAX) {
    throw new ConfigError(
      `${name}: expected a whole number of sats from 1 to ${SATS_MAX}, got ${JSON.stringify(text)}`,
    )
  }
  return BigInt(text)
}

function envLimit(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  const n = Number(text)
  if (!/^\d{1,7}$/.test(text) || n < 1 || n > LIMIT_MAX) {
    throw new ConfigError(
      `${name}: expected a whole number from 1 to ${LIMIT_MAX}, got ${JSON.stringify(text)}`,
    )
  }
  return n
}

function envEnabled(text: string | undefined): boolean {
  if (text === undefined || text === '' || text === 'true' || text === '1') return true
  if (text === 'false' || text === '0') return false
  throw new ConfigError(`RATE_LIMITS_ENABLED: expected true or false, got ${JSON.stringify(text)}`)
}
