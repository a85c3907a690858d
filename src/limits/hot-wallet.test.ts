import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { operatorClient, type Session } from '../../test/admin/operator-client.js'
import { runDueTransactions } from '../transactions/worker.js'

/**
 * Hot-wallet caps (issue 31) on either engine: a send that would take more out of its rail's hot
 * wallet in the rolling hour than HOT_WALLET_CAP_<RAIL>_PER_HOUR waits in `processing` for a
 * second operator, exactly as a send above its approval threshold; the approval pays it (a TRON
 * payout, and a Lightning send, which can now wait in processing), a rejection releases its hold.
 */
const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const tron = (amount: string) => ({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'USDT', method: 'tron', amtRequested: amount, reqDetails: { address: TRON_ADDRESS } },
})

describe(`hot-wallet caps send the excess to approval (${ENGINE})`, () => {
  let h: Harness
  let a: TestAccount
  let payee: TestAccount
  let client: ReturnType<typeof operatorClient>
  let f1: Session
  let f2: Session
  const work = () => runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const act = (who: Session, verb: string, txnId: string, body: unknown = {}) =>
    client.request('POST', `/admin/approvals/${txnId}/${verb}`, { session: who, body })
  const send = async (body: unknown) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, body)
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    return c.body
  }
  const approve = async (txnId: string) => {
    expect((await act(f1, 'review', txnId)).status).toBe(200)
    expect((await act(f2, 'approve', txnId)).status).toBe(200)
  }

  beforeAll(async () => {
    h = await createHarness({
      SANDBOX_PAYOUT_DELAY_MS: '0',
      QUOTE_TTL_S: '600',
      HOT_WALLET_CAP_TRON_PER_HOUR: '150',
      HOT_WALLET_CAP_LIGHTNING_PER_HOUR: '0.001',
    })
    client = operatorClient(h.app, h.adminToken)
    f1 = await client.signIn(await client.createOperator('finance'))
    f2 = await client.signIn(await client.createOperator('finance'))
    a = await h.createAccount()
    payee = await h.createAccount()
    await h.fund(a.accountId, 'USDT', '1000')
    await h.fund(a.accountId, 'BTC', '0.01')
  }, 120_000)
  afterAll(() => h?.close())

  it('holds the TRON payout that would pass the hourly cap; the approval pays it, a rejection frees it', async () => {
    // Exactly up to the cap goes out at once.
    const first = await send(tron('100'))
    expect(first.txnState).toBe('srccreated')
    const edge = await send(tron('50'))
    expect(edge.txnState).toBe('srccreated')
    const held = await send(tron('0.000001'))
    expect(held.txnState).toBe('processing')
    const approvals = await client.request('GET', '/admin/approvals', { session: f1 })
    const mine = approvals.body.data.find((x: any) => x.txnId === held.txnId)
    expect(JSON.stringify(mine.reasons)).toContain('hot_wallet_cap')
    await approve(held.txnId)
    for (let i = 0; i < 4; i++) await work()
    expect((await get(held.txnId)).txnState).toBe('completed')

    const rejected = await send(tron('10'))
    expect(rejected.txnState).toBe('processing')
    expect((await act(f1, 'reject', rejected.txnId, { reason: 'over the hourly cap' })).status).toBe(200)
    expect((await get(rejected.txnId)).txnState).toBe('rejected')
  })

  it('holds a Lightning send over the cap in processing and pays it once approved', async () => {
    const invoice = async (amount: string) =>
      (await h.api('POST', '/sandbox/lightning/invoice', payee.token, { amount })).body
        .paymentRequest as string
    const ln = async (amount: string) =>
      send({
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest: await invoice(amount) } },
      })
    const under = await ln('0.0006')
    expect(['srccreated', 'completed']).toContain(under.txnState)
    for (let i = 0; i < 3; i++) await work()
    const over = await ln('0.0005')
    expect(over.txnState).toBe('processing')
    await approve(over.txnId)
    for (let i = 0; i < 4; i++) await work()
    expect((await get(over.txnId)).txnState).toBe('completed')
    await h.expectBooksBalanced()
  })
})
