import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadJwtKey } from '../../src/auth/jwt-key.js'
import { createAuthService } from '../../src/auth/service.js'
import { createHmac } from 'node:crypto'
import type { TestAccount } from '../helpers/harness.js'
import { createAppHarness, type AppHarness } from '../helpers/app-harness.js'
import { finishCase, historyProblems } from '../helpers/invariants.js'

/**
 * Access: every resource of one account, tried with every other kind of account's token (unrelated,
 * its child, its parent) and with tokens that are not genuine (tampered, `alg: none`, signed with
 * another key, expired). The answers are the spec's and the contract's (404 for another account's
 * transaction or webhook, 401 on the account and wallet list, 403 on a single wallet), never data,
 * and nothing changes. test/foundation/auth.test.ts covers these tokens on the wallet list; here
 * they go to every other route.
 */

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

describe('access across accounts', () => {
  let h: AppHarness
  let owner: TestAccount
  let parent: TestAccount
  let child: TestAccount
  let stranger: TestAccount
  let txnId: string
  let quotedId: string
  let webhookId: string
  let deliveryId: string
  let walletId: string
  let ops = 0
  beforeAll(async () => {
    h = await createAppHarness({
      resolveHost: async (name) =>
        name === 'hooks.example.com' ? [{ address: '93.184.216.34', family: 4 }] : [],
      env: { ALLOW_HTTP_WEBHOOKS: 'false' },
    })
    parent = await h.createAccount({ name: 'Parent' })
    owner = await h.createAccount({ name: 'Owner', parentId: parent.accountId })
    child = await h.createAccount({ name: 'Child', parentId: owner.accountId })
    stranger = await h.createAccount({ name: 'Stranger' })
    await h.admin('POST', '/admin/sandbox/fund', { accountId: owner.accountId, ccy: 'BTC', amount: '0.01' })
    const hook = await h.api('POST', '/api/v2/webhook', owner.token, {
      callback: 'https://hooks.example.com/owner',
      secret: 'owner-secret-0123456789',
    })
    expect(hook.status).toBe(200)
    webhookId = hook.body.id
    const swap = {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    }
    txnId = (await h.api('POST', '/api/v2/transaction', owner.token, { ...swap, extRefId: 'owner-1' })).body
      .txnId
    expect((await h.api('PUT', `/api/v2/transaction/${txnId}/confirm`, owner.token)).body.txnState).toBe(
      'completed',
    )
    quotedId = (await h.api('POST', '/api/v2/transaction', owner.token, { ...swap, extRefId: 'owner-2' }))
      .body.txnId
    deliveryId = (await h.api('GET', `/api/v2/webhook/${webhookId}/deliveries`, owner.token)).body.data[0].id
    walletId = (await h.api('GET', `/api/v2/account/${owner.accountId}/wallet/`, owner.token)).body.data[0].id
  })
  afterAll(async () => h?.close())

  const call = async (method: string, url: string, token: string | undefined, body?: unknown) => {
    ops++
    return h.api(method, url, token, body)
  }
  /** The owner's resources as seen by the owner, to compare against after every attempt. */
  const snapshot = async () => ({
    txn: (await call('GET', `/api/v2/transaction/${txnId}`, owner.token)).body,
    quoted: (await call('GET', `/api/v2/transaction/${quotedId}`, owner.token)).body,
    hooks: (await call('GET', '/api/v2/webhook', owner.token)).body,
    wallets: (await call('GET', `/api/v2/account/${owner.accountId}/wallet/`, owner.token)).body,
  })
  /** Nothing of the owner's appears in an answer: no id, no extRefId, no webhook URL. */
  const expectNoOwnerData = (raw: string, what: string) => {
    for (const secretish of [
      txnId,
      quotedId,
      'owner-1',
      'owner-2',
      'hooks.example.com/owner',
      walletId,
      deliveryId && `"${deliveryId}"`,
    ]) {
      if (secretish)
        expect(raw.includes(secretish), `${what} shows ${secretish}: ${raw.slice(0, 200)}`).toBe(false)
    }
  }

  it('answers other accounts 404 on the transactions and webhooks of the owner, and changes nothing', async () => {
    ops = 0
    const before = await snapshot()
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/v2/transaction/${txnId}`],
      ['GET', `/api/v2/transaction/${quotedId}`],
      ['PUT', `/api/v2/transaction/${quotedId}/confirm`],
      ['PUT', `/api/v2/transaction/${quotedId}/cancel`],
      ['PUT', `/api/v2/transaction/${txnId}/confirm`],
      ['GET', `/api/v2/transaction/${txnId}/events`],
      ['GET', `/api/v2/transaction/${quotedId}/events`],
      [
        'PUT',
        `/api/v2/webhook/${webhookId}`,
        { callback: 'https://hooks.example.com/stolen', secret: 'x'.repeat(20) },
      ],
      ['DELETE', `/api/v2/webhook/${webhookId}`],
      ['GET', `/api/v2/webhook/${webhookId}/deliveries`],
      ['POST', `/api/v2/webhook/${webhookId}/deliveries/${deliveryId}/redeliver`],
    ]
    for (const other of [stranger, parent, child]) {
      for (const [method, url, body] of attempts) {
        const r = await call(method, url, other.token, body)
        expect(r.status, `${method} ${url} by another account: ${r.raw}`).toBe(404)
        expect(r.body).toEqual({ error: 'not_found', message: expect.any(String) })
        expectNoOwnerData(r.raw, `${method} ${url}`)
      }
      // The other account's own webhook cannot reach the owner's deliveries either.
      const own = await call('POST', '/api/v2/webhook', other.token, {
        callback: 'https://hooks.example.com/other',
        secret: 'y'.repeat(20),
      })
      expect(own.status).toBe(200)
      const cross = await call(
        'POST',
        `/api/v2/webhook/${own.body.id}/deliveries/${deliveryId}/redeliver`,
        other.token,
      )
      expect(cross.status).toBe(404)
      const deliveries = await call('GET', `/api/v2/webhook/${own.body.id}/deliveries`, other.token)
      expectNoOwnerData(deliveries.raw, 'own deliveries')
      // Lists and reads of one's own never include the owner's.
      const list = await call('GET', '/api/v2/transaction?time=1y&limit=100', other.token)
      expect(list.status).toBe(200)
      expectNoOwnerData(list.raw, 'transaction list')
      const hooks = await call('GET', '/api/v2/webhook', other.token)
      expectNoOwnerData(hooks.raw, 'webhook list')
      // An extRefId is per account: the same one makes the other account its own transaction.
      const mine = await call('POST', '/api/v2/transaction', other.token, {
        extRefId: 'owner-1',
        sourceReq: { ccy: 'USD', method: 'svcpay', amtRequested: '1', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      })
      expect(mine.status).toBe(200)
      expect(mine.body.txnId).not.toBe(txnId)
      expect(mine.body.accountId).toBe(other.accountId)
    }
    expect(await snapshot()).toEqual(before)
    expect((await call('GET', `/api/v2/transaction/${quotedId}`, owner.token)).body.txnState).toBe('quoted')
    expect(await historyProblems(h.c.db)).toEqual([])
    await finishCase('access to transactions and webhooks', h.c.db, { ops })
  })

  it('answers account and wallet reads by the spec: the parent reads, a child or stranger gets 401 or 403', async () => {
    ops = 0
    const reads = (accountId: string) => ({
      account: `/api/v2/account/${accountId}`,
      list: `/api/v2/account/${accountId}/wallet/`,
      one: `/api/v2/account/${accountId}/wallet/${walletId}`,
    })
    const url = reads(owner.accountId)
    for (const [who, token] of [
      ['stranger', stranger.token],
      ['child', child.token],
    ] as const) {
      const account = await call('GET', url.account, token)
      expect([who, account.status, account.body.error]).toEqual([who, 401, 'unauthorized'])
      const list = await call('GET', url.list, token)
      expect([who, list.status, list.body.error]).toEqual([who, 401, 'unauthorized'])
      const one = await call('GET', url.one, token)
      expect([who, one.status, one.body.error]).toEqual([who, 403, 'forbidden'])
      for (const r of [account, list, one]) expectNoOwnerData(r.raw, who)
      // The owner's wallet id under the caller's own account id is an unknown wallet there.
      const own = await call(
        'GET',
        `/api/v2/account/${who === 'child' ? child.accountId : stranger.accountId}/wallet/${walletId}`,
        token,
      )
      expect(own.status).toBe(404)
    }
    // The parent reads its child, and the grandparent relation does not reach further down.
    expect((await call('GET', url.account, parent.token)).status).toBe(200)
    expect((await call('GET', url.list, parent.token)).status).toBe(200)
    expect((await call('GET', url.one, parent.token)).status).toBe(200)
    const grandchild = reads(child.accountId)
    expect((await call('GET', grandchild.account, parent.token)).status).toBe(401)
    expect((await call('GET', grandchild.list, parent.token)).status).toBe(401)
    expect((await call('GET', grandchild.one.replace(walletId, 'wal_x'), parent.token)).status).toBe(403)
    await finishCase('access to accounts and wallets', h.c.db, { ops })
  })

  it('refuses tokens that are not genuine on every route with 401, and tokens are no operator credentials', async () => {
    ops = 0
    const [header, payload, signature] = stranger.token.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = { ...claims, sub: owner.accountId, key: owner.apiKey }
    const jwtKey = await loadJwtKey(h.c.db, h.c.box, undefined)
    const past = createAuthService({
      db: h.c.db,
      box: h.c.box,
      jwtKey,
      tokenTtlS: 60,
      now: () => Date.now() - 3_600_000,
    })
    const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
    const expired = (
      await past.exchange({
        apiKey: owner.apiKey,
        signature: createHmac('sha256', owner.apiSecret)
          .update(`${owner.apiKey}&payload=${body}`)
          .digest('hex'),
        rawBody: body,
      })
    ).accessToken
    const bad: Record<string, string | undefined> = {
      none: undefined,
      garbage: 'not-a-token',
      tampered: [header, b64url(forged), signature].join('.'),
      algNone: [b64url({ alg: 'none', typ: 'JWT' }), b64url(forged), ''].join('.'),
      algNoneNoDot: [b64url({ alg: 'none', typ: 'JWT' }), b64url(forged)].join('.'),
      otherKey: await new SignJWT(forged).setProtectedHeader({ alg: 'HS256' }).sign(randomBytes(32)),
      expired,
      adminToken: h.adminToken,
    }
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/v2/transaction'],
      [
        'POST',
        '/api/v2/transaction',
        {
          sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001' },
          destReq: { ccy: 'USD', method: 'svcpay' },
        },
      ],
      ['GET', `/api/v2/transaction/${txnId}`],
      ['PUT', `/api/v2/transaction/${quotedId}/confirm`],
      ['PUT', `/api/v2/transaction/${quotedId}/cancel`],
      ['GET', `/api/v2/transaction/${txnId}/events`],
      ['GET', `/api/v2/account/${owner.accountId}`],
      ['GET', `/api/v2/account/${owner.accountId}/wallet/${walletId}`],
      ['GET', '/api/v2/account/onchain-address'],
      ['GET', '/api/v2/rate'],
      ['GET', '/api/v2/fiat/institutions?ccy=VND'],
      ['GET', '/api/v2/fiat/source-of-funds-codes'],
      ['POST', '/api/v2/webhook', { callback: 'https://hooks.example.com/x', secret: 'z'.repeat(20) }],
      ['GET', '/api/v2/webhook'],
      ['PUT', `/api/v2/webhook/${webhookId}`, { secret: 'z'.repeat(20) }],
      ['DELETE', `/api/v2/webhook/${webhookId}`],
      ['GET', `/api/v2/webhook/${webhookId}/deliveries`],
      ['POST', `/api/v2/webhook/${webhookId}/deliveries/${deliveryId}/redeliver`],
      ['POST', '/sandbox/fund', { ccy: 'BTC', amount: '1' }],
      ['POST', '/sandbox/lightning/invoice', { amount: '0.001' }],
      ['POST', '/sandbox/lightning/pay', { paymentRequest: 'lnbcrt1' }],
      [
        'POST',
        '/sandbox/onchain/send',
        { address: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080', amount: '1' },
      ],
      ['POST', '/sandbox/onchain/mine', { blocks: 1 }],
    ]
    const before = await snapshot()
    for (const [name, token] of Object.entries(bad)) {
      for (const [method, url, b] of routes) {
        const r = await call(method, url, token, b)
        expect(r.status, `${name}: ${method} ${url} -> ${r.raw}`).toBe(401)
        expect(r.body).toEqual({ error: 'unauthorized', message: expect.any(String) })
      }
    }
    // Operator routes take the admin token only: a customer's token, genuine or not, is refused.
    const adminRoutes: Array<[string, string, unknown?]> = [
      ['GET', '/admin/accounts'],
      ['POST', '/admin/accounts', { name: 'Mallory' }],
      ['POST', '/admin/keys', { accountId: owner.accountId }],
      ['POST', `/admin/keys/${owner.apiKey}/revoke`],
      ['PUT', `/admin/accounts/${stranger.accountId}/tier`, { tier: 'premium' }],
      ['POST', '/admin/sandbox/fund', { accountId: stranger.accountId, ccy: 'BTC', amount: '1' }],
      ['GET', '/admin/ledger/check'],
      ['GET', `/admin/webhook/deliveries?accountId=${owner.accountId}`],
      ['POST', `/admin/webhook/deliveries/${deliveryId}/redeliver`],
    ]
    for (const token of [stranger.token, owner.token, bad.algNone, bad.tampered, undefined]) {
      for (const [method, url, b] of adminRoutes) {
        const r = await call(method, url, token, b)
        expect(r.status, `${method} ${url} -> ${r.raw}`).toBe(401)
        expect(r.body.error).toBe('unauthorized')
      }
    }
    expect(await snapshot()).toEqual(before)
    // The owner's key still works: nothing above revoked it.
    expect((await call('GET', `/api/v2/transaction/${txnId}`, owner.token)).status).toBe(200)
    await finishCase('tokens that are not genuine', h.c.db, {
      ops,
      detail: `${Object.keys(bad).length} kinds of token`,
    })
  })
})

/**
 * Authentication failures of every kind (issue 16, defect 1), in random mixes from one address at a
 * time: each is counted against the client address (its answers report that window, limit 30),
 * and none spends the account's windows, which an account call after each mix shows to hold exactly
 * what the account itself used. The account's limits are set high so that only its own calls move
 * its counter; the address limit is the default, so mixes longer than 30 are refused with 429 too.
 */
describe('authentication failures never touch an account window (property-based)', () => {
  let h: AppHarness
  let owner: TestAccount
  const ACCOUNT_LIMIT = 1000
  const ADDRESS_LIMIT = 30
  beforeAll(async () => {
    h = await createAppHarness({
      env: {
        RATE_LIMITS_ENABLED: 'true',
        RATE_LIMIT_STANDARD_PER_MINUTE: String(ACCOUNT_LIMIT),
        RATE_LIMIT_STANDARD_PER_SECOND: String(ACCOUNT_LIMIT),
        RATE_LIMIT_REDIS_PREFIX: `svcpay:rl:test:${randomBytes(6).toString('hex')}`,
        ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      },
    })
    owner = await h.createAccount({ name: 'Target' })
  })
  afterAll(async () => h?.close())

  it(
    'for any mix of failed token requests, bearer tokens and admin tokens',
    { timeout: 180_000 },
    async () => {
      let ops = 0
      const sign = (apiKey: string, secret: string, body: Buffer | string) =>
        createHmac('sha256', secret)
          .update(Buffer.from(`${apiKey}&payload=`))
          .update(typeof body === 'string' ? Buffer.from(body) : body)
          .digest('hex')
      const fresh = () => JSON.stringify({ nonce: randomBytes(8).toString('hex') })
      // What the attacker may hold: the API key, a signature seen once, tokens of every bad kind.
      const usedBody = fresh()
      const usedSignature = sign(owner.apiKey, owner.apiSecret, usedBody)
      const jwtKey = await loadJwtKey(h.c.db, h.c.box, undefined)
      const past = createAuthService({
        db: h.c.db,
        box: h.c.box,
        jwtKey,
        tokenTtlS: 60,
        now: () => Date.now() - 3_600_000,
      })
      const expired = (
        await past.exchange({
          apiKey: owner.apiKey,
          signature: sign(owner.apiKey, owner.apiSecret, usedBody),
          rawBody: usedBody,
        })
      ).accessToken
      const revoked = await h.admin('POST', '/admin/keys', { accountId: owner.accountId })
      const revokedToken = await h.tokenFor(revoked.apiKey, revoked.apiSecret)
      await h.admin('POST', `/admin/keys/${revoked.apiKey}/revoke`)
      const [header, payload, signature] = owner.token.split('.') as [string, string, string]
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
      const tampered = [header, b64url({ ...claims, exp: claims.exp + 3600 }), signature].join('.')
      const algNone = [b64url({ alg: 'none', typ: 'JWT' }), payload, ''].join('.')
      const otherKey = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(randomBytes(32))
      const badUtf8 = Buffer.concat([Buffer.from('{"n":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])

      type Attempt = {
        method: string
        url: string
        headers: Record<string, string>
        payload?: Buffer | string
      }
      const token = (apiKey: string, sig: string, body: Buffer | string): Attempt => ({
        method: 'POST',
        url: '/api/v2/authentication/token-signature',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-api-signature': sig },
        payload: body,
      })
      const bearerRoutes = [
        ['GET', `/api/v2/account/${owner.accountId}/wallet/`],
        ['GET', '/api/v2/transaction'],
        ['POST', '/api/v2/transaction'],
        ['GET', '/api/v2/rate'],
        ['POST', '/api/v2/webhook'],
      ] as const
      const bearer = (value: string | undefined, route: number): Attempt => {
        const [method, url] = bearerRoutes[route % bearerRoutes.length]!
        return {
          method,
          url,
          headers: {
            ...(value === undefined ? {} : { authorization: value }),
            ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          },
          ...(method === 'POST' ? { payload: '{}' } : {}),
        }
      }
      const kinds: Record<string, (route: number) => Attempt> = {
        wrongSignature: () => token(owner.apiKey, randomBytes(32).toString('hex'), fresh()),
        replayedSignature: () => token(owner.apiKey, usedSignature, usedBody),
        unknownKey: () =>
          token(`key_${randomBytes(8).toString('hex')}`, randomBytes(32).toString('hex'), fresh()),
        revokedKey: () => {
          const body = fresh()
          return token(revoked.apiKey, sign(revoked.apiKey, revoked.apiSecret, body), body)
        },
        malformedSignature: () => token(owner.apiKey, 'not-hex', fresh()),
        missingHeaders: () => ({
          ...token(owner.apiKey, '', fresh()),
          headers: { 'content-type': 'application/json' },
        }),
        invalidJson: () => token(owner.apiKey, sign(owner.apiKey, owner.apiSecret, '{"a":'), '{"a":'),
        notAnObject: () => token(owner.apiKey, sign(owner.apiKey, owner.apiSecret, '[1]'), '[1]'),
        signedOverReplacedText: () =>
          token(owner.apiKey, sign(owner.apiKey, owner.apiSecret, badUtf8.toString('utf8')), badUtf8),
        noToken: (r) => bearer(undefined, r),
        garbageToken: (r) => bearer('Bearer not-a-token', r),
        tamperedToken: (r) => bearer(`Bearer ${tampered}`, r),
        algNoneToken: (r) => bearer(`Bearer ${algNone}`, r),
        otherKeyToken: (r) => bearer(`Bearer ${otherKey}`, r),
        expiredToken: (r) => bearer(`Bearer ${expired}`, r),
        revokedKeyToken: (r) => bearer(`Bearer ${revokedToken}`, r),
        adminTokenAsBearer: (r) => bearer(`Bearer ${h.adminToken}`, r),
        wrongAdminToken: () => ({
          method: 'GET',
          url: '/admin/accounts',
          headers: { authorization: `Bearer adm_${randomBytes(8).toString('hex')}` },
        }),
        accountTokenOnAdmin: () => ({
          method: 'GET',
          url: '/admin/accounts',
          headers: { authorization: `Bearer ${owner.token}` },
        }),
      }

      // The account's own calls, from its own address, with the token it already holds.
      let lastRemaining: number | undefined
      let lastReset: number | undefined
      const accountCall = async () => {
        ops++
        const res = await h.app.inject({
          method: 'GET',
          url: `/api/v2/account/${owner.accountId}/wallet/`,
          remoteAddress: '198.51.100.200',
          headers: { authorization: `Bearer ${owner.token}` },
        })
        expect(res.statusCode).toBe(200)
        expect(Number(res.headers['x-ratelimit-limit'])).toBe(ACCOUNT_LIMIT)
        const remaining = Number(res.headers['x-ratelimit-remaining'])
        const reset = Number(res.headers['x-ratelimit-reset'])
        // One point per own call; a new window starts full.
        if (lastRemaining !== undefined && reset === lastReset) expect(remaining).toBe(lastRemaining - 1)
        else if (lastRemaining !== undefined) expect(remaining).toBe(ACCOUNT_LIMIT - 1)
        lastRemaining = remaining
        lastReset = reset
      }
      await accountCall()

      let run = 0
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.constantFrom(...Object.keys(kinds)), fc.nat(100)), {
            minLength: 1,
            maxLength: 45,
          }),
          async (mix) => {
            run++
            const address = `10.${(run >> 8) & 255}.${run & 255}.7`
            let answered = 0
            for (const [kind, route] of mix) {
              const a = kinds[kind]!(route)
              ops++
              const res = await h.app.inject({
                method: a.method as 'GET',
                url: a.url,
                remoteAddress: address,
                headers: a.headers,
                ...(a.payload === undefined ? {} : { payload: a.payload }),
              })
              answered++
              const what = `${kind} #${answered} from ${address}: ${res.statusCode} ${res.body}`
              expect([400, 401, 429], what).toContain(res.statusCode)
              // Reported from the address window, never from the account's.
              expect(res.headers['x-ratelimit-limit'], what).toBe(String(ADDRESS_LIMIT))
              if (answered > ADDRESS_LIMIT) expect(res.statusCode, what).toBe(429)
            }
            await accountCall()
          },
        ),
        { numRuns: 25 },
      )
      await finishCase('authentication failures and account windows', h.c.db, {
        ops,
        detail: `${Object.keys(kinds).length} kinds of failure`,
      })
    },
  )
})
