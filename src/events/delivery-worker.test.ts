import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { runDueTransactions } from '../transactions/worker.js'
import { eventBody, runDueDeliveries, scaledRetryDelay, startDeliveryWorker } from './delivery-worker.js'
import { signBody } from './signature.js'
import { deliveryDepsOf, startReceiver, type Receiver } from '../../test/helpers/webhooks.js'

const SECRET = 'receiver-secret-0123456789'

const swap = (amt = '0.0001') => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
})
const lnReceive = (amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})

async function register(h: Harness, a: TestAccount, receiver: Receiver): Promise<string> {
  const r = await h.api('POST', '/api/v2/webhook', a.token, { callback: receiver.url, secret: SECRET })
  expect(r.status).toBe(200)
  return r.body.id
}

async function deliveryRows(h: Harness, txnId: string) {
  const { rows } = await h.c.db.query(
    `SELECT d.id, d.status, d.attempts, d.last_error, d.next_attempt_at, e.txn_state FROM webhook_deliveries d
       JOIN events e ON e.id = d.event_id WHERE e.txn_id = $1 ORDER BY d.id`,
    [txnId],
  )
  return rows
}

describe('webhook delivery, variant a (POST, X-Svcpay-Signature, every state change)', () => {
  let h: Harness
  let a: TestAccount
  let payer: TestAccount
  let receiver: Receiver
  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60', WEBHOOK_TIMEOUT_MS: '300' })
    a = await h.createAccount({ name: 'Shop' })
    payer = await h.createAccount({ name: 'Payer' })
    await h.fund(a.accountId, 'BTC', '0.01')
    receiver = await startReceiver(SECRET)
    await register(h, a, receiver)
  })
  afterEach(() => {
    receiver.received.length = 0
    receiver.respond = () => 200
  })
  afterAll(async () => {
    await receiver?.close()
    await h?.close()
  })

  const deps = () => deliveryDepsOf(h.c, { retryDelayMs: () => 0 })

  it('sends each state of a swap, signed over the exact body bytes, with event id and attempt headers', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, { ...swap(), extRefId: 'order-77' })
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('completed')
    const outcomes = await runDueDeliveries(deps())
    expect(outcomes.map((o) => o.result)).toEqual(['succeeded', 'succeeded'])
    const got = await receiver.waitFor(2)

    expect(got.map((r) => r.body.txnState)).toEqual(['quoted', 'completed'])
    for (const r of got) {
      expect(r.method).toBe('POST')
      expect(r.signatureValid).toBe(true)
      expect(r.headers['x-svcpay-signature']).toBe(signBody(r.rawBody, SECRET))
      expect(r.headers['x-svcpay-signature']).toMatch(/^[0-9a-f]{64}$/)
      expect(r.headers['x-svc-signature']).toBeUndefined()
      expect(r.headers['content-type']).toBe('application/json')
      expect(r.headers['x-svcpay-event-id']).toMatch(/^evt_\d+$/)
      expect(r.headers['x-svcpay-delivery-attempt']).toBe('1')
      expect(Object.keys(r.body)).toEqual(['txnId', 'extRefId', 'txnState', 'msg', 'updatedAt'])
      expect(r.body).toMatchObject({ txnId: q.body.txnId, extRefId: 'order-77', msg: '' })
    }
    expect(got[0]!.headers['x-svcpay-event-id']).not.toBe(got[1]!.headers['x-svcpay-event-id'])
    const read = await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)
    expect(got[1]!.body.updatedAt).toBeGreaterThanOrEqual(read.body.createdAt)
    // A tampered body no longer matches its signature: the receiver would answer 401.
    expect(signBody(Buffer.from(got[1]!.rawBody.toString().replace('completed', 'failed')), SECRET)).not.toBe(
      got[1]!.headers['x-svcpay-signature'],
    )
    expect((await deliveryRows(h, q.body.txnId)).map((d) => d.status)).toEqual(['succeeded', 'succeeded'])
    await h.expectBooksBalanced()
  })

  it('sends quoted, srccreated and completed of a Lightning receive paid through the sandbox', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, lnReceive('0.0002'))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    const paid = await h.api('POST', '/sandbox/lightning/pay', payer.token, {
      paymentRequest: c.body.sourceReq.reqDetails.paymentRequest,
    })
    expect(paid.status).toBe(200)
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    expect((await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)).body.txnState).toBe(
      'completed',
    )
    await runDueDeliveries(deps())
    const got = await receiver.waitFor(3)
    expect(got.map((r) => r.body.txnState)).toEqual(['quoted', 'srccreated', 'completed'])
    expect(
      got.every((r) => r.signatureValid && r.body.txnId === q.body.txnId && r.body.extRefId === ''),
    ).toBe(true)
    await h.expectBooksBalanced()
  })

  it('sends a cancel and an expiry, with the reason in msg', async () => {
    const cancelled = await h.api('POST', '/api/v2/transaction', a.token, swap())
    await h.api('PUT', `/api/v2/transaction/${cancelled.body.txnId}/cancel`, a.token)
    const expiring = await h.api('POST', '/api/v2/transaction', a.token, swap())
    await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = 0 WHERE id = $1', [
      expiring.body.txnId,
      Date.now() - 1,
    ])
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    await runDueDeliveries(deps())
    const got = await receiver.waitFor(4)
    const of = (txnId: string) =>
      got.filter((r) => r.body.txnId === txnId).map((r) => [r.body.txnState, r.body.msg])
    expect(of(cancelled.body.txnId)).toEqual([
      ['quoted', ''],
      ['usercanceled', 'user_canceled'],
    ])
    expect(of(expiring.body.txnId)).toEqual([
      ['quoted', ''],
      ['expired', 'quote_expired'],
    ])
    await h.expectBooksBalanced()
  })

  it('retries after two 500 answers and succeeds on the third attempt, with the same event id', async () => {
    receiver.respond = (i) => (i < 2 ? 500 : 200)
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    // The running worker, on a retry schedule shortened from 5 s to 20 ms for the first wait.
    const worker = startDeliveryWorker({ ...deliveryDepsOf(h.c), retryDelayMs: scaledRetryDelay(20) })
    try {
      const got = await receiver.waitFor(3)
      expect(got.map((r) => r.headers['x-svcpay-delivery-attempt'])).toEqual(['1', '2', '3'])
      expect(new Set(got.map((r) => r.headers['x-svcpay-event-id'])).size).toBe(1)
      expect(got.map((r) => r.rawBody.toString())).toEqual(Array(3).fill(got[0]!.rawBody.toString()))
      // The waits were jittered halves of 20 ms and 40 ms at least.
      expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(9)
      expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(19)
      await expect.poll(async () => (await deliveryRows(h, q.body.txnId))[0]?.status).toBe('succeeded')
    } finally {
      await worker.stop()
    }
    const [delivery] = await deliveryRows(h, q.body.txnId)
    expect(delivery).toMatchObject({ attempts: 3, last_error: null, next_attempt_at: null })
    const attempts = await h.c.db.query(
      'SELECT attempt, http_status, error, latency_ms, at FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt',
      [delivery.id],
    )
    expect(attempts.rows.map((r) => [r.attempt, r.http_status, r.error])).toEqual([
      [1, 500, 'http_500'],
      [2, 500, 'http_500'],
      [3, 200, null],
    ])
    expect(attempts.rows.every((r) => r.latency_ms >= 0 && Number(r.at) > 0)).toBe(true)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
  })

  it('cuts off a receiver that never answers at WEBHOOK_TIMEOUT_MS and records a timeout', async () => {
    receiver.respond = () => 'hang'
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    const startedAt = Date.now()
    const [outcome] = await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: () => 60_000 }))
    const tookMs = Date.now() - startedAt
    expect(outcome).toMatchObject({ result: 'retrying', error: 'timeout' })
    expect(tookMs).toBeGreaterThanOrEqual(290)
    expect(tookMs).toBeLessThan(3_000)
    const [delivery] = await deliveryRows(h, q.body.txnId)
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_error: 'timeout' })
    expect(Number(delivery.next_attempt_at)).toBeGreaterThan(Date.now() + 50_000)
    const attempt = await h.c.db.query(
      'SELECT http_status, error, latency_ms FROM delivery_attempts WHERE delivery_id = $1',
      [delivery.id],
    )
    expect(attempt.rows[0]).toMatchObject({ http_status: null, error: 'timeout' })
    expect(attempt.rows[0].latency_ms).toBeGreaterThanOrEqual(290)
    expect(attempt.rows[0].latency_ms).toBeLessThan(3_000)
    // Leave nothing pending for the other tests.
    await h.c.db.query(
      `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = $1`,
      [delivery.id],
    )
  })

  it('marks a delivery failed after the last attempt of the schedule', async () => {
    receiver.respond = () => 500
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    // A schedule of three attempts, so that the end comes quickly.
    const three = (attempt: number) => (attempt >= 3 ? null : 0)
    for (let i = 0; i < 3; i++) await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: three }))
    expect(await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: three }))).toEqual([])
    expect(receiver.received).toHaveLength(3)
    expect(await deliveryRows(h, q.body.txnId)).toMatchObject([
      { status: 'failed', attempts: 3, last_error: 'http_500', next_attempt_at: null },
    ])
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    await h.c.db.query(
      `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL WHERE status = 'pending'`,
    )
  })

  it('goes out within milliseconds of the commit: the running worker wakes on the notification, not the poll', async () => {
    const worker = startDeliveryWorker({ ...deliveryDepsOf(h.c), idleMs: 60_000 })
    const stopWaking = await h.c.notifier.onAny(() => worker.wake())
    try {
      // The worker's first pass has run; from here only a notification can wake it within the minute.
      await new Promise((r) => setTimeout(r, 100))
      const latencies: number[] = []
      for (let i = 0; i < 5; i++) {
        const before = receiver.received.length
        const committedAt = Date.now()
        await h.api('POST', '/api/v2/transaction', a.token, swap())
        const got = await receiver.waitFor(before + 1, 5_000)
        latencies.push(got[before]!.at - committedAt)
      }
      expect(Math.max(...latencies)).toBeLessThan(500)
    } finally {
      stopWaking()
      await worker.stop()
    }
  })
})

describe('webhook delivery, variant b (PUT, X-Svc-Signature, final states only)', () => {
  let h: Harness
  let a: TestAccount
  let receiver: Receiver
  beforeAll(async () => {
    h = await createHarness({ WEBHOOK_VARIANT: 'b', QUOTE_TTL_S: '60' })
    a = await h.createAccount()
    await h.fund(a.accountId, 'BTC', '0.01')
    receiver = await startReceiver(SECRET)
    await register(h, a, receiver)
  })
  afterAll(async () => {
    await receiver?.close()
    await h?.close()
  })

  it('sends only the final state of a swap, as a signed PUT', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    expect(await runDueDeliveries(deliveryDepsOf(h.c))).toEqual([])
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    await runDueDeliveries(deliveryDepsOf(h.c))
    const [only, ...rest] = await receiver.waitFor(1)
    expect(rest).toEqual([])
    expect(only!.method).toBe('PUT')
    expect(only!.body).toMatchObject({ txnId: q.body.txnId, txnState: 'completed', extRefId: '', msg: '' })
    expect(only!.headers['x-svc-signature']).toBe(signBody(only!.rawBody, SECRET))
    expect(only!.headers['x-svcpay-signature']).toBeUndefined()
    expect(only!.signatureValid).toBe(true)
    expect(only!.headers['x-svcpay-delivery-attempt']).toBe('1')
    await h.expectBooksBalanced()
  })
})

describe('stopping deliveries', () => {
  let h: Harness
  let a: TestAccount
  let receiver: Receiver
  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60' })
    a = await h.createAccount()
    await h.fund(a.accountId, 'BTC', '0.01')
    receiver = await startReceiver(SECRET)
  })
  afterAll(async () => {
    await receiver?.close()
    await h?.close()
  })

  it('deleting the webhook cancels its pending deliveries; nothing more is sent', async () => {
    const id = await register(h, a, receiver)
    receiver.respond = () => 500
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: () => 0 }))
    expect(receiver.received).toHaveLength(1)
    expect((await h.api('DELETE', `/api/v2/webhook/${id}`, a.token)).status).toBe(204)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    expect(await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: () => 0 }))).toEqual([])
    expect(receiver.received).toHaveLength(1)
    expect(await deliveryRows(h, q.body.txnId)).toMatchObject([
      { status: 'cancelled', attempts: 1, txn_state: 'quoted' },
    ])
  })

  it('replacing the webhook cancels the old one’s pending deliveries; new events go to the new one', async () => {
    receiver.received.length = 0
    receiver.respond = () => 500
    await register(h, a, receiver)
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: () => 0 }))
    const second = await startReceiver(SECRET)
    try {
      await register(h, a, second)
      await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: () => 0 }))
      expect(receiver.received).toHaveLength(1)
      const got = await second.waitFor(1)
      expect(got.map((r) => r.body.txnState)).toEqual(['completed'])
      expect((await deliveryRows(h, q.body.txnId)).map((d) => [d.txn_state, d.status])).toEqual([
        ['quoted', 'cancelled'],
        ['completed', 'succeeded'],
      ])
    } finally {
      await second.close()
    }
  })

  it('an attempt that outlives its lease is fenced off: the worker that took over decides the outcome', async () => {
    receiver.received.length = 0
    receiver.respond = (i) => (i === 0 ? 'hang' : 200)
    await register(h, a, receiver)
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    // Worker one sends attempt 1 to a receiver that does not answer.
    const first = runDueDeliveries(deliveryDepsOf(h.c, { timeoutMs: 1_500 }))
    await receiver.waitFor(1)
    // Its lease runs out (as after a crash or a long pause), and worker two takes the delivery over.
    await h.c.db.query('UPDATE webhook_deliveries SET next_attempt_at = 0 WHERE status = $1', ['pending'])
    expect(await runDueDeliveries(deliveryDepsOf(h.c))).toMatchObject([{ attempt: 2, result: 'succeeded' }])
    // Worker one's attempt ends in a time-out, which is recorded but changes nothing.
    expect(await first).toMatchObject([{ attempt: 1, result: 'superseded', error: 'timeout' }])
    expect(await deliveryRows(h, q.body.txnId)).toMatchObject([
      { status: 'succeeded', attempts: 2, last_error: null },
    ])
    const attempts = await h.c.db.query(
      'SELECT a.attempt, a.error FROM delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id WHERE e.txn_id = $1 ORDER BY a.attempt',
      [q.body.txnId],
    )
    expect(attempts.rows).toEqual([
      { attempt: 1, error: 'timeout' },
      { attempt: 2, error: null },
    ])
    expect(receiver.received.map((r) => r.headers['x-svcpay-delivery-attempt'])).toEqual(['1', '2'])
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    await runDueDeliveries(deliveryDepsOf(h.c))
  })

  it('two workers share the deliveries: every event goes out exactly once', async () => {
    receiver.received.length = 0
    receiver.respond = () => 200
    const txnIds: string[] = []
    for (let i = 0; i < 12; i++)
      txnIds.push((await h.api('POST', '/api/v2/transaction', a.token, swap('0.00001'))).body.txnId)
    const one = startDeliveryWorker({ ...deliveryDepsOf(h.c), concurrency: 3 })
    const two = startDeliveryWorker({ ...deliveryDepsOf(h.c), concurrency: 3 })
    try {
      await receiver.waitFor(12)
      await new Promise((r) => setTimeout(r, 300))
    } finally {
      await Promise.all([one.stop(), two.stop()])
    }
    const ids = receiver.received.map((r) => r.body.txnId).sort()
    expect(ids).toEqual([...txnIds].sort())
    for (const txnId of txnIds) await h.api('PUT', `/api/v2/transaction/${txnId}/cancel`, a.token)
  })
})

describe('eventBody', () => {
  it('is the contract body, with extRefId "" when none and updatedAt as an integer', () => {
    const body = eventBody({
      id: 5n,
      txn_id: 'txn_x',
      txn_state: 'completed',
      msg: '',
      ext_ref_id: '',
      updated_at: 1735689600000n,
    })
    expect(body.toString()).toBe(
      '{"txnId":"txn_x","extRefId":"","txnState":"completed","msg":"","updatedAt":1735689600000}',
    )
  })
})
