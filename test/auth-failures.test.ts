import { createHmac, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from './helpers/harness.js'
import { operatorClient, OPERATOR_PASSWORD } from './admin/operator-client.js'
import { totp } from '../src/operators/totp.js'

/**
 * Requests that fail authentication are counted per client address and never in an account's
 * windows (contract section 8), and every answer carries the rate-limit headers. The limits run on
 * the engine of the run: Redis when REDIS_URL is set, in memory otherwise. Client addresses are set
 * per request through inject's `remoteAddress`.
 */

const ATTACKER = '203.0.113.66'
const CLIENT = '198.51.100.10'
const TOKEN_PATH = '/api/v2/authentication/token-signature'

function limitsEnv(): Record<string, string> {
  return {
    RATE_LIMITS_ENABLED: 'true',
    RATE_LIMIT_REDIS_PREFIX: `svcpay:rl:test:${randomBytes(6).toString('hex')}`,
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  }
}

const sign = (apiKey: string, apiSecret: string, body: Buffer | string): string =>
  createHmac('sha256', apiSecret)
    .update(Buffer.from(`${apiKey}&payload=`))
    .update(typeof body === 'string' ? Buffer.from(body) : body)
    .digest('hex')

const freshBody = (): string => JSON.stringify({ nonce: randomBytes(8).toString('hex') })

describe('authentication failures and the account windows', () => {
  let h: Harness
  let acct: TestAccount

  beforeAll(async () => {
    h = await createHarness(limitsEnv())
    acct = await h.createAccount({ name: `auth-fail-${randomBytes(3).toString('hex')}` })
  })
  afterAll(async () => h?.close())

  const tokenRequest = (from: string, headers: Record<string, string>, body: Buffer | string) =>
    h.app.inject({
      method: 'POST',
      url: TOKEN_PATH,
      remoteAddress: from,
      headers: { 'content-type': 'application/json', ...headers },
      payload: body,
    })
  const wallets = (from: string, token: string) =>
    h.app.inject({
      method: 'GET',
      url: `/api/v2/account/${acct.accountId}/wallet/`,
      remoteAddress: from,
      headers: { authorization: `Bearer ${token}` },
    })

  it('120 bad signatures and replays from one address leave the account its token requests and calls', async () => {
    const statuses: number[] = []
    const used = freshBody()
    const usedSignature = sign(acct.apiKey, acct.apiSecret, used)
    // The one genuine exchange whose signature the attacker then replays.
    expect(
      (await tokenRequest(CLIENT, { 'x-api-key': acct.apiKey, 'x-api-signature': usedSignature }, used))
        .statusCode,
    ).toBe(200)
    for (let i = 0; i < 120; i++) {
      const replay = i % 3 === 0
      const res = await tokenRequest(
        ATTACKER,
        {
          'x-api-key': acct.apiKey,
          'x-api-signature': replay ? usedSignature : randomBytes(32).toString('hex'),
        },
        replay ? used : freshBody(),
      )
      statuses.push(res.statusCode)
      expect(res.headers['x-ratelimit-limit']).toBeDefined()
    }
    // The address window (30 a minute) refuses the attacker; nothing else does.
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses.slice(30).every((s) => s === 429)).toBe(true)

    // The real client, elsewhere, still gets tokens and answers; the account's minute window only
    // counted its own requests (two exchanges and this call).
    await new Promise((r) => setTimeout(r, 1100))
    const body = freshBody()
    const token = await tokenRequest(
      CLIENT,
      { 'x-api-key': acct.apiKey, 'x-api-signature': sign(acct.apiKey, acct.apiSecret, body) },
      body,
    )
    expect(token.statusCode).toBe(200)
    const call = await wallets(CLIENT, token.json().accessToken)
    expect(call.statusCode).toBe(200)
    expect(Number(call.headers['x-ratelimit-limit'])).toBe(5)

    // Even a genuine signature from the spent address is refused until its window resets, so a
    // correct guess cannot be told from a wrong one.
    const late = freshBody()
    const fromAttacker = await tokenRequest(
      ATTACKER,
      { 'x-api-key': acct.apiKey, 'x-api-signature': sign(acct.apiKey, acct.apiSecret, late) },
      late,
    )
    expect(fromAttacker.statusCode).toBe(429)
    expect(fromAttacker.json()).toMatchObject({ error: 'rate_limit_exceeded' })
    expect(Number(fromAttacker.headers['retry-after'])).toBeGreaterThanOrEqual(1)
  })

  it('tampered tokens and unknown keys count per address, not in the account', async () => {
    const from = '203.0.113.77'
    const statuses: number[] = []
    for (let i = 0; i < 40; i++) {
      statuses.push((await wallets(from, `${acct.token.slice(0, -4)}AAAA`)).statusCode)
      statuses.push(
        (
          await tokenRequest(
            from,
            { 'x-api-key': `key_unknown${i}`, 'x-api-signature': 'ab'.repeat(32) },
            freshBody(),
          )
        ).statusCode,
      )
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(30)
    expect(statuses.filter((s) => s === 429)).toHaveLength(50)
    await new Promise((r) => setTimeout(r, 1100))
    expect((await wallets(CLIENT, acct.token)).statusCode).toBe(200)
  })

  it('a malformed token request counts against the address, not the account', async () => {
    const from = '203.0.113.88'
    for (let i = 0; i < 35; i++) {
      const res = await tokenRequest(
        from,
        { 'x-api-key': acct.apiKey, 'x-api-signature': sign(acct.apiKey, acct.apiSecret, '[1]') },
        '[1]',
      )
      expect(res.statusCode).toBe(i < 30 ? 400 : 429)
      expect(res.headers['x-ratelimit-limit']).toBe('30')
    }
    await new Promise((r) => setTimeout(r, 1100))
    expect((await wallets(CLIENT, acct.token)).statusCode).toBe(200)
  })
})

describe('behind a proxy (TRUST_PROXY=1)', () => {
  let h: Harness
  let acct: TestAccount
  beforeAll(async () => {
    h = await createHarness({ ...limitsEnv(), TRUST_PROXY: '1' })
    acct = await h.createAccount()
  })
  afterAll(async () => h?.close())

  it('counts failures against the forwarded client address, not the proxy or the account', async () => {
    // Every request arrives from the proxy (127.0.0.1); X-Forwarded-For names the client.
    const tokenRequest = (client: string, signature: string, body: string) =>
      h.app.inject({
        method: 'POST',
        url: TOKEN_PATH,
        headers: {
          'content-type': 'application/json',
          'x-forwarded-for': client,
          'x-api-key': acct.apiKey,
          'x-api-signature': signature,
        },
        payload: body,
      })
    const statuses: number[] = []
    for (let i = 0; i < 110; i++)
      statuses.push((await tokenRequest(ATTACKER, randomBytes(32).toString('hex'), freshBody())).statusCode)
    expect(statuses.filter((s) => s === 401)).toHaveLength(30)
    expect(statuses.filter((s) => s === 429)).toHaveLength(80)
    await new Promise((r) => setTimeout(r, 1100))
    const body = freshBody()
    const real = await tokenRequest(CLIENT, sign(acct.apiKey, acct.apiSecret, body), body)
    expect(real.statusCode).toBe(200)
    const call = await h.app.inject({
      method: 'GET',
      url: `/api/v2/account/${acct.accountId}/wallet/`,
      headers: { 'x-forwarded-for': CLIENT, authorization: `Bearer ${real.json().accessToken}` },
    })
    expect(call.statusCode).toBe(200)
  })

  it('counts what the client writes into X-Forwarded-For against the address the proxy saw', async () => {
    // The proxy appends the address it was connected from; whatever the client wrote comes before.
    const attacker = '203.0.113.121'
    const statuses: number[] = []
    for (let i = 0; i < 80; i++) {
      const res = await h.app.inject({
        method: 'GET',
        url: '/admin/accounts',
        headers: {
          'x-forwarded-for': `198.51.100.${i}, ${attacker}`,
          authorization: `Bearer adm_guess_${i}`,
        },
      })
      statuses.push(res.statusCode)
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses.slice(30).every((s) => s === 429)).toBe(true)
  })

  it('audits a sign-in under the address the proxy saw, not the one the client wrote', async () => {
    const client = operatorClient(h.app, h.adminToken)
    const op = await client.createOperator('viewer')
    const res = await h.app.inject({
      method: 'POST',
      url: '/admin/session',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '8.8.8.8, 10.0.0.1' },
      payload: JSON.stringify({
        email: op.email,
        password: OPERATOR_PASSWORD,
        code: totp(op.secret, Date.now() + 30_000),
      }),
    })
    expect(res.statusCode).toBe(200)
    const { rows } = await h.c.db.query(
      `SELECT client_ip FROM admin_audit WHERE action = 'operator.sign_in' AND operator_id = $1`,
      [op.id],
    )
    expect(rows.map((r) => r.client_ip)).toEqual(['10.0.0.1'])
  })
})

describe('behind proxies named by address (TRUST_PROXY=127.0.0.1,10.0.0.0/8)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ ...limitsEnv(), TRUST_PROXY: '127.0.0.1,10.0.0.0/8' })
  })
  afterAll(async () => h?.close())

  it('skips the named proxies, and believes no header from anyone else', async () => {
    const client = operatorClient(h.app, h.adminToken)
    const signIn = async (remoteAddress: string, forwarded: string) => {
      const op = await client.createOperator('viewer')
      const res = await h.app.inject({
        method: 'POST',
        url: '/admin/session',
        remoteAddress,
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwarded },
        payload: JSON.stringify({
          email: op.email,
          password: OPERATOR_PASSWORD,
          code: totp(op.secret, Date.now() + 30_000),
        }),
      })
      expect(res.statusCode).toBe(200)
      const { rows } = await h.c.db.query(
        `SELECT client_ip FROM admin_audit WHERE action = 'operator.sign_in' AND operator_id = $1`,
        [op.id],
      )
      return rows.map((r) => r.client_ip)
    }
    // Through two proxies of ours (10.0.0.1, then 127.0.0.1): the client is the address before them.
    expect(await signIn('127.0.0.1', '8.8.8.8, 10.0.0.1')).toEqual(['8.8.8.8'])
    // Straight from a client that is not a proxy: its header is ignored.
    expect(await signIn('203.0.113.9', '8.8.4.4')).toEqual(['203.0.113.9'])
  })
})

describe('rate-limit headers on every answer', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness(limitsEnv())
  })
  afterAll(async () => h?.close())

  const inject = (method: string, url: string, from: string, headers: Record<string, string> = {}) =>
    h.app.inject({ method: method as 'GET', url, remoteAddress: from, headers })

  it('on 404s of unknown routes and methods, counted per address', async () => {
    const from = '192.0.2.41'
    const unknownRoute = await inject('GET', '/api/v2/nothing-here', from)
    expect(unknownRoute.statusCode).toBe(404)
    expect(unknownRoute.headers['x-ratelimit-limit']).toBe('30')
    expect(unknownRoute.headers['x-ratelimit-remaining']).toBe('29')
    expect(Number(unknownRoute.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000)
    const unknownMethod = await inject('DELETE', '/api/v2/rate', from)
    expect(unknownMethod.statusCode).toBe(404)
    expect(unknownMethod.headers['x-ratelimit-remaining']).toBe('28')
  })

  it('on 401s of /admin/*, and failed admin tokens are limited per address', async () => {
    const from = '192.0.2.42'
    const statuses: number[] = []
    for (let i = 0; i < 33; i++) {
      const res = await inject('GET', '/admin/accounts', from, { authorization: `Bearer adm_guess_${i}` })
      statuses.push(res.statusCode)
      expect(res.headers['x-ratelimit-limit']).toBe('30')
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses.slice(30)).toEqual([429, 429, 429])
    // The right token from the spent address is refused too, so guessing gains nothing from it.
    const right = await inject('GET', '/admin/accounts', from, { authorization: `Bearer ${h.adminToken}` })
    expect(right.statusCode).toBe(429)
    // Another address is not affected, and its successes carry the headers without being counted.
    const other = await inject('GET', '/admin/accounts', '192.0.2.43', {
      authorization: `Bearer ${h.adminToken}`,
    })
    expect(other.statusCode).toBe(200)
    expect(other.headers['x-ratelimit-remaining']).toBe('30')
  })

  it('on the API reference, but not on the operational endpoints', async () => {
    const spec = await inject('GET', '/openapi.json', '192.0.2.44')
    expect(spec.statusCode).toBe(200)
    expect(spec.headers['x-ratelimit-limit']).toBeDefined()
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await inject('GET', path, '192.0.2.44')
      expect(res.statusCode, path).toBe(200)
      expect(res.headers['x-ratelimit-limit'], path).toBeUndefined()
    }
  })
})

describe('the token signature is checked over the body bytes', () => {
  let h: Harness
  let acct: TestAccount
  beforeAll(async () => {
    h = await createHarness()
    acct = await h.createAccount()
  })
  afterAll(async () => h?.close())

  // A JSON object whose string holds bytes that are not UTF-8 (a lone continuation byte and a
  // truncated sequence); decoding them gives U+FFFD.
  const bytes = Buffer.concat([
    Buffer.from('{"nonce":"'),
    Buffer.from([0x80, 0xe2, 0x82]),
    Buffer.from(randomBytes(4).toString('hex') + '"}'),
  ])
  const exchange = (signature: string, body: Buffer = bytes) =>
    h.app.inject({
      method: 'POST',
      url: TOKEN_PATH,
      headers: { 'content-type': 'application/json', 'x-api-key': acct.apiKey, 'x-api-signature': signature },
      payload: body,
    })

  it('refuses the body signed over its U+FFFD-replaced text', async () => {
    const replaced = bytes.toString('utf8')
    expect(replaced).toContain('\uFFFD')
    const res = await exchange(sign(acct.apiKey, acct.apiSecret, replaced))
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ error: 'invalid_signature' })
  })

  it('accepts the body signed over its bytes', async () => {
    const res = await exchange(sign(acct.apiKey, acct.apiSecret, bytes))
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ accountId: acct.accountId })
  })

  it('refuses invalid JSON with the contract body, whatever the signature', async () => {
    const broken = Buffer.concat([Buffer.from('{"nonce":'), Buffer.from([0xff, 0xfe])])
    const res = await exchange(sign(acct.apiKey, acct.apiSecret, broken), broken)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ error: 'invalid_json' })
  })
})

describe('an operator’s refused requests do not spend its address’s budget', () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  beforeAll(async () => {
    h = await createHarness(limitsEnv())
    client = operatorClient(h.app, h.adminToken)
  })
  afterAll(async () => h?.close())

  // The team's one address behind a NAT; sessions are signed in elsewhere and used from here.
  const NAT = '198.51.100.200'
  const call = (method: string, url: string, headers: Record<string, string>, from = NAT) =>
    h.app.inject({
      method: method as 'GET',
      url,
      remoteAddress: from,
      headers: method === 'GET' ? headers : { 'content-type': 'application/json', ...headers },
      ...(method === 'GET' ? {} : { payload: '{}' }),
    })

  it('31 role refusals of a viewer and 30 CSRF refusals of an admin leave the team its console', async () => {
    const viewer = await client.signIn(await client.createOperator('viewer'))
    const admin = await client.signIn(await client.createOperator('admin'))
    const colleague = await client.signIn(await client.createOperator('finance'))

    const refused: number[] = []
    for (let i = 0; i < 31; i++)
      refused.push((await call('GET', '/admin/audit', { cookie: viewer.cookie })).statusCode)
    expect(refused.every((s) => s === 403)).toBe(true)
    const csrf: number[] = []
    for (let i = 0; i < 30; i++)
      csrf.push((await call('POST', '/admin/accounts', { cookie: admin.cookie })).statusCode)
    expect(csrf.every((s) => s === 403)).toBe(true)

    // Everyone else at that address, and the admin token, still get their answers.
    const others = [
      await call('GET', '/admin/accounts', { cookie: colleague.cookie }),
      await call('GET', '/admin/accounts', { authorization: `Bearer ${h.adminToken}` }),
      await call('GET', '/admin/accounts', { cookie: admin.cookie }),
    ]
    expect(others.map((r) => r.statusCode)).toEqual([200, 200, 200])
    expect(others[1]!.headers['x-ratelimit-remaining']).toBe('30')
  })

  it('an operator that keeps being refused is limited on its own, with the headers of its window', async () => {
    const viewer = await client.signIn(await client.createOperator('viewer'))
    const statuses: number[] = []
    let last: Awaited<ReturnType<typeof call>> | undefined
    // 60 refusals a minute per operator by default (RATE_LIMIT_OPERATOR_PER_MINUTE).
    for (let i = 0; i < 63; i++) {
      last = await call('GET', '/admin/audit', { cookie: viewer.cookie })
      statuses.push(last.statusCode)
    }
    expect(statuses.slice(0, 60).every((s) => s === 403)).toBe(true)
    expect(statuses.slice(60)).toEqual([429, 429, 429])
    expect(last!.json().message).toMatch(/for refused requests of this operator/)
    expect(last!.headers['x-ratelimit-limit']).toBe('60')
    expect(last!.headers['x-ratelimit-remaining']).toBe('0')
    expect(Number(last!.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    // Until its window resets, even what its role allows waits; nobody else does.
    expect((await call('GET', '/admin/accounts', { cookie: viewer.cookie })).statusCode).toBe(429)
    const other = await client.signIn(await client.createOperator('viewer'))
    expect((await call('GET', '/admin/accounts', { cookie: other.cookie })).statusCode).toBe(200)
    // Failed credentials from the address are still counted against the address.
    expect((await call('GET', '/admin/accounts', { authorization: 'Bearer adm_wrong' })).statusCode).toBe(401)
  })
})
