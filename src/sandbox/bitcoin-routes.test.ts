import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import bolt11 from 'bolt11'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startWorkers, type Workers } from '../worker.js'
import { run } from '../cli/main.js'

const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] }

/** Poll a transaction until it reaches `state`; returns how long that took. */
async function until(
  h: Harness,
  a: TestAccount,
  txnId: string,
  state: string,
  timeoutMs: number,
): Promise<number> {
  const start = Date.now()
  for (;;) {
    const t = (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
    if (t.txnState === state) return Date.now() - start
    if (Date.now() - start > timeoutMs)
      throw new Error(`still ${t.txnState} after ${timeoutMs} ms, waiting for ${state}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('sandbox Bitcoin endpoints with the running worker', () => {
  let h: Harness
  let workers: Workers
  let a: TestAccount
  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Worker test' })
    workers = startWorkers(h.c)
  })
  afterAll(async () => {
    await workers?.stop()
    await h?.close()
  })

  it('completes a paid Lightning receive within 2 s of /sandbox/lightning/pay, without a hand-driven worker', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
    })
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    // Let the worker go idle first, so that only the wake-up can make it quick.
    await new Promise((r) => setTimeout(r, 300))
    const paid = await h.api('POST', '/sandbox/lightning/pay', a.token, {
      paymentRequest: c.body.sourceReq.reqDetails.paymentRequest,
    })
    expect(paid.status).toBe(200)
    const ms = await until(h, a, q.body.txnId, 'completed', 2_000)
    expect(ms).toBeLessThan(2_000)
    await h.expectBooksBalanced()
  })

  it('moves an on-chain receive on by itself: payment seen, then mined', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0002', reqDetails: {} },
    })
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    const sent = await h.api('POST', '/sandbox/onchain/send', a.token, {
      address: c.body.sourceReq.reqDetails.address,
      amount: 0.0002,
    })
    expect(sent.status).toBe(200)
    expect(await until(h, a, q.body.txnId, 'srccreated', 2_000)).toBeLessThan(2_000)
    const mined = await h.api('POST', '/sandbox/onchain/mine', a.token, { blocks: 1 })
    expect(mined.status).toBe(200)
    expect(await until(h, a, q.body.txnId, 'completed', 2_000)).toBeLessThan(2_000)
    await h.expectBooksBalanced()
  })

  it('answers bad input with the contract error bodies, and wants a token', async () => {
    const cases: Array<[string, unknown, number, string, string | undefined]> = [
      [
        '/sandbox/lightning/pay',
        { paymentRequest: 'lnbcrt1xyz' },
        400,
        'invalid_payment_request',
        'paymentRequest',
      ],
      ['/sandbox/lightning/pay', {}, 400, 'invalid_request', 'paymentRequest'],
      ['/sandbox/lightning/invoice', { amount: '0.000000001' }, 400, 'invalid_amount', 'amount'],
      ['/sandbox/lightning/invoice', { outcome: 'maybe' }, 400, 'invalid_request', 'outcome'],
      [
        '/sandbox/onchain/send',
        { address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', amount: 1 },
        400,
        'invalid_address',
        'address',
      ],
      [
        '/sandbox/onchain/send',
        { address: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080', amount: 0 },
        400,
        'invalid_amount',
        'amount',
      ],
      ['/sandbox/onchain/mine', { blocks: 0 }, 400, 'invalid_request', 'blocks'],
    ]
    for (const [url, body, status, code, field] of cases) {
      const r = await h.api('POST', url, a.token, body)
      expect([r.status, r.body.error, r.body.details?.[0]?.field], `${url} ${JSON.stringify(body)}`).toEqual([
        status,
        code,
        field,
      ])
      expect(typeof r.body.message).toBe('string')
    }
    for (const url of [
      '/sandbox/lightning/pay',
      '/sandbox/lightning/invoice',
      '/sandbox/onchain/send',
      '/sandbox/onchain/mine',
    ]) {
      const r = await h.api('POST', url, undefined, {})
      expect([r.status, r.body.error]).toEqual([401, 'unauthorized'])
      // The operator paths take the admin token only.
      const admin = await h.api('POST', `/admin${url}`, a.token, {})
      expect([admin.status, admin.body.error]).toEqual([401, 'unauthorized'])
    }
  })

  it('serves the command line: svcpay sandbox ln-invoice, ln-pay, onchain-send and mine through the admin paths', async () => {
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' })
    const saved = { SVCPAY_URL: process.env.SVCPAY_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN }
    process.env.SVCPAY_URL = address
    process.env.ADMIN_TOKEN = h.adminToken
    const cli = async (...args: string[]) => {
      const lines: string[] = []
      await run(args, (s) => lines.push(s))
      return lines.join('\n')
    }
    try {
      const invoice = await cli('sandbox', 'ln-invoice', '--amount', '0.00005', '--outcome', 'fail')
      expect(bolt11.decode(invoice, REGTEST).satoshis).toBe(5000)
      const zero = await cli('sandbox', 'ln-invoice')
      expect(bolt11.decode(zero, REGTEST).satoshis).toBeNull()

      const q = await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.00003', reqDetails: {} },
      })
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      expect(await cli('sandbox', 'ln-pay', c.body.sourceReq.reqDetails.paymentRequest)).toMatch(/^paid: /)
      await until(h, a, q.body.txnId, 'completed', 2_000)

      const r = await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.00004', reqDetails: {} },
      })
      const rc = await h.api('PUT', `/api/v2/transaction/${r.body.txnId}/confirm`, a.token)
      expect(await cli('sandbox', 'onchain-send', rc.body.sourceReq.reqDetails.address, '0.00004')).toMatch(
        /^sent: txid [0-9a-f]{64}$/,
      )
      await until(h, a, r.body.txnId, 'srccreated', 2_000)
      const height = Number(/height (\d+)/.exec(await cli('sandbox', 'mine', '3'))![1])
      expect(height).toBeGreaterThanOrEqual(103)
      await until(h, a, r.body.txnId, 'completed', 2_000)
      await h.expectBooksBalanced()
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  })
})

describe('Bitcoin with real rails configured (nodes unreachable)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({
      RAILS: 'real',
      TRON: 'sandbox',
      VND: 'sandbox',
      ETH: 'sandbox',
      LIGHTNING: 'lnd',
      LND_REST_URL: 'https://127.0.0.1:9',
      LND_MACAROON_HEX: '0201',
      ONCHAIN: 'esplora',
      ESPLORA_URL: 'http://127.0.0.1:9',
    })
  })
  afterAll(async () => h?.close())

  it('has no sandbox endpoints at all', async () => {
    const a = await h.createAccount({ name: 'Real' })
    for (const url of [
      '/sandbox/lightning/pay',
      '/sandbox/lightning/invoice',
      '/sandbox/onchain/send',
      '/sandbox/onchain/mine',
    ]) {
      expect((await h.api('POST', url, a.token, {})).status).toBe(404)
    }
    expect(h.c.bitcoin.rails.lightning.name).not.toBe('sandbox')
    expect(h.c.bitcoin.rails.onchain.name).not.toBe('sandbox')
    expect(h.c.bitcoin.rails.sandbox).toEqual({})
  })

  it('answers 503 when the node cannot be reached, leaving the transaction as it was', async () => {
    const a = await h.createAccount({ name: 'Unreachable' })
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
    })
    expect(q.status).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect([c.status, c.body.error]).toEqual([503, 'service_unavailable'])
    expect((await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)).body.txnState).toBe('quoted')
    const send = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'BTC',
        method: 'on-chain',
        amtRequested: '0.001',
        reqDetails: { address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' },
      },
    })
    // This Esplora rail has no signer: its sends are refused at quote whatever the node's state
    // (docs/rails-bitcoin.md), before the node is asked, and nothing is quoted.
    expect([send.status, send.body.error]).toEqual([400, 'method_not_available'])
  })
})
