import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { createReconciler } from './service.js'
import { brakeSettings } from './brake.js'

describe('the brake: RECONCILE_HALT_SENDS', () => {
  let h: Harness
  let a: TestAccount
  let address: string
  const admin = (method: string, url: string, body?: unknown) => h.api(method, url, h.adminToken, body)
  const reconcile = async () => (await admin('GET', '/admin/reconciliation')).body
  const onchainSend = () =>
    h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: '0.0001', reqDetails: { address } },
    })
  const lnSend = async () => {
    const invoice = await admin('POST', '/admin/sandbox/lightning/invoice', { amount: '0.00001' })
    return h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'BTC',
        method: 'lightning',
        reqDetails: { paymentRequest: invoice.body.paymentRequest },
      },
    })
  }

  beforeAll(async () => {
    h = await createHarness({ RAILS: 'sandbox', RECONCILE_HALT_SENDS: 'true', RECONCILE_HALT_AFTER: '2' })
    a = await h.createAccount({ name: 'Brake test' })
    await h.fund(a.accountId, 'BTC', '0.1')
    // An address of the sandbox chain to send to: one of our own receive addresses.
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
    })
    address = (await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)).body.sourceReq
      .reqDetails.address
  })
  afterAll(async () => {
    await h?.close()
  })

  it('pauses sends on a rail after K deficit readings, only on that rail, and resumes when it clears', async () => {
    const quoted = await onchainSend()
    expect(quoted.status).toBe(200)
    await admin('POST', '/admin/sandbox/drift/move', { rail: 'onchain', direction: 'out', amount: '0.001' })
    const first = await reconcile()
    expect(first.pausedRails).toEqual([])
    // One reading is not enough (K = 2): sends go on.
    expect((await onchainSend()).status).toBe(200)
    const second = await reconcile()
    expect(second.pausedRails).toEqual(['onchain'])
    const refused = await onchainSend()
    expect([refused.status, refused.body.error]).toEqual([503, 'sends_paused'])
    expect(refused.body.message).toContain('onchain')
    // A quote made before the pause cannot be confirmed while it lasts.
    const confirm = await h.api('PUT', `/api/v2/transaction/${quoted.body.txnId}/confirm`, a.token)
    expect([confirm.status, confirm.body.error]).toEqual([503, 'sends_paused'])
    // Other rails, and receives on the paused one, are not affected.
    expect((await lnSend()).status).toBe(200)
    const receive = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
    })
    expect(receive.status).toBe(200)
    // The money comes back: the next reading clears the pause.
    await admin('POST', '/admin/sandbox/drift/move', { rail: 'onchain', direction: 'in', amount: '0.001' })
    expect((await reconcile()).pausedRails).toEqual([])
    expect((await onchainSend()).status).toBe(200)
    const confirmed = await h.api('PUT', `/api/v2/transaction/${quoted.body.txnId}/confirm`, a.token)
    expect(confirmed.status).toBe(200)
    await h.expectBooksBalanced()
  })

  it('a rail that does not answer never pauses sends, however often it is read', async () => {
    const hanging = createReconciler({
      db: h.c.db,
      metrics: h.c.metrics,
      rails: [{ rail: 'lightning', adapter: 'lnd', impl: { reserves: () => new Promise(() => {}) } }],
      timeoutMs: 50,
      brake: h.c.reconcileBrake,
    })
    for (let i = 0; i < 4; i++) expect((await hanging()).pausedRails).toEqual([])
    expect((await lnSend()).status).toBe(200)
  })

  it('checks its settings', () => {
    expect(brakeSettings({})).toEqual({ haltSends: false, haltAfter: 3 })
    expect(() => brakeSettings({ RECONCILE_HALT_SENDS: 'yes' })).toThrow(/RECONCILE_HALT_SENDS/)
    expect(() => brakeSettings({ RECONCILE_HALT_AFTER: '0' })).toThrow(/RECONCILE_HALT_AFTER/)
  })
})
