import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { operatorClient, type Session } from '../../test/admin/operator-client.js'
import { runDueTransactions } from '../transactions/worker.js'

const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const BTC_ADDRESS = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
const KYC = { type: 'individual', details: { legalFullName: 'Trần Văn An', countryCode: 'VN' } }

const tron = (amount: string) => ({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'USDT', method: 'tron', amtRequested: amount, reqDetails: { address: TRON_ADDRESS } },
})
const vnd = (amount: string) => ({
  sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
  destReq: {
    ccy: 'VND',
    method: 'vnd-instant',
    amtRequested: amount,
    reqDetails: { bankAcctNum: '0123456789', institutionCode: '970436' },
    kyc: KYC,
  },
  sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
})
const onchain = (amount: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: amount, reqDetails: { address: BTC_ADDRESS } },
})

/**
 * The brake (docs/reconciliation.md) against everything that sends, on every rail: an approval of a
 * send waiting in `processing` on a paused rail is refused with `sends_paused` and recorded nowhere
 * (the approval stays waiting, no audit row); a send confirmed before the pause waits in
 * `srccreated` while it lasts, and the worker hands it to the rail once it lifts.
 */
describe(`the brake holds approvals and the worker's sends (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  let a: TestAccount
  const ops = {} as Record<'reviewer' | 'approver', Session>
  const admin = (method: string, url: string, body?: unknown) => h.api(method, url, h.adminToken, body)
  // More than the sends in flight count as `outgoing`, so that each rail shows a deficit.
  const drift: Array<[string, string]> = [
    ['lightning', '0.01'],
    ['onchain', '0.01'],
    ['tron', '1000'],
    ['bank', '10000000'],
  ]
  const pauseAll = async () => {
    for (const [rail, amount] of drift)
      await admin('POST', '/admin/sandbox/drift/move', { rail, direction: 'out', amount })
    const run = await admin('POST', '/admin/reconciliation/run', {})
    expect(run.body.pausedRails).toEqual(['bank', 'lightning', 'onchain', 'tron'])
  }
  const liftAll = async () => {
    for (const [rail, amount] of drift)
      await admin('POST', '/admin/sandbox/drift/move', { rail, direction: 'in', amount })
    expect((await admin('POST', '/admin/reconciliation/run', {})).body.pausedRails).toEqual([])
  }
  const state = async (txnId: string) =>
    (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body.txnState as string
  const work = () => runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  const create = async (body: unknown) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, body)
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    return { txnId: q.body.txnId as string, state: c.body.txnState as string }
  }

  beforeAll(async () => {
    h = await createHarness({
      RAILS: 'sandbox',
      SANDBOX_PAYOUT_DELAY_MS: '0',
      QUOTE_TTL_S: '600',
      RECONCILE_HALT_SENDS: 'true',
      RECONCILE_HALT_AFTER: '1',
      APPROVAL_THRESHOLD_USDT: '100',
      APPROVAL_THRESHOLD_VND: '5000000',
      APPROVAL_THRESHOLD_BTC: '0.001',
      APPROVAL_TTL_S: '3600',
    })
    client = operatorClient(h.app, h.adminToken)
    ops.reviewer = await client.signIn(await client.createOperator('finance'))
    ops.approver = await client.signIn(await client.createOperator('finance'))
    a = await h.createAccount({ name: 'Paused sender' })
    await h.fund(a.accountId, 'USDT', '10000')
    await h.fund(a.accountId, 'VND', '100000000')
    await h.fund(a.accountId, 'BTC', '1')
  }, 120_000)
  afterAll(() => h?.close())

  it('refuses an approval on a paused rail with sends_paused and records nothing; approved once it lifts', async () => {
    const waiting = [await create(tron('150')), await create(vnd('6000000')), await create(onchain('0.002'))]
    for (const w of waiting) {
      expect(w.state).toBe('processing')
      const reviewed = await client.request('POST', `/admin/approvals/${w.txnId}/review`, {
        session: ops.reviewer,
        body: {},
      })
      expect(reviewed.status, reviewed.raw).toBe(200)
    }
    await pauseAll()
    const approvals = async () =>
      (
        await h.c.db.query<{ n: unknown }>(
          "SELECT count(*)::int8 AS n FROM admin_audit WHERE action = 'approval.approve'",
        )
      ).rows[0]!.n
    const rowsBefore = await approvals()
    for (const w of waiting) {
      const refused = await client.request('POST', `/admin/approvals/${w.txnId}/approve`, {
        session: ops.approver,
        body: {},
      })
      expect([refused.status, refused.body.error], w.txnId).toEqual([503, 'sends_paused'])
      expect(await state(w.txnId)).toBe('processing')
    }
    await work()
    for (const w of waiting) expect(await state(w.txnId)).toBe('processing')
    const open = await client.request('GET', '/admin/approvals?status=waiting', { session: ops.approver })
    expect(open.body.data.map((x: any) => x.txnId)).toEqual(
      expect.arrayContaining(waiting.map((w) => w.txnId)),
    )
    expect(await approvals()).toEqual(rowsBefore)

    await liftAll()
    for (const w of waiting) {
      const approved = await client.request('POST', `/admin/approvals/${w.txnId}/approve`, {
        session: ops.approver,
        body: {},
      })
      expect(approved.status, approved.raw).toBe(200)
    }
    await h.expectBooksBalanced()
  })

  it('a send confirmed before the pause waits in srccreated on every rail, and goes once it lifts', async () => {
    const invoice = await admin('POST', '/admin/sandbox/lightning/invoice', { amount: '0.00001' })
    const sends = [
      await create({
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'BTC',
          method: 'lightning',
          reqDetails: { paymentRequest: invoice.body.paymentRequest },
        },
      }),
      await create(onchain('0.0001')),
      await create(tron('10')),
      await create(vnd('200000')),
    ]
    for (const s of sends) expect(s.state).toBe('srccreated')
    await pauseAll()
    // The worker looks at each (due now) and hands none to its rail.
    await work()
    await work()
    for (const s of sends) expect(await state(s.txnId), s.txnId).toBe('srccreated')
    const { rows } = await h.c.db.query<{ n: unknown }>(
      `SELECT count(*)::int8 AS n FROM transactions WHERE id = ANY($1::text[]) AND next_check_at IS NOT NULL`,
      [sends.map((s) => s.txnId)],
    )
    // Each stays scheduled for another look: nothing is dropped.
    expect(Number(rows[0]!.n)).toBe(sends.length)

    await liftAll()
    await h.c.db.query('UPDATE transactions SET next_check_at = 0 WHERE id = ANY($1::text[])', [
      sends.map((s) => s.txnId),
    ])
    await work()
    await work()
    for (const s of sends) expect(await state(s.txnId), s.txnId).not.toBe('srccreated')
    await h.expectBooksBalanced()
  })

  it("refuses an operator's fee bump on a paused on-chain rail: a replacement spends the hot wallet's money too", async () => {
    const s = await create(onchain('0.0002'))
    await work()
    expect(await state(s.txnId)).toBe('destsent')
    const before = (await h.api('GET', `/api/v2/transaction/${s.txnId}`, a.token)).body.destReq.reqDetails
    await pauseAll()
    const refused = await admin('POST', `/admin/onchain/sends/${s.txnId}/bumpfee`, { feeRate: 50 })
    expect([refused.status, refused.body.error]).toEqual([503, 'sends_paused'])
    const after = (await h.api('GET', `/api/v2/transaction/${s.txnId}`, a.token)).body.destReq.reqDetails
    expect(after).toEqual(before)
    await liftAll()
    const bumped = await admin('POST', `/admin/onchain/sends/${s.txnId}/bumpfee`, { feeRate: 50 })
    expect(bumped.status, JSON.stringify(bumped.body)).toBe(200)
    expect(bumped.body.replacedTxid).toBe(before.txid)
    await h.expectBooksBalanced()
  })
})
