import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from './helpers/harness.js'

/** Rate limits through the HTTP API, with counters in the real Redis shared by two instances. */
describe('rate limits across instances', () => {
  let one: Harness
  let two: Harness
  let acct: TestAccount
  // A prefix of its own, so that no other run's counters share these windows.
  const prefixEnv = {
    RATE_LIMITS_ENABLED: 'true',
    REDIS_URL: 'redis://127.0.0.1:6379',
    RATE_LIMIT_REDIS_PREFIX: `svcpay:rl:test:${randomBytes(6).toString('hex')}`,
  }

  beforeAll(async () => {
    one = await createHarness(prefixEnv)
    two = await createHarness(prefixEnv, { shareDbWith: one })
    acct = await one.createAccount({ name: `rl-${randomBytes(4).toString('hex')}` })
  })
  afterAll(async () => {
    await two?.close()
    await one?.close()
  })

  const wallets = (h: Harness, token = acct.token) =>
    h.api('GET', `/api/v2/account/${acct.accountId}/wallet/`, token)

  it('shares the burst window of one account between two instances and refuses the sixth request in a second', async () => {
    // Let the burst window opened by the token request in beforeAll run out first.
    await new Promise((r) => setTimeout(r, 1100))
    const results = []
    for (let i = 0; i < 6; i++) results.push(await wallets(i % 2 ? two : one))
    expect(results.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    expect(results[5]!.status).toBe(429)
    expect(results[5]!.body).toEqual({
      error: 'rate_limit_exceeded',
      message: expect.stringMatching(/retry after/i),
    })
    expect(Number(results[5]!.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    const remaining = results.slice(0, 5).map((r) => Number(r.headers['x-ratelimit-remaining']))
    expect(remaining).toEqual([4, 3, 2, 1, 0])
    expect(Number(results[0]!.headers['x-ratelimit-limit'])).toBe(5)
    const reset = Number(results[0]!.headers['x-ratelimit-reset'])
    expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000))

    await new Promise((r) => setTimeout(r, 1100))
    const after = await wallets(two)
    expect(after.status).toBe(200)
    expect(Number(after.headers['x-ratelimit-reset'])).toBeGreaterThan(reset)
  })

  it('limits requests that fail authentication per client address', async () => {
    const statuses = []
    for (let i = 0; i < 35; i++) statuses.push((await wallets(one, 'not-a-token-' + i)).status)
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses.slice(30)).toContain(429)
  })
})

describe('rate limits when Redis is unreachable', () => {
  it('keeps answering on per-instance limits', async () => {
    const h = await createHarness({ RATE_LIMITS_ENABLED: 'true', REDIS_URL: 'redis://127.0.0.1:1' })
    try {
      const a = await h.createAccount()
      await new Promise((r) => setTimeout(r, 1100))
      const started = Date.now()
      const statuses = []
      for (let i = 0; i < 6; i++)
        statuses.push((await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).status)
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
      expect(Date.now() - started).toBeLessThan(3000)
      expect(h.c.rateLimiter.backend()).toBe('memory')
      const metrics = await h.app.inject({ method: 'GET', url: '/metrics' })
      expect(metrics.body).toMatch(/svcpay_rate_limit_backend_redis 0/)
    } finally {
      await h.close()
    }
  })
})
