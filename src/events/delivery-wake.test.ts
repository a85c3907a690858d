import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { DELIVERY_CHANNEL } from './channels.js'

const SECRET = 'whsec_delivery_wake_test_secret_0123456789'
const swap = {
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
}
const settle = () => new Promise((r) => setTimeout(r, 300))

// The delivery workers are woken by commits that enqueued a delivery, and only by those: a busy
// account without a webhook must not make every worker look for due deliveries after each commit.
describe('delivery wake-ups', () => {
  let h: Harness
  let quiet: TestAccount
  let hooked: TestAccount
  const wakes: string[] = []
  let unlisten: (() => Promise<void>) | undefined

  beforeAll(async () => {
    h = await createHarness({ WEBHOOK_VARIANT: 'a' })
    quiet = await h.createAccount({ name: 'No webhook' })
    hooked = await h.createAccount({ name: 'With webhook' })
    await h.fund(quiet.accountId, 'BTC', '0.01')
    await h.fund(hooked.accountId, 'BTC', '0.01')
    const hook = await h.api('POST', '/api/v2/webhook', hooked.token, {
      callback: 'http://127.0.0.1:9/hook',
      secret: SECRET,
    })
    expect(hook.status).toBe(200)
    unlisten = await h.c.db.listen(DELIVERY_CHANNEL, (payload) => wakes.push(payload))
    await settle()
  })
  afterAll(async () => {
    await unlisten?.()
    await h?.close()
  })

  it('is not sent for the commits of an account without a webhook', async () => {
    wakes.length = 0
    const q = await h.api('POST', '/api/v2/transaction', quiet.token, swap)
    expect(
      (await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, quiet.token)).body.txnState,
    ).toBe('completed')
    await settle()
    expect(wakes).toEqual([])
  })

  it('is sent for each commit that enqueued a delivery', async () => {
    wakes.length = 0
    const q = await h.api('POST', '/api/v2/transaction', hooked.token, swap)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, hooked.token)
    // A notification reaches the listener some time after its commit (on PostgreSQL through a
    // sender and the listening connection), so a fixed wait may end before the second one comes.
    await expect.poll(() => wakes.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2)
    await settle()
    // Variant a: the quote and its completion each enqueued a delivery.
    expect(wakes.length).toBe(2)
  })
})
