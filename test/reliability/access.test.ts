import { randomBytes } from 'node:crypto'
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
