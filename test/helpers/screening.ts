import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect } from 'vitest'
import { decodeInvoice } from '../../src/lightning/bolt11.js'
import { createHarness, type Harness, type TestAccount } from './harness.js'

/** What the screening tests (src/screening/*.test.ts) share: destinations, bodies, set-up, the provider stand-in. */
// The USDT token contract on TRON mainnet and a regtest address: valid destinations.
export const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
export const BTC_ADDRESS = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
export const BANK = { bankAcctNum: '0123456789', institutionCode: '970436' }
const KYC = { type: 'individual', details: { legalFullName: 'Trần Văn An', countryCode: 'VN' } }

/** The whole body a customer gets for any screening refusal: it names no list and no entry. */
export const REFUSAL = {
  error: 'limit_exceeded',
  message: 'The screening limit does not allow this transaction',
  details: [{ field: 'destReq.reqDetails', issue: 'the destination cannot be paid', limit: 'screening' }],
}

export const sends = {
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

export async function setUp(env: Record<string, string>) {
  const h = await createHarness({ SANDBOX_PAYOUT_DELAY_MS: '0', QUOTE_TTL_S: '600', ...env })
  const a = await h.createAccount({ name: 'Sender' })
  await h.fund(a.accountId, 'USDT', '1000')
  await h.fund(a.accountId, 'VND', '10000000')
  await h.fund(a.accountId, 'BTC', '1')
  const payer = await h.createAccount({ name: 'Outside' })
  return { h, a, payer }
}

/** An outside invoice of the sandbox's other node, and the key of the node that signed it. */
export async function outsideInvoice(h: Harness, payer: TestAccount) {
  const r = await h.api('POST', '/sandbox/lightning/invoice', payer.token, { amount: '0.0001' })
  expect(r.status).toBe(200)
  const decoded = decodeInvoice(r.body.paymentRequest)
  if ('error' in decoded) throw new Error(decoded.error)
  return { paymentRequest: r.body.paymentRequest as string, payee: decoded.payeeNodeKey }
}
export const lnSend = (paymentRequest: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
})

export const admin = (h: Harness) => (method: string, url: string, body?: unknown) =>
  h.api(method, url, h.adminToken, body)

/**
 * A stand-in screening provider speaking the format of docs/screening.md (ours: no upstream to
 * copy): it answers each destination listed in `listed` as a match of list `stand-in`.
 */
export async function standInProvider(listed: Set<string>) {
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
