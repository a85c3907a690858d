import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'

// Regressions from the hostile black-box run (issue 16): each case failed before its fix.

const swap = (amt: unknown, extra: Record<string, unknown> = {}) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
  destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
  ...extra,
})

describe('hardening: quotes, amounts and idempotency', () => {
  let h: Harness
  let a: TestAccount
  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60' })
    a = await h.createAccount({ name: 'Hostile' })
    await h.fund(a.accountId, 'BTC', '0.1')
  })
  afterAll(async () => h?.close())

  const available = async (ccy: string) =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === ccy,
    ).availableBalance

  it('defect 5: cancel of a quote past expiresAt is 409 quote_expired and the quote becomes expired', async () => {
    const before = await available('BTC')
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap('0.001'))
    expect(q.status).toBe(200)
    expect(await available('BTC')).toBeLessThan(before)
    // The expiry worker has not run: only the deadline has passed.
    await h.c.db.query('UPDATE transactions SET expires_at = $2 WHERE id = $1', [
      q.body.txnId,
      Date.now() - 1,
    ])
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    expect(c.status).toBe(409)
    expect(c.body.error).toBe('quote_expired')
    const got = await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)
    expect(got.body.txnState).toBe('expired')
    expect(got.body.msg).toBe('quote_expired')
    expect(await available('BTC')).toBe(before)
    // Both verbs answer the same afterwards.
    expect((await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)).body.error).toBe(
      'quote_expired',
    )
    expect((await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)).body.error).toBe(
      'quote_expired',
    )
    await h.expectBooksBalanced()
  })

  it('defect 5: a quote still inside its deadline is cancelled as before', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap('0.001'))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    expect(c.status).toBe(200)
    expect(c.body.txnState).toBe('usercanceled')
  })

  it('defect 10: extRefId idempotency compares amounts by value, not by their text', async () => {
    const first = await h.api(
      'POST',
      '/api/v2/transaction',
      a.token,
      swap('0.001', { extRefId: 'by-value-1' }),
    )
    expect(first.status).toBe(200)
    for (const spelling of ['0.0010', '0.00100000', ' 0.001', '1e-3', '00.001']) {
      const again = await h.api(
        'POST',
        '/api/v2/transaction',
        a.token,
        swap(spelling, { extRefId: 'by-value-1' }),
      )
      expect(again.status, spelling).toBe(200)
      expect(again.body.txnId).toBe(first.body.txnId)
    }
    // A JSON number and an explicit default are the same request too.
    const asNumber = await h.api(
      'POST',
      '/api/v2/transaction',
      a.token,
      '{"extRefId":"by-value-1","deductNetworkFeesFromDest":false,' +
        '"sourceReq":{"ccy":"BTC","method":"svcpay","amtRequested":0.00100,"reqDetails":{}},' +
        '"destReq":{"ccy":"VND","method":"svcpay","reqDetails":{}}}',
    )
    expect(asNumber.status).toBe(200)
    expect(asNumber.body.txnId).toBe(first.body.txnId)
    // Another value, or the amount on the other side, is another request.
    const other = await h.api(
      'POST',
      '/api/v2/transaction',
      a.token,
      swap('0.0011', { extRefId: 'by-value-1' }),
    )
    expect(other.status).toBe(409)
    expect(other.body.error).toBe('duplicate_ext_ref_id')
    const { rows } = await h.c.db.query(
      `SELECT count(*)::int AS n FROM transactions WHERE ext_ref_id = 'by-value-1'`,
    )
    expect(rows[0].n).toBe(1)
  })

  const expectInvalidAmount = (r: { status: number; body: any }, field: string, label = '') => {
    expect(r.status, `${label} ${JSON.stringify(r.body)}`).toBe(400)
    expect(r.body.error).toBe('invalid_amount')
    expect(r.body.details?.[0]?.field).toBe(field)
  }
  const create = (body: unknown) => h.api('POST', '/api/v2/transaction', a.token, body)

  it('defect 3: a swap whose converted side passes the per-side cap is 400, not a 500 or a stored quote', async () => {
    // 98,000,000 BTC to USDT is about 9.3e18 USDT minor units: past PostgreSQL's bigint.
    expectInvalidAmount(
      await create({
        sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '98000000', reqDetails: {} },
        destReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
      }),
      'destReq.amtRequested',
    )
    // 1e9 BTC (the cap itself on the source side) is 2.46e18 VND.
    expectInvalidAmount(await create(swap('1000000000')), 'destReq.amtRequested')
    // In USD it fits, but the fee takes the wallet's total past the cap.
    expectInvalidAmount(
      await create({
        sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '1000000000', reqDetails: {} },
        destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
      }),
      'sourceReq.amtRequested',
    )
    expectInvalidAmount(
      await create({
        sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '1000000000', reqDetails: {} },
      }),
      'sourceReq.amtRequested',
    )
    const { rows } = await h.c.db.query(
      `SELECT count(*)::int AS n FROM transactions WHERE src_amount > 100000000000000000 OR dest_amount > 100000000000000000`,
    )
    expect(rows[0].n).toBe(0)
  })

  it('defect 3: receives are bounded by RECEIVE_MAX_BTC (default 1000), Lightning and on-chain', async () => {
    for (const method of ['lightning', 'on-chain']) {
      const receive = (side: 'src' | 'dest', amt: string) => ({
        sourceReq: { ccy: 'BTC', method, reqDetails: {}, ...(side === 'src' ? { amtRequested: amt } : {}) },
        destReq: {
          ccy: 'BTC',
          method: 'svcpay',
          reqDetails: {},
          ...(side === 'dest' ? { amtRequested: amt } : {}),
        },
      })
      expectInvalidAmount(await create(receive('dest', '1000000000')), 'destReq.amtRequested', method)
      expectInvalidAmount(await create(receive('src', '1000000000')), 'sourceReq.amtRequested', method)
      expectInvalidAmount(await create(receive('dest', '1000.00000001')), 'destReq.amtRequested', method)
      const atMax = await create(receive('dest', '1000'))
      expect(atMax.status, method).toBe(200)
      const c = await h.api('PUT', `/api/v2/transaction/${atMax.body.txnId}/confirm`, a.token)
      expect(c.status, `${method} ${JSON.stringify(c.body)}`).toBe(200)
    }
  })

  it('defect 3: Bitcoin sends are never above 21,000,000 BTC', async () => {
    const invoice = await h.api('POST', '/sandbox/lightning/invoice', a.token, {})
    expect(invoice.status).toBe(200)
    expectInvalidAmount(
      await create({
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'BTC',
          method: 'lightning',
          amtRequested: '21000000.00000001',
          reqDetails: { paymentRequest: invoice.body.paymentRequest },
        },
      }),
      'destReq.amtRequested',
    )
    const address = (await h.api('GET', '/api/v2/account/onchain-address', a.token)).body.staticOnchainAddress
    expectInvalidAmount(
      await create({
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'BTC',
          method: 'on-chain',
          amtRequested: '21000000.00000001',
          reqDetails: { address },
        },
      }),
      'destReq.amtRequested',
    )
    // The sandbox's outside networks refuse such amounts too.
    expectInvalidAmount(
      await h.api('POST', '/sandbox/lightning/invoice', a.token, { amount: '21000001' }),
      'amount',
    )
    expectInvalidAmount(
      await h.api('POST', '/sandbox/onchain/send', a.token, { address, amount: '21000001' }),
      'amount',
    )
  })

  it('defect 3: payouts check the converted and fee-inclusive amounts against the cap', async () => {
    expectInvalidAmount(
      await create({
        sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'USDT',
          method: 'tron',
          amtRequested: '100000000000',
          reqDetails: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
        },
      }),
      'sourceReq.amtRequested',
    )
    expectInvalidAmount(
      await create({
        sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '900000000', reqDetails: {} },
        destReq: {
          ccy: 'VND',
          method: 'vnd-instant',
          reqDetails: { bankAcctNum: '0123456789', institutionCode: '970436' },
          kyc: { type: 'individual', details: { legalFullName: 'Tran Van A', countryCode: 'VN' } },
        },
        sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
      }),
      'destReq.amtRequested',
    )
  })

  it('defect 3: sandbox funding stops at the cap, so repeated funding cannot overflow a balance', async () => {
    const b = await h.createAccount({ name: 'Whale' })
    const fund = (amount: string) => h.api('POST', '/sandbox/fund', b.token, { ccy: 'BTC', amount })
    expect((await fund('999999999')).status).toBe(200)
    expect((await fund('1')).status).toBe(200)
    expectInvalidAmount(await fund('0.00000001'), 'amount')
    expectInvalidAmount(await fund('1000000000'), 'amount')
    const wallet = (await h.api('GET', `/api/v2/account/${b.accountId}/wallet/`, b.token)).body.data.find(
      (w: any) => w.ccy === 'BTC',
    )
    expect(wallet.amount).toBe(1000000000)
    await h.expectBooksBalanced()
  })

  it('defect 10: an address in its other accepted spelling is the same request too', async () => {
    const address = (await h.api('GET', '/api/v2/account/onchain-address', a.token)).body.staticOnchainAddress
    const send = (to: string, amt: string) => ({
      extRefId: 'by-value-2',
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: amt, reqDetails: { address: to } },
    })
    const first = await create(send(address, '0.0005'))
    expect(first.status).toBe(200)
    const again = await create(send(` ${address.toUpperCase()}`, '0.00050'))
    expect(again.status).toBe(200)
    expect(again.body.txnId).toBe(first.body.txnId)
    expect((await create(send(address, '0.0006'))).body.error).toBe('duplicate_ext_ref_id')
  })
})
