import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'

/**
 * Contract section 11, "Amount text": more decimals than the currency has is 400 invalid_amount for
 * every currency, VND (0 decimals) included, in the API and in the sandbox controls alike. Trailing
 * zeros count: "500.000" is how Vietnamese writes five hundred thousand, so it must never be
 * read as 500 dong.
 */
describe(`amount text with more decimals than the currency has (${ENGINE})`, () => {
  let h: Harness
  let a: TestAccount
  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Shop' })
  }, 60_000)
  afterAll(async () => h?.close())

  const vndReceive = (amount: unknown) => ({
    sourceReq: { ccy: 'VND', method: 'vnd-instant', reqDetails: {} },
    destReq: { ccy: 'VND', method: 'svcpay', amtRequested: amount, reqDetails: {} },
  })
  const count = async (table: string) =>
    Number((await h.c.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`)).rows[0]!.n)
  const refused = (r: { status: number; body: any }, field: string) => {
    expect(r.status, JSON.stringify(r.body)).toBe(400)
    expect(r.body.error).toBe('invalid_amount')
    expect(r.body.details[0].field).toBe(field)
  }

  it('refuses "500.000" dong and 9-decimal bitcoin in a quote, as text or as a JSON number', async () => {
    const before = await count('transactions')
    refused(
      await h.api('POST', '/api/v2/transaction', a.token, vndReceive('500.000')),
      'destReq.amtRequested',
    )
    refused(
      await h.api(
        'POST',
        '/api/v2/transaction',
        a.token,
        '{"sourceReq":{"ccy":"VND","method":"vnd-instant","amtRequested":500.000},"destReq":{"ccy":"VND","method":"svcpay"}}',
      ),
      'sourceReq.amtRequested',
    )
    refused(
      await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.100000000', reqDetails: {} },
      }),
      'destReq.amtRequested',
    )
    expect(await count('transactions')).toBe(before)
    // The same amounts written with the currency's own decimals are quoted.
    const ok = await h.api('POST', '/api/v2/transaction', a.token, vndReceive('500000'))
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body.destReq.amtRequested).toBe(500000)
  })

  it('the sandbox controls refuse them too, and change nothing', async () => {
    const credits = await count('bank_credits')
    const entries = await count('journal_entries')
    refused(
      await h.api('POST', '/admin/sandbox/vnd/transfer', h.adminToken, {
        memo: 'SVP0000000',
        amount: '500.000',
      }),
      'amount',
    )
    refused(
      await h.api('POST', '/admin/sandbox/fund', h.adminToken, {
        accountId: a.accountId,
        ccy: 'VND',
        amount: '1000.000',
      }),
      'amount',
    )
    refused(await h.api('POST', '/sandbox/fund', a.token, { ccy: 'BTC', amount: '0.100000000' }), 'amount')
    refused(await h.api('POST', '/sandbox/lightning/invoice', a.token, { amount: '0.000100000' }), 'amount')
    expect(await count('bank_credits')).toBe(credits)
    expect(await count('journal_entries')).toBe(entries)
  })
})
