import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { runDueTransactions } from './worker.js'

const swap = (amt: unknown, extra: Record<string, unknown> = {}) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
  destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
  ...extra,
})

describe('transactions: quotes, holds, swaps', () => {
  let h: Harness
  let a: TestAccount
  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60' })
    a = await h.createAccount({ name: 'Swapper' })
    await h.fund(a.accountId, 'BTC', '0.01')
  })
  afterAll(async () => h?.close())

  const wallet = async (ccy: string) =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === ccy,
    )

  it('quotes a BTC -> VND swap, holds the funds, and settles both wallets on confirm', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap(0.001))
    expect(q.status).toBe(200)
    const t = q.body
    expect(t.txnState).toBe('quoted')
    expect(t.accountDisplayName).toBe('Swapper')
    expect(t.sourceReq.amtRequested).toBe(0.001)
    // 0.5% spread on 2,470,000,000 VND/BTC, then 0.001 BTC rounded down; fee 0.5% of 100,000 sats.
    expect(t.fxRate).toBe(2457650000)
    expect(t.destReq.amtRequested).toBe(2457650)
    expect(t.sourceReq.svcpayFees).toBe(0.000005)
    expect(t.sourceReq.reqStatus).toBe('0')
    expect(t.destReq.amtSettled).toBeNull()
    const held = await wallet('BTC')
    expect(held.amount).toBe(0.01)
    expect(held.availableBalance).toBe(0.008995)

    const c = await h.api('PUT', `/api/v2/transaction/${t.txnId}/confirm`, a.token)
    expect(c.status).toBe(200)
    expect(c.body.txnState).toBe('completed')
    expect(c.body.destReq.amtSettled).toBe(2457650)
    expect(c.body.sourceReq.reqStatus).toBe('2')
    expect((await wallet('BTC')).amount).toBe(0.008995)
    expect((await wallet('BTC')).availableBalance).toBe(0.008995)
    expect((await wallet('VND')).amount).toBe(2457650)

    const again = await h.api('PUT', `/api/v2/transaction/${t.txnId}/confirm`, a.token)
    expect(again.body.txnState).toBe('completed')
    expect((await wallet('VND')).amount).toBe(2457650)

    const list = await h.api('GET', '/api/v2/transaction?txnStatuses=completed', a.token)
    expect(list.body.data.map((x: any) => x.txnId)).toContain(t.txnId)
    expect(list.body.data.every((x: any) => x.txnState === 'completed')).toBe(true)
    await h.expectBooksBalanced()
  })

  it('computes the source for a destination amount, rounding the source up', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', amtRequested: '10.00', reqDetails: {} },
    })
    expect(q.status).toBe(200)
    expect(q.body.destReq.amtRequested).toBe(10)
    // 10 USD at 94,525 USD/BTC = 0.000105792... BTC, rounded up to whole sats.
    expect(q.body.sourceReq.amtRequested).toBe(0.0001058)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
  })

  it('cancels a quote and releases the hold; cancel of a non-quoted transaction is 409', async () => {
    const before = await wallet('BTC')
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap('0.002'))
    expect((await wallet('BTC')).availableBalance).toBeLessThan(before.availableBalance)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    expect(c.body.txnState).toBe('usercanceled')
    expect((await wallet('BTC')).availableBalance).toBe(before.availableBalance)
    expect((await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)).body.error).toBe(
      'invalid_state',
    )
    expect((await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)).body.error).toBe(
      'invalid_state',
    )
    await h.expectBooksBalanced()
  })

  it('expires quotes: confirm after expiresAt is refused even before the worker runs', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap('0.001'))
    await h.c.db.query('UPDATE transactions SET expires_at = $2 WHERE id = $1', [
      q.body.txnId,
      Date.now() - 1,
    ])
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.status).toBe(409)
    expect(c.body.error).toBe('quote_expired')
    const got = await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)
    expect(got.body.txnState).toBe('expired')
    expect(got.body.msg).toBe('quote_expired')

    const q2 = await h.api('POST', '/api/v2/transaction', a.token, swap('0.001'))
    const available = (await wallet('BTC')).availableBalance
    await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = $2 WHERE id = $1', [
      q2.body.txnId,
      Date.now() - 1,
    ])
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    expect((await h.api('GET', `/api/v2/transaction/${q2.body.txnId}`, a.token)).body.txnState).toBe(
      'expired',
    )
    expect((await wallet('BTC')).availableBalance).toBeCloseTo(available + 0.001005, 8)
    await h.expectBooksBalanced()
  })

  it('makes extRefId idempotent: same body returns the original, another body is 409', async () => {
    const body = swap('0.0001', { extRefId: 'order-42' })
    const first = await h.api('POST', '/api/v2/transaction', a.token, body)
    const second = await h.api('POST', '/api/v2/transaction', a.token, body)
    expect(second.status).toBe(200)
    expect(second.body.txnId).toBe(first.body.txnId)
    const other = await h.api(
      'POST',
      '/api/v2/transaction',
      a.token,
      swap('0.0002', { extRefId: 'order-42' }),
    )
    expect(other.status).toBe(409)
    expect(other.body.error).toBe('duplicate_ext_ref_id')
    const parallel = await Promise.all(
      Array.from({ length: 8 }, () =>
        h.api('POST', '/api/v2/transaction', a.token, swap('0.0001', { extRefId: 'order-43' })),
      ),
    )
    expect(new Set(parallel.map((r) => r.body.txnId)).size).toBe(1)
    const { rows } = await h.c.db.query(
      `SELECT count(*)::int AS n FROM transactions WHERE ext_ref_id = 'order-43'`,
    )
    expect(rows[0].n).toBe(1)
  })

  it('authenticates before it reads the body: no token and a bad body is 401', async () => {
    const r = await h.api('POST', '/api/v2/transaction', undefined, '{not json')
    expect([r.status, r.body.error]).toEqual([401, 'unauthorized'])
  })

  it('rejects bad requests with the contract codes and field names', async () => {
    const cases: Array<[unknown, number, string]> = [
      [swap('0.000000001'), 400, 'invalid_amount'],
      [swap(-1), 400, 'invalid_amount'],
      [swap('NaN'), 400, 'invalid_amount'],
      [
        { ...swap('0.1'), destReq: { ccy: 'VND', method: 'svcpay', amtRequested: 5 } },
        400,
        'invalid_request',
      ],
      [{ ...swap('0.1'), destReq: { ccy: 'BTC', method: 'svcpay' } }, 400, 'unsupported_currency_pair'],
      [
        { ...swap('0.1'), destReq: { ccy: 'USDT', method: 'eth', reqDetails: {} } },
        400,
        'unsupported_currency_pair',
      ],
      [{ ...swap('0.1'), destReq: { ccy: 'VND', method: 'paypal' } }, 400, 'unsupported_method'],
      [{ sourceReq: { ccy: 'BTC', method: 'svcpay' } }, 400, 'invalid_request'],
    ]
    for (const [body, status, code] of cases) {
      const r = await h.api('POST', '/api/v2/transaction', a.token, body)
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([status, code])
      expect(typeof r.body.message).toBe('string')
    }
    const exact = await h.api(
      'POST',
      '/api/v2/transaction/',
      a.token,
      '{"sourceReq":{"ccy":"BTC","method":"svcpay","amtRequested":0.100000000000000000001},"destReq":{"ccy":"USD","method":"svcpay"}}',
    )
    expect(exact.body.error).toBe('invalid_amount')
    expect(exact.body.details[0].field).toBe('sourceReq.amtRequested')
  })

  it('never overdraws: parallel confirms of quotes that together exceed the balance', async () => {
    const b = await h.createAccount({ name: 'Racer' })
    await h.fund(b.accountId, 'USD', '100')
    // Quotes made before funding carry no hold, so each confirm must win the funds on its own.
    const quotes: any[] = []
    for (let i = 0; i < 12; i++) {
      const q = await h.api('POST', '/api/v2/transaction', b.token, {
        sourceReq: { ccy: 'USD', method: 'svcpay', amtRequested: '20', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      })
      quotes.push(q.body)
    }
    await h.c.db.query(`UPDATE holds SET status = 'voided' WHERE txn_id = ANY($1::text[])`, [
      quotes.map((q) => q.txnId),
    ])
    await h.c.db.query(`UPDATE ledger_accounts SET pending = 0 WHERE account_id = $1`, [b.accountId])
    const results = await Promise.all(
      quotes.map((q) => h.api('PUT', `/api/v2/transaction/${q.txnId}/confirm`, b.token)),
    )
    const completed = results.filter((r) => r.body.txnState === 'completed').length
    const failed = results.filter((r) => r.body.txnState === 'failed')
    // Each takes 20 USD + 0.10 fee: four fit in 100 USD.
    expect(completed).toBe(4)
    expect(failed.length).toBe(8)
    expect(failed.every((r) => r.body.msg === 'insufficient_funds')).toBe(true)
    const usd = (await h.api('GET', `/api/v2/account/${b.accountId}/wallet/`, b.token)).body.data.find(
      (w: any) => w.ccy === 'USD',
    )
    expect(usd.amount).toBe(19.6)
    const twice = await Promise.all(
      [0, 1].map(() => h.api('PUT', `/api/v2/transaction/${quotes[0].txnId}/confirm`, b.token)),
    )
    expect(twice.every((r) => r.status === 200)).toBe(true)
    await h.expectBooksBalanced()
  })
})
