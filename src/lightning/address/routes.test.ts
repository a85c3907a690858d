import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../../test/helpers/harness.js'

/** The account's Lightning Address: claim, change, read, release, and who may do it. */
describe('Lightning Address: PUT, GET and DELETE /api/v2/account/{accountId}/lightning-address', () => {
  let h: Harness
  let alice: TestAccount
  let bob: TestAccount
  let limited: Harness
  beforeAll(async () => {
    h = await createHarness()
    alice = await h.createAccount({ name: 'Alice' })
    bob = await h.createAccount({ name: 'Bob' })
    // The same database, with the per-address request limit switched on and small (counted in
    // Redis when the suite runs with one, under a prefix of its own).
    const redis: Record<string, string> = process.env.REDIS_URL
      ? {
          REDIS_URL: process.env.REDIS_URL,
          RATE_LIMIT_REDIS_PREFIX: `svcpay:rl:test:${randomBytes(6).toString('hex')}`,
        }
      : {}
    limited = await createHarness(
      { RATE_LIMITS_ENABLED: 'true', RATE_LIMIT_LN_ADDRESS_PER_MINUTE: '3', ...redis },
      { shareDbWith: h },
    )
  })
  afterAll(async () => {
    await limited?.close()
    await h?.close()
  })

  const path = (a: TestAccount) => `/api/v2/account/${a.accountId}/lightning-address`
  const put = (a: TestAccount, body: unknown, token = a.token) => h.api('PUT', path(a), token, body)

  it('claims a name, answers the same to the same request, and changes the credit currency', async () => {
    const first = await put(alice, { username: 'alice.shop', creditCcy: 'BTC' })
    expect(first.status).toBe(200)
    // PUBLIC_BASE_URL is http://localhost:8080 here: LUD-16 has no port, so no address is
    // advertised (issue 29.8), only the LNURL of the well-known URL.
    expect(first.body.data).toMatchObject({
      username: 'alice.shop',
      address: null,
      lnurl: expect.stringMatching(/^LNURL1[0-9A-Z]+$/),
      accountId: alice.accountId,
      creditCcy: 'BTC',
      payPageUrl: 'http://localhost:8080/pay/ln/alice.shop',
    })
    const again = await put(alice, { username: 'alice.shop', creditCcy: 'BTC' })
    expect(again.body).toEqual(first.body)
    const usdt = await put(alice, { username: 'alice.shop', creditCcy: 'USDT' })
    expect(usdt.status).toBe(200)
    expect(usdt.body.data.creditCcy).toBe('USDT')
    expect((await h.api('GET', path(alice), alice.token)).body).toEqual(usdt.body)
  })

  it('refuses malformed and reserved names, a name another account holds, and a currency without a wallet', async () => {
    // Dot names (issue 28.12): `.` and `..` are resolved away by every URL parser, and wallets read
    // the name as an e-mail local part, with no dot at either end and no two in a row.
    for (const username of [
      'Alice',
      'al ice',
      'al@ice',
      'ålice',
      '',
      'a'.repeat(65),
      '.',
      '..',
      '.alice',
      'alice.',
      'al..ice',
    ]) {
      const r = await put(bob, { username, creditCcy: 'BTC' })
      expect(r.status, username).toBe(400)
      expect(r.body.error).toBe('invalid_request')
    }
    for (const username of ['admin', 'root', 'support', 'postmaster', 'svcpay', 'www', 'api', 'help']) {
      const r = await put(bob, { username, creditCcy: 'BTC' })
      expect(r.status, username).toBe(400)
      expect(r.body.details).toEqual([{ field: 'username', issue: 'is reserved' }])
    }
    const taken = await put(bob, { username: 'alice.shop', creditCcy: 'BTC' })
    expect(taken.status).toBe(409)
    expect(taken.body).toMatchObject({ error: 'invalid_state', details: [{ field: 'username' }] })
    const noWallet = await put(bob, { username: 'bob', creditCcy: 'ETH' })
    expect(noWallet.status).toBe(400)
    expect(noWallet.body.error).toBe('unsupported_currency_pair')
    expect((await h.api('GET', path(bob), bob.token)).status).toBe(404)
  })

  it("refuses another account's token on every method", async () => {
    expect((await put(alice, { username: 'mallory', creditCcy: 'BTC' }, bob.token)).status).toBe(401)
    expect((await h.api('GET', path(alice), bob.token)).status).toBe(401)
    expect((await h.api('DELETE', path(alice), bob.token)).status).toBe(401)
    expect((await h.api('GET', path(alice), undefined)).status).toBe(401)
    expect((await h.api('GET', path(alice), alice.token)).body.data.username).toBe('alice.shop')
  })

  it('a new name gives up the old one; DELETE frees it; GET and DELETE then answer 404', async () => {
    expect((await put(bob, { username: 'bob', creditCcy: 'BTC' })).status).toBe(200)
    expect((await put(bob, { username: 'bobby', creditCcy: 'BTC' })).status).toBe(200)
    const wellKnown = async (name: string) =>
      JSON.parse((await h.app.inject({ method: 'GET', url: `/.well-known/lnurlp/${name}` })).body)
    expect((await wellKnown('bob')).status).toBe('ERROR')
    expect((await wellKnown('bobby')).tag).toBe('payRequest')
    const del = await h.api('DELETE', path(bob), bob.token)
    expect(del.status).toBe(204)
    expect((await wellKnown('bobby')).status).toBe('ERROR')
    expect((await h.api('GET', path(bob), bob.token)).status).toBe(404)
    expect((await h.api('DELETE', path(bob), bob.token)).status).toBe(404)
    // The freed name can be claimed by another account.
    expect((await put(alice, { username: 'bobby', creditCcy: 'BTC' })).status).toBe(200)
  })

  it('limits LNURL requests per address: the next one is a 429 in the LNURL shape with Retry-After', async () => {
    await put(alice, { username: 'limited', creditCcy: 'BTC' })
    const call = (url: string) => limited.app.inject({ method: 'GET', url })
    const answers = [
      await call('/.well-known/lnurlp/limited'),
      await call('/lnurlp/limited/callback?amount=1000'),
      await call('/.well-known/lnurlp/limited'),
    ]
    for (const a of answers) expect(a.statusCode).toBe(200)
    expect(answers[2]!.headers['x-ratelimit-remaining']).toBe('0')
    const refused = await call('/lnurlp/limited/callback?amount=1000')
    expect(refused.statusCode).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    const body = JSON.parse(refused.body)
    expect(body).toEqual({ status: 'ERROR', reason: expect.stringMatching(/for this Lightning Address/) })
    expect(limited.c.rateLimiter.backend()).toBe(process.env.REDIS_URL ? 'redis' : 'memory')
    // Another address has its own window.
    await put(bob, { username: 'other', creditCcy: 'BTC' })
    expect((await call('/.well-known/lnurlp/other')).statusCode).toBe(200)
  })
  it('a claim refused because another account holds the name keeps the current address (issue 29.1)', async () => {
    const carol = await h.createAccount({ name: 'Carol' })
    const dave = await h.createAccount({ name: 'Dave' })
    expect((await put(carol, { username: 'shop2', creditCcy: 'BTC' })).status).toBe(200)
    expect((await put(dave, { username: 'held-by-dave', creditCcy: 'BTC' })).status).toBe(200)
    const refused = await put(carol, { username: 'held-by-dave', creditCcy: 'BTC' })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: 'invalid_state', details: [{ field: 'username' }] })
    // Nothing changed: Carol still holds shop2, it still resolves, and nobody else can take it.
    const mine = await h.api('GET', path(carol), carol.token)
    expect(mine.status).toBe(200)
    expect(mine.body.data.username).toBe('shop2')
    const wellKnown = JSON.parse(
      (await h.app.inject({ method: 'GET', url: '/.well-known/lnurlp/shop2' })).body,
    )
    expect(wellKnown.tag).toBe('payRequest')
    expect((await put(dave, { username: 'shop2', creditCcy: 'BTC' })).status).toBe(409)
    expect((await h.api('GET', path(dave), dave.token)).body.data.username).toBe('held-by-dave')
  })

  it('limits LNURL requests per client too: one client cannot spend a name, nor probe many (issue 28.9)', async () => {
    const redis: Record<string, string> = process.env.REDIS_URL
      ? {
          REDIS_URL: process.env.REDIS_URL,
          RATE_LIMIT_REDIS_PREFIX: `svcpay:rl:test:${randomBytes(6).toString('hex')}`,
        }
      : {}
    const perClient = await createHarness(
      {
        RATE_LIMITS_ENABLED: 'true',
        RATE_LIMIT_LN_ADDRESS_PER_MINUTE: '5',
        RATE_LIMIT_LN_ADDRESS_PER_CLIENT_PER_MINUTE: '3',
        ...redis,
      },
      { shareDbWith: h },
    )
    try {
      const carol = await h.createAccount({ name: 'Carol' })
      await put(carol, { username: 'popular', creditCcy: 'BTC' })
      const from = (ip: string, url: string) =>
        perClient.app.inject({ method: 'GET', url, remoteAddress: ip })
      // One client hammers the address: refused after its own 3, and its refusals do not count
      // against the address.
      const hammer = []
      for (let i = 0; i < 10; i++)
        hammer.push((await from('203.0.113.7', '/.well-known/lnurlp/popular')).statusCode)
      expect(hammer.slice(0, 3)).toEqual([200, 200, 200])
      expect(hammer.slice(3).every((s) => s === 429)).toBe(true)
      const refused = await from('203.0.113.7', '/lnurlp/popular/callback?amount=1000')
      expect(JSON.parse(refused.body).reason).toMatch(/from this client/)
      // A real payer elsewhere still gets the address.
      const payer = await from('198.51.100.20', '/.well-known/lnurlp/popular')
      expect(payer.statusCode).toBe(200)
      expect(JSON.parse(payer.body).tag).toBe('payRequest')
      // Probing unclaimed names counts against the client: the fourth probe is refused.
      const probes = []
      for (const name of ['nobody1', 'nobody2', 'nobody3', 'nobody4', 'nobody5'])
        probes.push((await from('192.0.2.50', `/.well-known/lnurlp/${name}`)).statusCode)
      expect(probes).toEqual([200, 200, 200, 429, 429])
      // An IPv6 client is one /64: another address of the same network shares its window.
      for (let i = 1; i <= 3; i++)
        expect((await from(`2001:db8:1:2::${i}`, '/.well-known/lnurlp/nobody')).statusCode).toBe(200)
      expect((await from('2001:db8:1:2::ff', '/.well-known/lnurlp/nobody')).statusCode).toBe(429)
    } finally {
      await perClient.close()
    }
  })
})
