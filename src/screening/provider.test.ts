import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { operatorClient, type Session } from '../../test/admin/operator-client.js'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { decodeInvoice } from '../lightning/bolt11.js'
import { runDueTransactions } from '../transactions/worker.js'

// The USDT token contract on TRON mainnet and a regtest address: valid destinations.
const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const BTC_ADDRESS = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
const BANK = { bankAcctNum: '0123456789', institutionCode: '970436' }
const KYC = { type: 'individual', details: { legalFullName: 'Trần Văn An', countryCode: 'VN' } }

/** The whole body a customer gets for any screening refusal: it names no list and no entry. */
const REFUSAL = {
  error: 'limit_exceeded',
  message: 'This destination cannot be paid',
  details: [{ field: 'limit', issue: 'screening' }],
}

const sends = {
  tron: () => ({
    sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
    destReq: { ccy: 'USDT', method: 'tron', amtRequested: '10', reqDetails: { address: TRON_ADDRESS } },
  }),
  'vnd-instant': () => ({
    sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
    destReq: { ccy: 'VND', method: 'vnd-instant', amtRequested: '100000', reqDetails: BANK, kyc: KYC },
    sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
  }),
  'on-chain': () => ({
    sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
    // Upper case: the list's lower-case entry still catches it (bech32 is compared in one case).
    destReq: {
      ccy: 'BTC',
      method: 'on-chain',
      amtRequested: '0.001',
      reqDetails: { address: BTC_ADDRESS.toUpperCase() },
    },
  }),
}

async function setUp(env: Record<string, string>) {
  const h = await createHarness({ SANDBOX_PAYOUT_DELAY_MS: '0', QUOTE_TTL_S: '600', ...env })
  const a = await h.createAccount({ name: 'Sender' })
  await h.fund(a.accountId, 'USDT', '1000')
  await h.fund(a.accountId, 'VND', '10000000')
  await h.fund(a.accountId, 'BTC', '1')
  const payer = await h.createAccount({ name: 'Outside' })
  return { h, a, payer }
}

/** An outside invoice of the sandbox's other node, and the key of the node that signed it. */
async function outsideInvoice(h: Harness, payer: TestAccount) {
  const r = await h.api('POST', '/sandbox/lightning/invoice', payer.token, { amount: '0.0001' })
  expect(r.status).toBe(200)
  const decoded = decodeInvoice(r.body.paymentRequest)
  if ('error' in decoded) throw new Error(decoded.error)
  return { paymentRequest: r.body.paymentRequest as string, payee: decoded.payeeNodeKey }
}
const lnSend = (paymentRequest: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
})

const admin = (h: Harness) => (method: string, url: string, body?: unknown) =>
  h.api(method, url, h.adminToken, body)

/**
 * A stand-in screening provider speaking the format of docs/screening.md (ours: no upstream to
 * copy): it answers each destination listed in `listed` as a match of list `stand-in`.
 */
async function standInProvider(listed: Set<string>) {
  const asked: any[] = []
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const ask = JSON.parse(body)
      asked.push({ auth: req.headers.authorization, ...ask })
      const matches = ask.destinations
        .filter((d: any) => listed.has(d.value))
        .map((d: any) => ({ ...d, list: 'stand-in' }))
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ matches }))
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/screen`
  return { url, asked, close: () => new Promise<void>((done) => server.close(() => done())) }
}

describe(`screening provider (${ENGINE})`, () => {
  it('asks the provider at quote and not at confirm, refuses its hit, and refuses when it is down (SCREENING_ON_ERROR=refuse)', async () => {
    const provider = await standInProvider(new Set([TRON_ADDRESS]))
    const { h, a } = await setUp({
      SCREENING_URL: provider.url,
      SCREENING_API_KEY: 'provider-key',
      SCREENING_ALLOW_PRIVATE: 'true',
      SCREENING_TIMEOUT_MS: '500',
    })
    try {
      const hit = await h.api('POST', '/api/v2/transaction', a.token, sends.tron())
      expect([hit.status, hit.body]).toEqual([403, REFUSAL])
      expect(provider.asked[0]).toMatchObject({
        auth: 'Bearer provider-key',
        direction: 'out',
        destinations: [{ type: 'tron', value: TRON_ADDRESS }],
      })
      const clear = await h.api('POST', '/api/v2/transaction', a.token, sends['on-chain']())
      expect(clear.status).toBe(200)
      const askedBefore = provider.asked.length
      const c = await h.api('PUT', `/api/v2/transaction/${clear.body.txnId}/confirm`, a.token)
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      expect(provider.asked.length).toBe(askedBefore)
      const hits = (await admin(h)('GET', `/admin/screening/hits`)).body.data
      expect(hits).toMatchObject([
        { kind: 'tron_payout', source: 'provider', entry: 'stand-in', outcome: 'refused' },
      ])

      await provider.close()
      const down = await h.api('POST', '/api/v2/transaction', a.token, sends['vnd-instant']())
      expect([down.status, down.body]).toEqual([403, REFUSAL])
    } finally {
      await provider.close().catch(() => {})
      await h.close()
    }
  }, 60_000)

  it('holds for review when the provider is down (SCREENING_ON_ERROR=review) or a list matches (SCREENING_ON_HIT=review); an approval then pays', async () => {
    const provider = await standInProvider(new Set())
    await provider.close()
    const { h, a, payer } = await setUp({
      SCREENING_URL: provider.url,
      SCREENING_ALLOW_PRIVATE: 'true',
      SCREENING_TIMEOUT_MS: '500',
      SCREENING_ON_ERROR: 'review',
      SCREENING_ON_HIT: 'review',
    })
    try {
      const client = operatorClient(h.app, h.adminToken)
      const ops: Session[] = []
      for (let i = 0; i < 2; i++) ops.push(await client.signIn(await client.createOperator('finance')))
      const q = await h.api('POST', '/api/v2/transaction', a.token, sends.tron())
      expect(q.status, JSON.stringify(q.body)).toBe(200)
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      expect([c.status, c.body.txnState]).toEqual([200, 'processing'])
      expect(JSON.stringify(c.body)).not.toMatch(/screening|provider|list/)
      const act = (who: Session, verb: string) =>
        client.request('POST', `/admin/approvals/${q.body.txnId}/${verb}`, { session: who, body: {} })
      expect((await act(ops[0]!, 'review')).status).toBe(200)
      const approved = await act(ops[1]!, 'approve')
      expect(approved.status, approved.raw).toBe(200)
      await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
      await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
      expect((await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)).body.txnState).toBe(
        'completed',
      )

      // A list hit under review holds too; a Lightning send cannot wait, so its hit is refused.
      const invoice = await outsideInvoice(h, payer)
      await admin(h)('PUT', '/admin/screening/lists/internal', {
        list: `${invoice.payee}\n`,
        type: 'lightning_node',
      })
      const ln = await h.api('POST', '/api/v2/transaction', a.token, lnSend(invoice.paymentRequest))
      expect([ln.status, ln.body]).toEqual([403, REFUSAL])
    } finally {
      await h.close()
    }
  }, 60_000)
})
