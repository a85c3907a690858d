import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { operatorClient, type Session } from '../admin/operator-client.js'

/**
 * The console's pages that read transactions, the journal, holds and events through their owners'
 * read functions (issue 30), rendered without a browser: the overview, the account search by a
 * transaction's extRefId, the transactions' search by reference and a transaction's detail page.
 */
describe(`console pages read through the owners (${ENGINE})`, () => {
  let h: Harness
  let admin: Session
  let accountId: string
  let txnId: string

  const page = async (url: string) => {
    const res = await h.app.inject({
      method: 'GET',
      url,
      headers: { accept: 'text/html', cookie: admin.cookie },
    })
    expect(res.statusCode, url).toBe(200)
    return res.body
  }

  beforeAll(async () => {
    h = await createHarness()
    const client = operatorClient(h.app, h.adminToken)
    admin = await client.signIn(await client.createOperator('admin'))
    const shop = await h.createAccount({ name: 'Reads shop' })
    accountId = shop.accountId
    await h.fund(accountId, 'BTC', '0.01')
    const quoted = await h.api('POST', '/api/v2/transaction', shop.token, {
      extRefId: 'reads-order-1',
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    })
    txnId = quoted.body.txnId
    const confirmed = await h.api('PUT', `/api/v2/transaction/${txnId}/confirm`, shop.token)
    expect(confirmed.status).toBe(200)
  }, 60_000)
  afterAll(() => h?.close())

  it('shows a transaction with its timeline, journal entries and holds', async () => {
    const body = await page(`/admin/console/transactions/${txnId}`)
    expect(body).toContain('data-testid="timeline"')
    expect(body).toContain('data-testid="entries"')
    expect(body).toContain('data-testid="holds"')
    expect(body).toContain(`sys:fx:BTC`)
  })

  it('finds the transaction by its id and extRefId, and its account by the extRefId', async () => {
    expect(await page(`/admin/console/transactions?q=${txnId}`)).toContain(
      `/admin/console/transactions/${txnId}`,
    )
    expect(await page('/admin/console/transactions?q=reads-order-1')).toContain(
      `/admin/console/transactions/${txnId}`,
    )
    expect(await page('/admin/console/transactions?q=reads-order-none')).not.toContain(
      `/admin/console/transactions/${txnId}`,
    )
    expect(await page('/admin/console/accounts?q=reads-order-1')).toContain(
      `/admin/console/accounts/${accountId}`,
    )
  })

  it('renders the overview with the day volumes of completed transactions', async () => {
    expect(await page('/admin/console')).toContain('data-testid="books"')
  })
})
