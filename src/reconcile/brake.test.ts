import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { createReconciler } from './service.js'
import { brakeSettings } from './brake.js'
import { operatorClient } from '../../test/admin/operator-client.js'

describe('the brake: RECONCILE_HALT_SENDS', () => {
  let h: Harness
  let a: TestAccount
  let address: string
  const admin = (method: string, url: string, body?: unknown) => h.api(method, url, h.adminToken, body)
  // A run that counts towards the brake: the operator's audited POST (a GET only reads).
  const reconcile = async () => (await admin('POST', '/admin/reconciliation/run', {})).body
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
      railCurrencies: h.c.kinds.railCurrencies,
      rails: [{ rail: 'lightning', adapter: 'lnd', impl: { reserves: () => new Promise(() => {}) } }],
      timeoutMs: 50,
      brake: h.c.reconcileBrake,
    })
    for (let i = 0; i < 4; i++) expect((await hanging({ record: {} })).pausedRails).toEqual([])
    expect((await lnSend()).status).toBe(200)
  })

  it('a reading by a viewer never moves the brake; only an audited run by finance counts', async () => {
    const client = operatorClient(h.app, h.adminToken)
    const viewer = await client.signIn(await client.createOperator('viewer'))
    const finance = await client.signIn(await client.createOperator('finance'))
    const readings = async () =>
      (
        await h.c.db.query<{ deficit_readings: number; paused_at: unknown }>(
          "SELECT deficit_readings, paused_at FROM reconcile_brake WHERE rail = 'bank'",
        )
      ).rows.map((r) => [Number(r.deficit_readings), r.paused_at])
    const before = await readings()
    await admin('POST', '/admin/sandbox/drift/move', { rail: 'bank', direction: 'out', amount: '1000' })
    for (let i = 0; i < 3; i++) {
      const read = await client.request('GET', '/admin/reconciliation', { session: viewer })
      expect(read.status).toBe(200)
      expect(read.body.rails.find((e: any) => e.rail === 'bank').status).toBe('deficit')
      expect(read.body.pausedRails).toEqual([])
    }
    // Three readings with a deficit (K = 2) left the brake exactly as it was.
    expect(await readings()).toEqual(before)
    // A counted run is a state change: not for a viewer.
    const refused = await client.request('POST', '/admin/reconciliation/run', { session: viewer, body: {} })
    expect([refused.status, refused.body.error]).toEqual([403, 'forbidden'])
    const audited = async () =>
      Number(
        (
          await h.c.db.query<{ n: unknown }>(
            "SELECT count(*)::int8 AS n FROM admin_audit WHERE action = 'reconciliation.record'",
          )
        ).rows[0]!.n,
      )
    const rowsBefore = await audited()
    let last
    for (let i = 0; i < 2; i++) {
      last = await client.request('POST', '/admin/reconciliation/run', { session: finance, body: {} })
      expect(last.status, last.raw).toBe(200)
    }
    expect(last!.body.pausedRails).toEqual(['bank'])
    expect(await audited()).toBe(rowsBefore + 2)
    await admin('POST', '/admin/sandbox/drift/move', { rail: 'bank', direction: 'in', amount: '1000' })
    expect((await reconcile()).pausedRails).toEqual([])
  })

  it('checks its settings', () => {
    expect(brakeSettings({})).toEqual({ haltSends: false, haltAfter: 3 })
    expect(() => brakeSettings({ RECONCILE_HALT_SENDS: 'yes' })).toThrow(/RECONCILE_HALT_SENDS/)
    expect(() => brakeSettings({ RECONCILE_HALT_AFTER: '0' })).toThrow(/RECONCILE_HALT_AFTER/)
  })
})
