import { clientNet } from '../shared/client-net.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRateLimiter,
  applyRateLimitHeaders,
  rateLimitConfigFromEnv,
  rateLimitErrorBody,
  DEFAULT_RATE_LIMITS,
  type ConsumeInput,
  type Decision,
  type RateLimitBackend,
  type RateLimitConfig,
  type RateLimiter,
} from './rate-limit.js'

// Every key this run writes starts with this, so parallel runs and leftovers never collide.
const RUN_PREFIX = `svcpay-test:${randomUUID()}`
let prefixCount = 0
const uniquePrefix = (): string => `${RUN_PREFIX}:${++prefixCount}`

const shared = new Redis({ host: '127.0.0.1', port: 6379, enableOfflineQueue: true, maxRetriesPerRequest: 1 })
const clients: Redis[] = [shared]
const limiters: RateLimiter[] = []

function redisClient(port = 6379, extra: Record<string, unknown> = {}): Redis {
  const c = new Redis({
    host: '127.0.0.1',
    port,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    ...extra,
  })
  clients.push(c)
  return c
}

async function connected(c: Redis): Promise<Redis> {
  if (c.status !== 'ready') await new Promise((resolve) => c.once('ready', resolve))
  return c
}

interface LogLine {
  obj: object
  msg: string
}

function recordingLog() {
  const warns: LogLine[] = []
  const infos: LogLine[] = []
  return {
    warns,
    infos,
    warn: (obj: object, msg: string) => warns.push({ obj, msg }),
    info: (obj: object, msg: string) => infos.push({ obj, msg }),
  }
}

function config(overrides: Partial<RateLimitConfig> = {}): RateLimitConfig {
  return {
    enabled: true,
    tiers: {
      standard: { ...DEFAULT_RATE_LIMITS.tiers.standard },
      premium: { ...DEFAULT_RATE_LIMITS.tiers.premium },
    },
    endpoints: DEFAULT_RATE_LIMITS.endpoints.map((e) => ({ ...e })),
    unauthenticatedPerMinute: DEFAULT_RATE_LIMITS.unauthenticatedPerMinute,
    operatorRefusalsPerMinute: DEFAULT_RATE_LIMITS.operatorRefusalsPerMinute,
    lightningAddress: { ...DEFAULT_RATE_LIMITS.lightningAddress },
    accountNamePerHour: DEFAULT_RATE_LIMITS.accountNamePerHour,
    ...overrides,
  }
}

function limiter(opts: {
  redis?: Redis | undefined
  config?: RateLimitConfig
  keyPrefix?: string
  now?: () => number
  log?: ReturnType<typeof recordingLog>
  changes?: RateLimitBackend[]
}): RateLimiter {
  const l = createRateLimiter({
    redis: opts.redis,
    config: opts.config ?? config(),
    log: opts.log ?? recordingLog(),
    keyPrefix: opts.keyPrefix ?? uniquePrefix(),
    ...(opts.now ? { now: opts.now } : {}),
    onBackendChange: (b) => opts.changes?.push(b),
  })
  limiters.push(l)
  return l
}

const request = (over: Partial<ConsumeInput> = {}): ConsumeInput => ({
  accountId: 'acct_1',
  tier: 'standard',
  keyId: 'key_1',
  method: 'GET',
  route: '/api/v2/account/:accountId',
  ...over,
})

async function times(n: number, f: () => Promise<Decision>): Promise<Decision[]> {
  const out: Decision[] = []
  for (let i = 0; i < n; i++) out.push(await f())
  return out
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

beforeAll(async () => {
  // The suite needs the local Redis; fail loudly rather than skip when it is not there.
  expect(await shared.ping()).toBe('PONG')
})

afterAll(async () => {
  for (const l of limiters) l.close()
  const keys = await shared.keys(`${RUN_PREFIX}*`)
  if (keys.length > 0) await shared.del(...keys)
  for (const c of clients) c.disconnect()
})

describe('account windows on Redis', () => {
  it('the burst window refuses the 6th request within a second for standard', async () => {
    const l = limiter({ redis: await connected(redisClient()) })
    const ds = await times(6, () => l.consume(request()))
    expect(ds.slice(0, 5).map((d) => d.allowed)).toEqual([true, true, true, true, true])
    expect(ds.slice(0, 5).map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0])
    const refused = ds[5]!
    expect(refused).toMatchObject({ allowed: false, limit: 5, remaining: 0, windowSec: 1, scope: 'account' })
    expect(refused.retryAfterSec).toBe(1)
    expect(l.backend()).toBe('redis')
  })

  it('the burst window refuses the 21st request within a second for premium', async () => {
    const l = limiter({ redis: await connected(redisClient()) })
    const ds = await times(21, () => l.consume(request({ tier: 'premium' })))
    expect(ds.filter((d) => d.allowed)).toHaveLength(20)
    expect(ds[19]).toMatchObject({ allowed: true, limit: 20, remaining: 0 })
    expect(ds[20]).toMatchObject({ allowed: false, limit: 20, windowSec: 1 })
  })

  it('the minute window refuses the 61st request', async () => {
    // The burst is raised out of the way so that 61 requests fit in well under a second.
    const cfg = config()
    cfg.tiers.standard = { perMinute: 60, perSecond: 1000 }
    const l = limiter({ redis: await connected(redisClient()), config: cfg })
    const ds = await times(61, () => l.consume(request()))
    expect(ds.filter((d) => d.allowed)).toHaveLength(60)
    expect(ds[59]).toMatchObject({ allowed: true, limit: 60, remaining: 0, windowSec: 60 })
    const refused = ds[60]!
    expect(refused).toMatchObject({ allowed: false, limit: 60, windowSec: 60, scope: 'account' })
    expect(refused.retryAfterSec).toBeGreaterThanOrEqual(58)
    expect(refused.retryAfterSec).toBeLessThanOrEqual(60)
  })

  it('burst refusals do not use up the minute budget, and the minute window refuses once it is spent', async () => {
    const cfg = config()
    cfg.tiers.standard = { perMinute: 8, perSecond: 5 }
    const l = limiter({ redis: await connected(redisClient()), config: cfg })
    const first = await times(7, () => l.consume(request()))
    expect(first.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false])
    // After 5 admitted the burst window (0 left) is tighter than the minute window (3 left).
    expect(first[4]).toMatchObject({ limit: 5, remaining: 0, windowSec: 1 })
    expect(first[6]).toMatchObject({ limit: 5, windowSec: 1 })

    await sleep(1_100)
    const second = await times(4, () => l.consume(request()))
    // Only the 5 admitted requests counted in the minute window, so 3 more fit.
    expect(second.map((d) => d.allowed)).toEqual([true, true, true, false])
    expect(second[0]).toMatchObject({ limit: 8, remaining: 2, windowSec: 60 })
    expect(second[3]).toMatchObject({ allowed: false, limit: 8, windowSec: 60 })
    expect(second[3]!.retryAfterSec).toBeGreaterThan(50)
  })

  it('accounts are counted apart', async () => {
    const l = limiter({ redis: await connected(redisClient()) })
    await times(5, () => l.consume(request({ accountId: 'acct_a' })))
    expect((await l.consume(request({ accountId: 'acct_a' }))).allowed).toBe(false)
    expect((await l.consume(request({ accountId: 'acct_b' }))).allowed).toBe(true)
  })

  it('counts one account across its API keys', async () => {
    const l = limiter({ redis: await connected(redisClient()) })
    const ds = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => l.consume(request({ keyId: `key_${i}` }))))
    expect(ds.filter((d) => d.allowed)).toHaveLength(5)
  })

  it('remaining counts down, and the reset moves forward after the window', async () => {
    const l = limiter({ redis: await connected(redisClient()) })
    const before = Date.now()
    const ds = await times(3, () => l.consume(request()))
    expect(ds.map((d) => d.remaining)).toEqual([4, 3, 2])
    const reset = ds[0]!.resetSec
    expect(reset).toBeGreaterThanOrEqual(Math.floor(before / 1000))
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1)
    for (const d of ds) expect(Math.abs(d.resetSec - reset)).toBeLessThanOrEqual(1)

    await sleep(1_100)
    const next = await l.consume(request())
    expect(next).toMatchObject({ allowed: true, limit: 5, remaining: 4 })
    expect(next.resetSec).toBeGreaterThan(reset)
  })

  it('reports the reset in the injected clock', async () => {
    const nowMs = 1_700_000_000_000
    const l = limiter({ redis: await connected(redisClient()), now: () => nowMs })
    const d = await l.consume(request())
    // The burst window has at most one second left, so it ends in the next whole second.
    expect(d).toMatchObject({ limit: 5, remaining: 4, resetSec: 1_700_000_001 })
  })
})

describe('per-key endpoint limits', () => {
  const cfg = (): RateLimitConfig => {
    const c = config({ endpoints: [{ method: 'GET', route: '/api/v2/transaction', perMinute: 3 }] })
    c.tiers.standard = { perMinute: 10, perSecond: 100 }
    return c
  }
  const list = (keyId = 'key_1', method = 'GET') => request({ keyId, method, route: '/api/v2/transaction' })

  it('apply on top of the account windows, per key and only to their route', async () => {
    const l = limiter({ redis: await connected(redisClient()), config: cfg() })
    const ds = await times(4, () => l.consume(list()))
    expect(ds.map((d) => d.allowed)).toEqual([true, true, true, false])
    expect(ds[0]).toMatchObject({ limit: 3, remaining: 2, scope: 'api-key-endpoint', windowSec: 60 })
    expect(ds[3]).toMatchObject({ allowed: false, limit: 3, scope: 'api-key-endpoint' })

    // Another route is not endpoint-limited; the refused request was not counted for the account.
    const other = await l.consume(request({ route: '/api/v2/transaction/:txnId' }))
    expect(other).toMatchObject({ allowed: true, limit: 10, remaining: 6, scope: 'account' })
    // The same route with another method is not the limited endpoint.
    expect(await l.consume(list('key_1', 'POST'))).toMatchObject({ allowed: true, scope: 'account' })
    // Another key of the same account has its own endpoint budget; the method matches in any case.
    expect(await l.consume(list('key_2', 'get'))).toMatchObject({
      allowed: true,
      limit: 3,
      remaining: 2,
      scope: 'api-key-endpoint',
    })
  })

  it('the account windows still bind requests to a limited endpoint', async () => {
    const c = cfg()
    c.tiers.standard = { perMinute: 10, perSecond: 2 }
    const l = limiter({ redis: await connected(redisClient()), config: c })
    const ds = await times(3, () => l.consume(list()))
    expect(ds.map((d) => d.allowed)).toEqual([true, true, false])
    expect(ds[2]).toMatchObject({ limit: 2, scope: 'account', windowSec: 1 })
  })

  it('applies the default per-key limit of GET /api/v2/transaction (30 per minute)', async () => {
    const c = config()
    c.tiers.standard = { perMinute: 1000, perSecond: 1000 }
    const l = limiter({ redis: await connected(redisClient()), config: c })
    const ds = await times(31, () => l.consume(list()))
    expect(ds.filter((d) => d.allowed)).toHaveLength(30)
    expect(ds[30]).toMatchObject({ allowed: false, limit: 30, scope: 'api-key-endpoint' })
  })
})

describe('counting across instances', () => {
  it('two limiters sharing one Redis share one account limit', async () => {
    const keyPrefix = uniquePrefix()
    const a = limiter({ redis: await connected(redisClient()), keyPrefix })
    const b = limiter({ redis: await connected(redisClient()), keyPrefix })
    const ds: Decision[] = []
    for (let i = 0; i < 5; i++) ds.push(await (i % 2 === 0 ? a : b).consume(request()))
    expect(ds.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0])
    expect((await b.consume(request())).allowed).toBe(false)
    expect((await a.consume(request())).allowed).toBe(false)
  })

  it('concurrent requests through two limiters admit exactly the limit', async () => {
    const keyPrefix = uniquePrefix()
    const a = limiter({ redis: await connected(redisClient()), keyPrefix })
    const b = limiter({ redis: await connected(redisClient()), keyPrefix })
    const ds = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).consume(request({ tier: 'standard' }))),
    )
    expect(ds.filter((d) => d.allowed)).toHaveLength(5)
  })

  it('two limiters in memory count apart', async () => {
    const a = limiter({})
    const b = limiter({})
    expect((await times(5, () => a.consume(request()))).every((d) => d.allowed)).toBe(true)
    expect((await times(5, () => b.consume(request()))).every((d) => d.allowed)).toBe(true)
    expect((await a.consume(request())).allowed).toBe(false)
    expect(a.backend()).toBe('memory')
  })
})

describe('when Redis is unreachable', () => {
  it('answers from the in-memory insurance with the same limits and reports memory', async () => {
    const log = recordingLog()
    const changes: RateLimitBackend[] = []
    const down = redisClient(1, { lazyConnect: true })
    const l = limiter({ redis: down, log, changes })
    const started = Date.now()
    const ds = await times(8, () => l.consume(request()))
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(ds.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false, false])
    expect(ds[5]).toMatchObject({ limit: 5, windowSec: 1 })
    expect(l.backend()).toBe('memory')
    expect(changes).toEqual(['memory'])
    // One warning for the outage, not one per request.
    expect(log.warns).toHaveLength(1)
    expect(log.warns[0]!.msg).toMatch(/Redis unavailable/)
    expect((await l.consumeAnonymous('198.51.100.7')).allowed).toBe(true)
    expect(log.warns).toHaveLength(1)
  })

  it('falls back during an outage and returns to Redis when it answers again', async () => {
    const port = await freePort()
    let server = await startRedis(port)
    try {
      const log = recordingLog()
      const changes: RateLimitBackend[] = []
      const client = await connected(redisClient(port, { retryStrategy: () => 50 }))
      const l = limiter({ redis: client, log, changes })

      expect((await l.consume(request())).allowed).toBe(true)
      expect(l.backend()).toBe('redis')
      expect((await client.keys('*')).length).toBeGreaterThan(0)

      await stopRedis(server)
      await until('the client to notice the outage', () => client.status !== 'ready')
      const during = await times(3, () => l.consume(request({ accountId: 'acct_outage' })))
      expect(during.every((d) => d.allowed)).toBe(true)
      expect(l.backend()).toBe('memory')
      expect(log.warns).toHaveLength(1)

      server = await startRedis(port)
      await until('the client to reconnect', () => client.status === 'ready')
      expect((await l.consume(request({ accountId: 'acct_back' }))).allowed).toBe(true)
      expect(l.backend()).toBe('redis')
      expect(changes).toEqual(['memory', 'redis'])
      expect(log.infos).toHaveLength(1)
      expect(log.warns).toHaveLength(1)
      // The counter is back in the shared store.
      expect(await client.keys('*acct_back')).not.toHaveLength(0)
    } finally {
      await stopRedis(server)
    }
  })
})

describe('unauthenticated requests', () => {
  it('are limited per client address', async () => {
    const l = limiter({
      redis: await connected(redisClient()),
      config: config({ unauthenticatedPerMinute: 3 }),
    })
    const ds = await times(4, () => l.consumeAnonymous('203.0.113.5'))
    expect(ds.map((d) => d.allowed)).toEqual([true, true, true, false])
    expect(ds[3]).toMatchObject({ limit: 3, scope: 'client-address', windowSec: 60 })
    expect((await l.consumeAnonymous('2001:db8::1')).allowed).toBe(true)
  })

  it.each([
    ['Redis', true],
    ['memory', false],
  ])('can be read without counting (%s)', async (_name, useRedis) => {
    const l = limiter({
      redis: useRedis ? await connected(redisClient()) : undefined,
      config: config({ unauthenticatedPerMinute: 3 }),
    })
    const untouched = await l.peekAnonymous('203.0.113.6')
    expect(untouched).toMatchObject({ allowed: true, limit: 3, remaining: 3, scope: 'client-address' })
    expect((await l.peekAnonymous('203.0.113.6')).remaining).toBe(3)
    await l.consumeAnonymous('203.0.113.6')
    await l.consumeAnonymous('203.0.113.6')
    expect(await l.peekAnonymous('203.0.113.6')).toMatchObject({ allowed: true, remaining: 1 })
    await l.consumeAnonymous('203.0.113.6')
    const spent = await l.peekAnonymous('203.0.113.6')
    expect(spent).toMatchObject({ allowed: false, remaining: 0 })
    expect(spent.retryAfterSec).toBeGreaterThanOrEqual(1)
    // Reading does not count: the window stays where the three failures left it.
    await l.consumeAnonymous('203.0.113.6')
    expect((await l.peekAnonymous('203.0.113.6')).remaining).toBe(0)
    expect((await l.peekAnonymous('203.0.113.99')).remaining).toBe(3)
  })
})

describe('switched off', () => {
  it('admits everything and writes no counters', async () => {
    const keyPrefix = uniquePrefix()
    const l = limiter({
      redis: await connected(redisClient()),
      config: config({ enabled: false }),
      keyPrefix,
    })
    const ds = await times(20, () => l.consume(request()))
    expect(ds.every((d) => d.allowed && d.limit === 60 && d.remaining === 60)).toBe(true)
    expect((await times(40, () => l.consumeAnonymous('203.0.113.9'))).every((d) => d.allowed)).toBe(true)
    expect(await shared.keys(`${keyPrefix}*`)).toEqual([])
  })
})

describe('headers and the 429 body', () => {
  it('carry the tightest window over HTTP', async () => {
    const c = config({ endpoints: [{ method: 'GET', route: '/api/v2/transaction', perMinute: 2 }] })
    const l = limiter({ redis: await connected(redisClient()), config: c })
    const app = Fastify()
    app.get('/api/v2/transaction', async (req, reply) => {
      const d = await l.consume(request({ method: req.method, route: req.routeOptions.url ?? '' }))
      applyRateLimitHeaders(reply, d)
      if (!d.allowed) return reply.code(429).send(rateLimitErrorBody(d))
      return { data: [] }
    })
    try {
      const first = await app.inject({ method: 'GET', url: '/api/v2/transaction?page=1' })
      expect(first.statusCode).toBe(200)
      expect(first.headers['x-ratelimit-limit']).toBe('2')
      expect(first.headers['x-ratelimit-remaining']).toBe('1')
      const reset = Number(first.headers['x-ratelimit-reset'])
      expect(reset).toBeGreaterThan(Date.now() / 1000 + 55)
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60)
      expect(first.headers['retry-after']).toBeUndefined()

      await app.inject({ method: 'GET', url: '/api/v2/transaction' })
      const refused = await app.inject({ method: 'GET', url: '/api/v2/transaction' })
      expect(refused.statusCode).toBe(429)
      expect(refused.headers['x-ratelimit-remaining']).toBe('0')
      const retryAfter = Number(refused.headers['retry-after'])
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true)
      const body = refused.json() as { error: string; message: string }
      expect(body.error).toBe('rate_limit_exceeded')
      expect(body.message).toBe(
        `Rate limit exceeded: 2 requests per minute for this endpoint and API key; retry after ${retryAfter} seconds`,
      )
    } finally {
      await app.close()
    }
  })

  it('words the message for one second and for an address', () => {
    const d: Decision = {
      allowed: false,
      limit: 30,
      remaining: 0,
      resetSec: 1_700_000_001,
      retryAfterSec: 1,
      windowSec: 60,
      scope: 'client-address',
    }
    expect(rateLimitErrorBody(d)).toEqual({
      error: 'rate_limit_exceeded',
      message:
        'Rate limit exceeded: 30 requests per minute for unauthenticated requests from this address; retry after 1 second',
    })
    expect(rateLimitErrorBody({ ...d, limit: 5, windowSec: 1, scope: 'account' }).message).toBe(
      'Rate limit exceeded: 5 requests per second for this account; retry after 1 second',
    )
  })
})

describe.each([
  ['Redis', true],
  ['memory', false],
])('account-name inquiry window in %s', (_name, withRedis) => {
  it('admits the hour’s number per account, then refuses for the rest of the hour', async () => {
    const nowMs = 1_800_000_000_000
    const l = limiter({
      redis: withRedis ? await connected(redisClient()) : undefined,
      config: config({ accountNamePerHour: 2 }),
      now: () => nowMs,
    })
    // The account's other windows are counters of their own.
    await times(3, () => l.consume(request({ accountId: 'acct_a' })))
    const ds = await times(3, () => l.consumeAccountName('acct_a'))
    expect(ds.map((d) => [d.allowed, d.remaining, d.limit, d.windowSec, d.scope])).toEqual([
      [true, 1, 2, 3600, 'account-name'],
      [true, 0, 2, 3600, 'account-name'],
      [false, 0, 2, 3600, 'account-name'],
    ])
    expect(ds[2]!.retryAfterSec).toBeGreaterThan(3590)
    expect(rateLimitErrorBody(ds[2]!).message).toMatch(
      /^Rate limit exceeded: 2 requests per hour for bank account-name inquiries of this account; retry after 3\d{3} seconds$/,
    )
    // Another account has a window of its own.
    expect((await l.consumeAccountName('acct_b')).remaining).toBe(1)
  })
})

describe('configuration', () => {
  it('counts an IPv6 client by its /64 and an IPv4 one (mapped or not) by its address (issue 28.9)', () => {
    expect(clientNet('203.0.113.7')).toBe('203.0.113.7')
    expect(clientNet('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(clientNet('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(clientNet('2001:0DB8:0001:0002:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64')
    expect(clientNet('2001:db8::5')).toBe('2001:db8:0:0::/64')
    expect(clientNet('::1')).toBe('0:0:0:0::/64')
  })

  it('defaults to the numbers of the specification', () => {
    expect(rateLimitConfigFromEnv({})).toEqual({
      enabled: true,
      tiers: { standard: { perMinute: 60, perSecond: 5 }, premium: { perMinute: 300, perSecond: 20 } },
      endpoints: [
        { method: 'GET', route: '/api/v2/transaction/:txnId', perMinute: 60 },
        { method: 'GET', route: '/api/v2/transaction', perMinute: 30 },
        { method: 'POST', route: '/api/v2/webhook', perMinute: 10 },
      ],
      unauthenticatedPerMinute: 30,
      operatorRefusalsPerMinute: 60,
      lightningAddress: { perMinute: 60, perClientPerMinute: 20, minSats: 1n, maxSats: 10_000_000n },
      accountNamePerHour: 30,
    })
  })

  it('reads every variable', () => {
    const c = rateLimitConfigFromEnv({
      RATE_LIMITS_ENABLED: 'false',
      RATE_LIMIT_STANDARD_PER_MINUTE: '61',
      RATE_LIMIT_STANDARD_PER_SECOND: '6',
      RATE_LIMIT_PREMIUM_PER_MINUTE: '301',
      RATE_LIMIT_PREMIUM_PER_SECOND: '21',
      RATE_LIMIT_TXN_GET_PER_MINUTE: '62',
      RATE_LIMIT_TXN_LIST_PER_MINUTE: '31',
      RATE_LIMIT_WEBHOOK_CREATE_PER_MINUTE: '11',
      RATE_LIMIT_UNAUTH_PER_MINUTE: '32',
      RATE_LIMIT_OPERATOR_PER_MINUTE: '33',
      RATE_LIMIT_LN_ADDRESS_PER_MINUTE: '12',
      RATE_LIMIT_LN_ADDRESS_PER_CLIENT_PER_MINUTE: '4',
      RATE_LIMIT_LN_ADDRESS_MIN_SATS: '10',
      RATE_LIMIT_LN_ADDRESS_MAX_SATS: '2000000',
      RATE_LIMIT_ACCOUNT_NAME_PER_HOUR: '7',
    })
    expect(c).toEqual({
      enabled: false,
      tiers: { standard: { perMinute: 61, perSecond: 6 }, premium: { perMinute: 301, perSecond: 21 } },
      endpoints: [
        { method: 'GET', route: '/api/v2/transaction/:txnId', perMinute: 62 },
        { method: 'GET', route: '/api/v2/transaction', perMinute: 31 },
        { method: 'POST', route: '/api/v2/webhook', perMinute: 11 },
      ],
      unauthenticatedPerMinute: 32,
      operatorRefusalsPerMinute: 33,
      lightningAddress: { perMinute: 12, perClientPerMinute: 4, minSats: 10n, maxSats: 2_000_000n },
      accountNamePerHour: 7,
    })
    // The defaults are not changed by reading.
    expect(DEFAULT_RATE_LIMITS.tiers.standard.perMinute).toBe(60)
    expect(rateLimitConfigFromEnv({ RATE_LIMITS_ENABLED: '1' }).enabled).toBe(true)
    expect(rateLimitConfigFromEnv({ RATE_LIMITS_ENABLED: '0' }).enabled).toBe(false)
  })

  it('refuses Lightning Address amounts whose minimum is above the maximum, or not whole sats', () => {
    expect(() =>
      rateLimitConfigFromEnv({
        RATE_LIMIT_LN_ADDRESS_MIN_SATS: '5000',
        RATE_LIMIT_LN_ADDRESS_MAX_SATS: '4999',
      }),
    ).not.toThrow()
    expect(() =>
      createRateLimiter({
        config: rateLimitConfigFromEnv({
          RATE_LIMIT_LN_ADDRESS_MIN_SATS: '5000',
          RATE_LIMIT_LN_ADDRESS_MAX_SATS: '4999',
        }),
        log: { warn() {}, info() {} },
      }),
    ).toThrow(/minimum \(5000\) <= maximum \(4999\)/)
    expect(() => rateLimitConfigFromEnv({ RATE_LIMIT_LN_ADDRESS_MAX_SATS: '0.5' })).toThrow(
      /^RATE_LIMIT_LN_ADDRESS_MAX_SATS: expected a whole number of sats/,
    )
  })

  it.each(['0', '-1', '1.5', 'ten', ' 5', '1e3', '2000000'])('rejects %j with the variable named', (bad) => {
    expect(() => rateLimitConfigFromEnv({ RATE_LIMIT_PREMIUM_PER_SECOND: bad })).toThrow(
      /^RATE_LIMIT_PREMIUM_PER_SECOND: expected a whole number from 1 to 1000000/,
    )
  })

  it.each(['0', '-3', '2.5', 'many', '1000001'])('rejects %j account-name inquiries per hour', (bad) => {
    expect(() => rateLimitConfigFromEnv({ RATE_LIMIT_ACCOUNT_NAME_PER_HOUR: bad })).toThrow(
      /^RATE_LIMIT_ACCOUNT_NAME_PER_HOUR: expected a whole number from 1 to 1000000/,
    )
    expect(rateLimitConfigFromEnv({ RATE_LIMIT_ACCOUNT_NAME_PER_HOUR: '' }).accountNamePerHour).toBe(30)
  })

  it('rejects an unclear switch', () => {
    expect(() => rateLimitConfigFromEnv({ RATE_LIMITS_ENABLED: 'yes' })).toThrow(/^RATE_LIMITS_ENABLED:/)
  })

  it('createRateLimiter rejects a bad configuration', () => {
    const zero = config()
    zero.tiers.standard = { perMinute: 60, perSecond: 0 }
    expect(() => createRateLimiter({ config: zero, log: recordingLog() })).toThrow(/standard per second/)
    expect(() =>
      createRateLimiter({ config: config({ accountNamePerHour: 0 }), log: recordingLog() }),
    ).toThrow(/account-name inquiries per hour/)
    const twice = config({
      endpoints: [
        { method: 'GET', route: '/api/v2/transaction', perMinute: 3 },
        { method: 'get', route: '/api/v2/transaction', perMinute: 4 },
      ],
    })
    expect(() => createRateLimiter({ config: twice, log: recordingLog() })).toThrow(/listed twice/)
  })
})

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** A throw-away Redis on loopback for the outage test; nothing is persisted. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  await new Promise<void>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited with ${code}: ${out}`))
    })
  })
  return child
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}
