import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { runDueTransactions } from '../transactions/worker.js'

const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'

/**
 * After a restore, an Ethereum payout the restored database holds as not yet handed to the rail
 * keeps recovery open: the adapter's record of what it sent was rolled back with the database, so
 * nothing here can show it was not paid after the backup (src/reconcile/recovery.ts).
 */
describe(`recovery after a restore: Ethereum payouts (${ENGINE})`, () => {
  let h: Harness
  let a: TestAccount
  const admin = async (method: string, url: string, body?: unknown) => {
    const res = await h.app.inject({
      method: method as 'GET' | 'POST',
      url,
      headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.statusCode, body: JSON.parse(res.body) }
  }
  beforeAll(async () => {
    h = await createHarness({ SANDBOX_PAYOUT_DELAY_MS: '0' })
    a = await h.createAccount({ name: 'Ethereum payer' })
    await h.fund(a.accountId, 'USDT', '100')
  }, 120_000)
  afterAll(async () => {
    await h?.close()
  })

  it('does not end by itself while an eth payout waits unsent, and names it; sent nothing meanwhile', async () => {
    expect((await admin('POST', '/admin/recovery/begin', {})).status).toBe(200)
    const body = {
      sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'USDT', method: 'eth', amtRequested: 10, reqDetails: { address: TO } },
    }
    const q = await h.api('POST', '/api/v2/transaction', a.token, body)
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect([c.status, c.body.txnState]).toEqual([200, 'srccreated'])
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    const checked = await admin('POST', '/admin/recovery/check')
    expect(checked.status).toBe(200)
    expect(checked.body.active).toBe(true)
    expect(checked.body.recovery.lastCheck.unread).toEqual([
      { rail: 'ethereum', note: expect.stringContaining(q.body.txnId) },
    ])
    const t = await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)
    expect(t.body.txnState).toBe('srccreated')
  }, 60_000)
})
