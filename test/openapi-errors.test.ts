import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATION_ERRORS } from '../src/openapi/errors.js'
import { OPERATION_IDS } from '../src/openapi/operations.js'
import { statusOf, type ErrorCode } from '../src/shared/errors.js'
import { createHarness, type Harness, type TestAccount } from './helpers/harness.js'

/**
 * Each operation's error answers in /openapi.json name the codes that operation can answer and no
 * others (issue 29): the table of src/openapi/errors.ts holds real codes with their statuses,
 * covers every operation, is what the document says, and the errors provoked here are in it.
 */

type Json = Record<string, any>

describe('the error codes of each operation', () => {
  let h: Harness
  let doc: Json
  let acct: TestAccount
  const seen: Array<{ operationId: string; status: number; code: string }> = []

  beforeAll(async () => {
    h = await createHarness()
    acct = await h.createAccount()
    doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/openapi.json' })).body)
  })
  afterAll(async () => {
    await h?.close()
  })

  /** Sends a request of `operationId` and records the error it answers. */
  async function provoke(
    operationId: string,
    method: string,
    url: string,
    opts: { token?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; code: string }> {
    const res = await h.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      },
      ...(opts.body !== undefined ? { payload: opts.body } : {}),
    })
    expect(res.statusCode, `${operationId} ${url}`).toBeGreaterThanOrEqual(400)
    const code = JSON.parse(res.body).error as string
    seen.push({ operationId, status: res.statusCode, code })
    return { status: res.statusCode, code }
  }

  it('lists real error codes, each answered with the status the error map gives it', () => {
    for (const [operationId, codes] of Object.entries(OPERATION_ERRORS)) {
      expect(codes.length, operationId).toBeGreaterThan(0)
      for (const code of codes) expect(statusOf(code), `${operationId} ${code}`).toBeGreaterThanOrEqual(400)
    }
  })

  it('has an entry for every operation of the document, and none for another', () => {
    const ids: string[] = []
    for (const item of Object.values(doc.paths as Json))
      for (const op of Object.values(item as Json)) ids.push((op as Json).operationId)
    expect(ids.sort()).toEqual(Object.keys(OPERATION_ERRORS).sort())
    expect(Object.keys(OPERATION_ERRORS).sort()).toEqual(Object.values(OPERATION_IDS).sort())
  })

  it("describes in each error answer only the operation's codes of that status", () => {
    for (const item of Object.values(doc.paths as Json)) {
      for (const op of Object.values(item as Json) as Json[]) {
        const codes = OPERATION_ERRORS[op.operationId]!
        const statuses = new Set(codes.map(statusOf).map(String))
        const declared = Object.keys(op.responses).filter((s) => !/^[23]/.test(s))
        expect(declared.sort(), op.operationId).toEqual([...statuses].sort())
        for (const status of declared) {
          const own = codes.filter((c) => String(statusOf(c)) === status)
          const answer = op.responses[status]
          const media = answer.content['application/json']
          expect(media.schema.properties.error.enum, `${op.operationId} ${status}`).toEqual(own)
          expect(own, `${op.operationId} ${status}`).toContain(media.example.error)
          const named = [...(answer.description as string).matchAll(/`([a-z_]+)`/g)].map((m) => m[1])
          expect(named.filter((n) => statusOf(n as ErrorCode) !== undefined).sort()).toEqual([...own].sort())
        }
      }
    }
  })

  it('answers the errors provoked of a sample of operations only with codes listed for them', async () => {
    const t = acct.token
    // The token exchange: no headers, a malformed and a wrong signature, a body that is not JSON.
    await provoke('authenticate', 'POST', '/api/v2/authentication/token-signature', { body: '{}' })
    const sig = (text: string) =>
      createHmac('sha256', acct.apiSecret).update(`${acct.apiKey}&payload=${text}`).digest('hex')
    await provoke('authenticate', 'POST', '/api/v2/authentication/token-signature', {
      body: '{}',
      headers: { 'x-api-key': acct.apiKey, 'x-api-signature': 'zz' },
    })
    await provoke('authenticate', 'POST', '/api/v2/authentication/token-signature', {
      body: '{}',
      headers: { 'x-api-key': acct.apiKey, 'x-api-signature': sig('{"a":1}') },
    })
    await provoke('authenticate', 'POST', '/api/v2/authentication/token-signature', {
      body: '{',
      headers: { 'x-api-key': acct.apiKey, 'x-api-signature': sig('{') },
    })
    const reused = '{"n":"reused"}'
    const headers = { 'x-api-key': acct.apiKey, 'x-api-signature': sig(reused) }
    await h.app.inject({
      method: 'POST',
      url: '/api/v2/authentication/token-signature',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: reused,
    })
    await provoke('authenticate', 'POST', '/api/v2/authentication/token-signature', { body: reused, headers })
    await provoke('authenticate', 'POST', '/api/v2/authentication/token-signature', {
      body: 'x',
      headers: { ...headers, 'content-type': 'text/plain' },
    })

    // A quote: no token, a bad amount, an unknown method, a bad address, a body over the limit.
    await provoke('createTransaction', 'POST', '/api/v2/transaction', { body: '{}' })
    const quote = (sourceReq: Json, destReq: Json) =>
      provoke('createTransaction', 'POST', '/api/v2/transaction', {
        token: t,
        body: JSON.stringify({ sourceReq, destReq }),
      })
    await quote(
      { ccy: 'BTC', method: 'svcpay', amtRequested: '0.000000001' },
      { ccy: 'BTC', method: 'lightning' },
    )
    await quote(
      { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001' },
      { ccy: 'BTC', method: 'carrier-pigeon' },
    )
    await quote(
      { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001' },
      { ccy: 'BTC', method: 'on-chain', reqDetails: { address: 'not-an-address' } },
    )
    await quote(
      { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001' },
      { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest: 'lnbc1nonsense' } },
    )
    await quote(
      { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001' },
      { ccy: 'VND', method: 'vnd-instant' },
    )
    await provoke('createTransaction', 'POST', '/api/v2/transaction', { token: t, body: '{"sourceReq":' })
    await provoke('createTransaction', 'POST', '/api/v2/transaction', {
      token: t,
      body: JSON.stringify({ pad: 'x'.repeat(70_000) }),
    })

    // Confirm and cancel: an unknown transaction, a cancelled one, a body that is not JSON.
    const created = await h.api('POST', '/api/v2/transaction', t, {
      sourceReq: { ccy: 'BTC', method: 'lightning', amtRequested: '0.0001' },
      destReq: { ccy: 'BTC', method: 'svcpay' },
    })
    expect(created.status).toBe(200)
    const txnId = created.body.txnId as string
    await provoke('confirmTransaction', 'PUT', '/api/v2/transaction/txn_nosuchone/confirm', { token: t })
    await provoke('cancelTransaction', 'PUT', '/api/v2/transaction/txn_nosuchone/cancel', { token: t })
    expect((await h.api('PUT', `/api/v2/transaction/${txnId}/cancel`, t)).status).toBe(200)
    await provoke('cancelTransaction', 'PUT', `/api/v2/transaction/${txnId}/cancel`, { token: t })
    await provoke('confirmTransaction', 'PUT', `/api/v2/transaction/${txnId}/confirm`, { token: t })
    await provoke('confirmTransaction', 'PUT', `/api/v2/transaction/${txnId}/confirm`, {
      token: t,
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    })
    await provoke('cancelTransaction', 'PUT', `/api/v2/transaction/${txnId}/cancel`, { token: t, body: '{' })

    // List and get: a bad query, a NUL character, an unknown transaction, an expired token.
    await provoke('listTransactions', 'GET', '/api/v2/transaction?limit=0', { token: t })
    await provoke('listTransactions', 'GET', '/api/v2/transaction?time=2d', { token: t })
    await provoke('listTransactions', 'GET', '/api/v2/transaction', { token: 'not.a.valid.token' })
    await provoke('getTransaction', 'GET', '/api/v2/transaction/txn_nosuchone', { token: t })
    await provoke('getTransaction', 'GET', '/api/v2/transaction/txn_nosuchone?x=%00', { token: t })
    await provoke('getTransaction', 'GET', `/api/v2/transaction/${'x'.repeat(300)}`, { token: t })

    // Webhook registration: a bad callback, a short secret, no body, no token.
    await provoke('createWebhook', 'POST', '/api/v2/webhook', {
      token: t,
      body: JSON.stringify({ callback: 'ftp://example.com/hook', secret: 'x'.repeat(40) }),
    })
    await provoke('createWebhook', 'POST', '/api/v2/webhook', {
      token: t,
      body: JSON.stringify({ callback: 'https://example.com/hook', secret: 'short' }),
    })
    await provoke('createWebhook', 'POST', '/api/v2/webhook', { token: t, body: '' })
    await provoke('createWebhook', 'POST', '/api/v2/webhook', { body: '{}' })
    await provoke('getWallet', 'GET', `/api/v2/account/${acct.accountId}/wallet/wal_nosuchone`, { token: t })
    await provoke('getRates', 'GET', '/api/v2/rate?x=%00', { token: t })
    // The operational endpoints take no parameters, yet refuse a NUL character in a query value.
    await provoke('getHealth', 'GET', '/healthz?x=%00')

    const unlisted = seen.filter(
      ({ operationId, status, code }) =>
        !OPERATION_ERRORS[operationId]!.includes(code as ErrorCode) || statusOf(code as ErrorCode) !== status,
    )
    expect(unlisted).toEqual([])
    // The sample reaches well beyond the codes every operation shares.
    const codes = new Set(seen.map((s) => s.code))
    for (const code of [
      'invalid_signature',
      'signature_reused',
      'unsupported_method',
      'not_found',
      'invalid_state',
    ])
      expect(codes, code).toContain(code)
  })
})
