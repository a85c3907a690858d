import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startWorkers, type Workers } from '../worker.js'
import { pointCliAt, runCli } from '../../test/helpers/cli.js'
import { createReconciler } from './service.js'
import type { ReconciliationReport } from './reconcile.js'

/** Poll a transaction until it reaches `state`. */
async function until(h: Harness, a: TestAccount, txnId: string, state: string, timeoutMs = 5_000) {
  const start = Date.now()
  for (;;) {
    const t = (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
    if (t.txnState === state) return t
    if (Date.now() - start > timeoutMs)
      throw new Error(`still ${t.txnState} after ${timeoutMs} ms, waiting for ${state}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('reconciliation against the sandbox rails', () => {
  let h: Harness
  let a: TestAccount
  let restoreCli: () => void

  const admin = (method: string, url: string, body?: unknown) => h.api(method, url, h.adminToken, body)
  const report = async (): Promise<ReconciliationReport> => {
    const r = await admin('GET', '/admin/reconciliation')
    expect(r.status).toBe(200)
    return r.body
  }
  const rail = (r: ReconciliationReport, name: string) => r.rails.find((e) => e.rail === name)!
  const deltas = (r: ReconciliationReport) => Object.fromEntries(r.rails.map((e) => [e.rail, e.delta]))
  /** The command line's output and exit code. */
  const cli = runCli
  const gauge = async (name: string, labels: string) => {
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`))
    return line === undefined ? undefined : Number(line.split(' ').pop())
  }
  /** An ln_receive of `amount` BTC, paid on the sandbox node by the ordinary control (the service is told). */
  const lnReceive = async (amount: string) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amount, reqDetails: {} },
    })
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    return {
      txnId: q.body.txnId as string,
      paymentRequest: c.body.sourceReq.reqDetails.paymentRequest as string,
    }
  }

  beforeAll(async () => {
    h = await createHarness({ RAILS: 'sandbox' })
    a = await h.createAccount({ name: 'Reconcile test' })
    restoreCli = await pointCliAt(h)
  })
  afterAll(async () => {
    restoreCli?.()
    await h?.close()
  })

  it('a fresh service reconciles to zero on every rail', async () => {
    const r = await report()
    expect(r.rails.map((e) => [e.rail, e.ccy, e.status, e.delta])).toEqual([
      ['lightning', 'BTC', 'ok', '0'],
      ['onchain', 'BTC', 'ok', '0'],
      ['tron', 'USDT', 'ok', '0'],
      ['bank', 'VND', 'ok', '0'],
      ['ethereum', 'USDT', 'ok', '0'],
    ])
    expect(r.ok).toBe(true)
    expect(r.incomplete).toBe(false)
  })

  it('reconciles to zero after Lightning and on-chain receives and a Lightning send, with workers running', async () => {
    const workers: Workers = startWorkers(h.c)
    try {
      const ln = await lnReceive('0.0005')
      expect(
        (await admin('POST', '/admin/sandbox/lightning/pay', { paymentRequest: ln.paymentRequest })).status,
      ).toBe(200)
      await until(h, a, ln.txnId, 'completed')

      const oc = await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0003', reqDetails: {} },
      })
      const occ = await h.api('PUT', `/api/v2/transaction/${oc.body.txnId}/confirm`, a.token)
      await admin('POST', '/admin/sandbox/onchain/send', {
        address: occ.body.sourceReq.reqDetails.address,
        amount: '0.0003',
      })
      await until(h, a, oc.body.txnId, 'srccreated')
      // Seen in the mempool, not yet credited: reported as incoming, and no delta.
      const mid = rail(await report(), 'onchain')
      expect([mid.incoming, mid.delta, mid.status]).toEqual(['0.0003', '0', 'ok'])
      await admin('POST', '/admin/sandbox/onchain/mine', { blocks: 1 })
      await until(h, a, oc.body.txnId, 'completed')

      // A send to an outside node: 1000 sat, routing fee 1 sat + 0.1% = 2 sat.
      const invoice = await admin('POST', '/admin/sandbox/lightning/invoice', { amount: '0.00001' })
      const s = await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'BTC',
          method: 'lightning',
          reqDetails: { paymentRequest: invoice.body.paymentRequest },
        },
      })
      expect(s.status).toBe(200)
      await h.api('PUT', `/api/v2/transaction/${s.body.txnId}/confirm`, a.token)
      await until(h, a, s.body.txnId, 'completed')

      // An account paying another's invoice is settled inside: the node never sees it.
      const b = await h.createAccount({ name: 'Internal payer' })
      await h.fund(b.accountId, 'BTC', '0.01')
      const inner = await lnReceive('0.0001')
      const pay = await h.api('POST', '/api/v2/transaction', b.token, {
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest: inner.paymentRequest } },
      })
      expect(pay.status).toBe(200)
      await h.api('PUT', `/api/v2/transaction/${pay.body.txnId}/confirm`, b.token)
      await until(h, a, inner.txnId, 'completed')
    } finally {
      await workers.stop()
    }
    const r = await report()
    expect(deltas(r)).toEqual({ lightning: '0', onchain: '0', tron: '0', bank: '0', ethereum: '0' })
    expect(rail(r, 'lightning').ledger).toBe('0.00048998')
    expect(rail(r, 'lightning').reported).toBe('0.00048998')
    expect(rail(r, 'onchain').reported).toBe('0.0003')
    expect(r.ok).toBe(true)
    // Item matching: every payment the sandbox node and chain made or received has its transaction.
    expect(r.orphans).toEqual([])
    expect(r.unmatched).toEqual([])
    const btc = r.currencies.find((c) => c.ccy === 'BTC')!
    expect(btc.assets).toBe('0.00078998')
    const { code, out } = await cli('reconcile')
    expect(code).toBe(0)
    expect(out).toContain('Every rail reconciles')
    expect(await gauge('svcpay_reserve_delta', 'rail="lightning",ccy="BTC"')).toBe(0)
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="lightning"')).toBe(0)
    await h.expectBooksBalanced()
  })

  it('money moved off a sandbox rail is a deficit in the command, the API and the gauge; moved back, it clears', async () => {
    const moved = await admin('POST', '/admin/sandbox/drift/move', {
      rail: 'onchain',
      direction: 'out',
      amount: '0.0001',
    })
    expect(moved.status).toBe(200)
    const r = await report()
    expect([rail(r, 'onchain').status, rail(r, 'onchain').delta]).toEqual(['deficit', '-0.0001'])
    expect(rail(r, 'lightning').delta).toBe('0')
    expect(r.ok).toBe(false)
    expect(await gauge('svcpay_reserve_delta', 'rail="onchain",ccy="BTC"')).toBe(-10_000)
    const { code, out } = await cli('reconcile', '--json')
    expect(code).toBe(1)
    expect(rail(JSON.parse(out), 'onchain').delta).toBe('-0.0001')
    const human = await cli('reconcile')
    expect(human.out).toContain('DEFICIT on onchain (-0.0001 BTC)')

    // The same on a payout rail, in its own currency.
    await admin('POST', '/admin/sandbox/drift/move', { rail: 'tron', direction: 'out', amount: '12.5' })
    expect(rail(await report(), 'tron').delta).toBe('-12.5')
    expect(await gauge('svcpay_reserve_delta', 'rail="tron",ccy="USDT"')).toBe(-12_500_000)

    await admin('POST', '/admin/sandbox/drift/move', { rail: 'onchain', direction: 'in', amount: '0.0001' })
    await admin('POST', '/admin/sandbox/drift/move', { rail: 'tron', direction: 'in', amount: '12.5' })
    const cleared = await report()
    expect(deltas(cleared)).toEqual({ lightning: '0', onchain: '0', tron: '0', bank: '0', ethereum: '0' })
    expect((await cli('reconcile')).code).toBe(0)
    expect(await gauge('svcpay_reserve_delta', 'rail="onchain",ccy="BTC"')).toBe(0)
  })

  it('an invoice of ours paid on the node without the service knowing is a surplus on Lightning', async () => {
    const ln = await lnReceive('0.0002')
    const paid = await admin('POST', '/admin/sandbox/drift/pay-invoice', {
      paymentRequest: ln.paymentRequest,
    })
    expect(paid.status).toBe(200)
    // No worker runs: the service has not been told, its receive is still open.
    expect((await h.api('GET', `/api/v2/transaction/${ln.txnId}`, a.token)).body.txnState).toBe('srccreated')
    const r = await report()
    expect([rail(r, 'lightning').status, rail(r, 'lightning').delta]).toEqual(['surplus', '0.0002'])
    expect(await gauge('svcpay_reserve_delta', 'rail="lightning",ccy="BTC"')).toBe(20_000)
    // Item matching names the payment the ledger does not know: an orphan on the rail's side.
    expect(r.orphans).toEqual([
      expect.objectContaining({
        rail: 'lightning',
        side: 'rail',
        reason: 'not_in_ledger',
        amount: '0.0002',
        txnId: null,
      }),
    ])
    expect(r.ok).toBe(false)
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="lightning"')).toBe(1)
    const { code, out } = await cli('reconcile')
    expect(code).toBe(1)
    expect(out).toMatch(/lightning\s+BTC\s+sandbox\s+surplus/)
    expect(out).toContain('lightning on the rail, not in the ledger: 0.0002 BTC')
    // Once the worker looks the invoice up, the books catch up with the node.
    const workers = startWorkers(h.c)
    try {
      await until(h, a, ln.txnId, 'completed')
    } finally {
      await workers.stop()
    }
    const caughtUp = await report()
    expect(rail(caughtUp, 'lightning').delta).toBe('0')
    expect(caughtUp.orphans).toEqual([])
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="lightning"')).toBe(0)
  })

  it('a deposit credited twice is a deficit of its amount, though the books still balance', async () => {
    const ln = await lnReceive('0.0003')
    await admin('POST', '/admin/sandbox/lightning/pay', { paymentRequest: ln.paymentRequest })
    await until(h, a, ln.txnId, 'completed')
    expect(rail(await report(), 'lightning').delta).toBe('0')
    const dup = await admin('POST', '/admin/sandbox/drift/duplicate-deposit', { txnId: ln.txnId })
    expect(dup.status).toBe(200)
    expect(dup.body.duplicated).toBe(0.0003)
    const r = await report()
    expect([rail(r, 'lightning').status, rail(r, 'lightning').delta]).toEqual(['deficit', '-0.0003'])
    expect(await gauge('svcpay_reserve_delta', 'rail="lightning",ccy="BTC"')).toBe(-30_000)
    // Item matching names the entry no transaction explains: an orphan on the ledger's side.
    expect(r.orphans).toEqual([
      expect.objectContaining({
        rail: 'lightning',
        side: 'ledger',
        reason: 'entry_without_transaction',
        amount: '0.0003',
      }),
    ])
    expect((await cli('reconcile')).code).toBe(1)
    // The ledger check cannot see it: every entry balances.
    await h.expectBooksBalanced()
    // Only completed receives can be duplicated.
    const open = await lnReceive('0.0001')
    const refused = await admin('POST', '/admin/sandbox/drift/duplicate-deposit', { txnId: open.txnId })
    expect([refused.status, refused.body.error]).toEqual([400, 'invalid_request'])
    // Undo the drift for the tests after this one: the money comes back onto the rail.
    await admin('POST', '/admin/sandbox/drift/move', { rail: 'lightning', direction: 'in', amount: '0.0003' })
    expect(rail(await report(), 'lightning').delta).toBe('0')
  })

  it('on-chain is matched by txid: a receive and a send match; a deposit credited twice is an orphan and a deficit', async () => {
    await h.fund(a.accountId, 'BTC', '0.01')
    const workers: Workers = startWorkers(h.c)
    let receiveId: string
    let sendId: string
    try {
      const oc = await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0004', reqDetails: {} },
      })
      receiveId = oc.body.txnId
      const occ = await h.api('PUT', `/api/v2/transaction/${receiveId}/confirm`, a.token)
      await admin('POST', '/admin/sandbox/onchain/send', {
        address: occ.body.sourceReq.reqDetails.address,
        amount: '0.0004',
      })
      await until(h, a, receiveId, 'srccreated')
      await admin('POST', '/admin/sandbox/onchain/mine', { blocks: 1 })
      await until(h, a, receiveId, 'completed')
      const send = await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'BTC',
          method: 'on-chain',
          amtRequested: '0.0002',
          reqDetails: { address: 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2' },
        },
      })
      expect(send.status).toBe(200)
      sendId = send.body.txnId
      await h.api('PUT', `/api/v2/transaction/${sendId}/confirm`, a.token)
      // Mine only once the worker has put the send on the chain.
      for (let i = 0; i < 200; i++) {
        const t = (await h.api('GET', `/api/v2/transaction/${sendId}`, a.token)).body
        if (t.destReq?.reqDetails?.txid || t.txnState === 'completed') break
        await new Promise((r) => setTimeout(r, 50))
      }
      await admin('POST', '/admin/sandbox/onchain/mine', { blocks: 1 })
      await until(h, a, sendId, 'completed', 10_000)
    } finally {
      await workers.stop()
    }
    const clean = await report()
    expect(deltas(clean)).toEqual({ lightning: '0', onchain: '0', tron: '0', bank: '0', ethereum: '0' })
    // The Lightning entry duplicated by the test before stays an orphan in the window; on-chain has none.
    const onchainOrphans = (rep: ReconciliationReport) => rep.orphans.filter((o) => o.rail === 'onchain')
    expect(onchainOrphans(clean)).toEqual([])
    expect(clean.unmatched).toEqual([])
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="onchain"')).toBe(0)

    const dup = await admin('POST', '/admin/sandbox/drift/duplicate-deposit', { txnId: receiveId })
    expect(dup.status).toBe(200)
    const r = await report()
    expect([rail(r, 'onchain').status, rail(r, 'onchain').delta]).toEqual(['deficit', '-0.0004'])
    expect(onchainOrphans(r)).toEqual([
      expect.objectContaining({
        rail: 'onchain',
        side: 'ledger',
        reason: 'entry_without_transaction',
        amount: '0.0004',
      }),
    ])
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="onchain"')).toBe(1)
    const { code, out } = await cli('reconcile', '--json')
    expect(code).toBe(1)
    expect(onchainOrphans(JSON.parse(out))).toHaveLength(1)
    await h.expectBooksBalanced()
    // Undo the drift: the money comes back onto the chain; the orphan entry stays in the window.
    await admin('POST', '/admin/sandbox/drift/move', { rail: 'onchain', direction: 'in', amount: '0.0004' })
    expect(rail(await report(), 'onchain').delta).toBe('0')
  })

  it('a TRON payout, a VND payout and a swap reconcile to zero with every rail matched', async () => {
    await h.fund(a.accountId, 'USDT', '1000')
    await h.fund(a.accountId, 'VND', '10000000')
    const before = await report()
    const workers: Workers = startWorkers(h.c)
    try {
      const bodies = [
        {
          sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
          // The USDT token contract on TRON mainnet: a well-known valid address.
          destReq: {
            ccy: 'USDT',
            method: 'tron',
            amtRequested: 100,
            reqDetails: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
          },
        },
        {
          sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
          destReq: {
            ccy: 'VND',
            method: 'vnd-instant',
            amtRequested: 500_000,
            reqDetails: { bankAcctNum: '0123456789', institutionCode: '970436' },
            kyc: {
              type: 'individual',
              details: { legalFullName: 'Nguyễn Thị Minh Khai', countryCode: 'VN' },
            },
          },
          sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
        },
        {
          sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001', reqDetails: {} },
          destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
        },
      ]
      for (const body of bodies) {
        const q = await h.api('POST', '/api/v2/transaction', a.token, body)
        expect(q.status).toBe(200)
        expect((await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)).status).toBe(200)
        await until(h, a, q.body.txnId, 'completed', 10_000)
      }
    } finally {
      await workers.stop()
    }
    const r = await report()
    expect(deltas(r)).toEqual({ lightning: '0', onchain: '0', tron: '0', bank: '0', ethereum: '0' })
    // Money left by the payout rails: 100 USDT, and the VND payout's 500000 dong.
    expect([rail(before, 'tron').ledger, rail(r, 'tron').ledger]).toEqual(['0', '-100'])
    expect([rail(before, 'bank').ledger, rail(r, 'bank').ledger]).toEqual(['0', '-500000'])
    expect(r.orphans.filter((o) => o.rail === 'tron' || o.rail === 'bank')).toEqual([])
    expect(r.unmatched).toEqual([])
    await h.expectBooksBalanced()
  })

  it('item matching looks back RECONCILE_WINDOW_S: an orphan entry from before the window is not reported', async () => {
    const sandbox = h.c.bitcoin.rails.sandbox
    const withWindow = (windowMs?: number) =>
      createReconciler({
        db: h.c.db,
        metrics: h.c.metrics,
        railCurrencies: h.c.kinds.railCurrencies,
        rails: [
          { rail: 'lightning', adapter: 'sandbox', impl: sandbox.lightning! },
          { rail: 'onchain', adapter: 'sandbox', impl: sandbox.onchain! },
        ],
        timeoutMs: 5_000,
        ...(windowMs === undefined ? {} : { windowMs }),
      })()
    // The default window (7 days) still holds the entries duplicated by the tests before.
    const wide = await withWindow()
    expect(wide.orphans.map((o) => [o.rail, o.reason])).toEqual([
      ['lightning', 'entry_without_transaction'],
      ['onchain', 'entry_without_transaction'],
    ])
    await new Promise((r) => setTimeout(r, 50))
    const narrow = await withWindow(20)
    expect(narrow.orphans).toEqual([])
    expect(narrow.unmatched).toEqual([])
  })

  it('the drift controls answer the admin token only, with a clear error for bad input', async () => {
    const r = await h.api('POST', '/admin/sandbox/drift/move', a.token, {
      rail: 'onchain',
      direction: 'out',
      amount: '1',
    })
    expect(r.status).toBe(401)
    const bad = await admin('POST', '/admin/sandbox/drift/move', {
      rail: 'onchain',
      direction: 'out',
      amount: '-1',
    })
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_amount'])
    const unknownRail = await admin('POST', '/admin/sandbox/drift/move', {
      rail: 'eth',
      direction: 'out',
      amount: '1',
    })
    expect(unknownRail.status).toBe(400)
  })

  it('a rail that does not answer is unknown, never zero, and is no deficit', async () => {
    const reconcile = createReconciler({
      db: h.c.db,
      metrics: h.c.metrics,
      railCurrencies: h.c.kinds.railCurrencies,
      rails: [
        { rail: 'lightning', adapter: 'lnd', impl: { reserves: () => new Promise(() => {}) } },
        {
          rail: 'onchain',
          adapter: 'esplora',
          impl: { reserves: () => Promise.reject(new Error('connect ECONNREFUSED')) },
        },
        { rail: 'tron', adapter: 'trongrid', impl: {} },
      ],
      timeoutMs: 100,
    })
    const r = await reconcile()
    expect(r.rails.map((e) => [e.rail, e.status, e.reported, e.delta])).toEqual([
      ['lightning', 'unknown', null, null],
      ['onchain', 'unknown', null, null],
      ['tron', 'unknown', null, null],
    ])
    expect(r.rails[0]!.note).toBe('no answer within 100 ms')
    expect(r.rails[1]!.note).toContain('ECONNREFUSED')
    expect(r.ok).toBe(true)
    expect(r.incomplete).toBe(true)
    expect(r.currencies.find((c) => c.ccy === 'BTC')!.assets).toBeNull()
    expect(await gauge('svcpay_reserve_delta', 'rail="lightning",ccy="BTC"')).toBeNaN()
  })
})
