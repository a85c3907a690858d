import { createHmac } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { runDueTransactions } from '../transactions/worker.js'

/**
 * VND payouts through the real bank adapter (VND=bank-http), against a partner played by a local
 * HTTP server that speaks the partner API of docs/payouts.md. Only the partner is simulated: the
 * request goes through our HTTP API, the worker, the adapter and a real socket.
 */
interface PartnerPayout {
  id: string
  status: string
  reason?: string
  amount: string
  currency: string
  body: any
  key: string
}

function startPartner() {
  const byKey = new Map<string, PartnerPayout>()
  const byId = new Map<string, PartnerPayout>()
  const authHeaders: string[] = []
  const server = http.createServer((req, res) => {
    let text = ''
    req.on('data', (c) => (text += c))
    req.on('end', () => {
      authHeaders.push(String(req.headers.authorization))
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      }
      const view = (p: PartnerPayout) => ({
        id: p.id,
        status: p.status,
        amount: p.amount,
        currency: p.currency,
        ...(p.reason ? { reason: p.reason } : {}),
      })
      if (req.method === 'POST' && req.url === '/v1/payouts') {
        const key = String(req.headers['idempotency-key'])
        const existing = byKey.get(key)
        if (existing) return send(409, { error: 'duplicate', payout: view(existing) })
        const body = JSON.parse(text)
        if (String(body.beneficiary.accountNumber).endsWith('2222'))
          return send(422, { error: 'account_not_found' })
        const payout = {
          id: `P${byId.size + 1}`,
          status: 'processing',
          amount: body.amount,
          currency: body.currency,
          body,
          key,
        }
        byKey.set(key, payout)
        byId.set(payout.id, payout)
        return send(201, view(payout))
      }
      const id = /^\/v1\/payouts\/([^/]+)$/.exec(req.url ?? '')?.[1]
      const payout = id ? byId.get(id) : undefined
      if (req.method === 'GET' && payout) return send(200, view(payout))
      send(404, { error: 'not_found' })
    })
  })
  return { server, byKey, byId, authHeaders }
}

const NOTIFY_SECRET = 'partner-notification-secret-1'

describe('VND payouts through the bank partner adapter', () => {
  let h: Harness
  let a: TestAccount
  let partner: ReturnType<typeof startPartner>
  beforeAll(async () => {
    partner = startPartner()
    await new Promise<void>((r) => partner.server.listen(0, '127.0.0.1', r))
    const { port } = partner.server.address() as AddressInfo
    h = await createHarness({
      VND: 'bank-http',
      BANK_PAYOUT_URL: `http://127.0.0.1:${port}`,
      BANK_PAYOUT_API_KEY: 'partner-key-123',
      BANK_PAYOUT_WEBHOOK_SECRET: NOTIFY_SECRET,
    })
    a = await h.createAccount({ name: 'Partner payer' })
    await h.fund(a.accountId, 'VND', '5000000')
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await new Promise((r) => partner?.server.close(r))
  })

  // A real partner is asked again after 30 s; the worker is run as if that time had passed.
  const work = () =>
    runDueTransactions({
      db: h.c.db,
      transactions: h.c.transactions,
      log: console,
      now: () => Date.now() + 60_000,
    })
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const wallet = async () =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === 'VND',
    )

  async function payout(bankAcctNum: string) {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: 200000,
        reqDetails: { bankAcctNum, institutionCode: '970415' },
        kyc: { type: 'business', details: { legalFullName: 'Công ty TNHH Ví Dụ', countryCode: 'vn' } },
      },
      sourceOfFunds: { purpose: 3, source: 2, relationship: 6 },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    return q.body.txnId as string
  }

  it('submits once per transaction with the beneficiary, and completes when the partner does', async () => {
    const before = await wallet()
    const txnId = await payout('0011223344')
    await work()
    const sent = await get(txnId)
    expect(sent.txnState).toBe('destsent')
    const p = partner.byId.get(sent.destReq.reqDetails.bankRef)!
    expect(p.key).toBe(txnId)
    expect(p.body).toEqual({
      amount: '200000',
      currency: 'VND',
      beneficiary: {
        accountNumber: '0011223344',
        bankBin: '970415',
        name: 'Công ty TNHH Ví Dụ',
        country: 'VN',
        type: 'business',
      },
      purposeCode: 3,
      sourceCode: 2,
      relationshipCode: 6,
    })
    expect(partner.authHeaders.every((x) => x === 'Bearer partner-key-123')).toBe(true)

    await work()
    expect((await get(txnId)).txnState).toBe('destsent')
    p.status = 'completed'
    await work()
    const done = await get(txnId)
    expect(done.txnState).toBe('completed')
    expect((await wallet()).amount).toBe(before.amount - 200600)
    await h.expectBooksBalanced()
  })

  it('ends failed or rejected with the partner reason, and releases the funds', async () => {
    const before = await wallet()
    const failing = await payout('5566778899')
    const refused = await payout('1234562222')
    await work()
    expect([(await get(failing)).txnState, (await get(refused)).txnState]).toEqual(['destsent', 'rejected'])
    expect((await get(refused)).msg).toBe('rejected_by_bank')
    const p = partner.byId.get((await get(failing)).destReq.reqDetails.bankRef)!
    p.status = 'failed'
    p.reason = 'beneficiary_name_mismatch'
    await work()
    const f = await get(failing)
    expect([f.txnState, f.msg]).toEqual(['failed', 'beneficiary_name_mismatch'])
    const after = await wallet()
    expect([after.amount, after.availableBalance]).toEqual([before.amount, before.availableBalance])
    await h.expectBooksBalanced()
  })

  it('a signed partner notification makes the payout due at once; an unsigned one changes nothing', async () => {
    const txnId = await payout('0099887766')
    // Run at the real time from here on: the payout is not due again for 30 s.
    const workNow = () =>
      runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console, now: Date.now })
    await workNow()
    const sent = await get(txnId)
    expect(sent.txnState).toBe('destsent')
    const p = partner.byId.get(sent.destReq.reqDetails.bankRef)!
    p.status = 'completed'
    await workNow()
    expect((await get(txnId)).txnState).toBe('destsent')

    const body = JSON.stringify({ id: p.id, status: 'completed', amount: p.amount, currency: 'VND' })
    const sign = (text: string | Buffer) => createHmac('sha256', NOTIFY_SECRET).update(text).digest('hex')
    const notify = (text: string | Buffer, signature?: string) =>
      h.app.inject({
        method: 'POST',
        url: '/partners/bank/notifications',
        headers: {
          'content-type': 'application/json',
          ...(signature === undefined ? {} : { 'x-partner-signature': signature }),
        },
        payload: text,
      })

    for (const bad of [undefined, sign(body + ' '), sign(body).toUpperCase(), 'zz']) {
      const r = await notify(body, bad)
      expect([r.statusCode, r.json()]).toEqual([401, { error: 'unauthorized', message: expect.any(String) }])
    }
    const tooBig = await notify(JSON.stringify({ id: p.id, pad: 'x'.repeat(70_000) }))
    expect(tooBig.statusCode).toBe(413)
    expect(tooBig.json().error).toEqual(expect.any(String))
    await workNow()
    expect((await get(txnId)).txnState).toBe('destsent')

    // A payout we do not know is acknowledged, so the partner does not retry it forever.
    const stranger = JSON.stringify({ id: 'P-unknown', status: 'completed', amount: '1', currency: 'VND' })
    expect((await notify(stranger, sign(stranger))).json()).toEqual({ received: true })
    // The signature is checked over the bytes as received: invalid UTF-8 in the body signed over
    // its bytes passes, the same body signed over its U+FFFD-replaced text does not.
    const oddBytes = Buffer.concat([
      Buffer.from('{"id":"P-unknown","note":"'),
      Buffer.from([0xc3, 0x28, 0x80]),
      Buffer.from('","status":"completed","amount":"1","currency":"VND"}'),
    ])
    expect((await notify(oddBytes, sign(oddBytes))).statusCode).toBe(200)
    expect((await notify(oddBytes, sign(oddBytes.toString('utf8')))).statusCode).toBe(401)

    const ok = await notify(body, sign(body))
    expect([ok.statusCode, ok.json()]).toEqual([200, { received: true }])
    await workNow()
    // The state comes from reading the payout at the partner, not from the notification's body.
    expect((await get(txnId)).txnState).toBe('completed')
    await h.expectBooksBalanced()
  })
})
