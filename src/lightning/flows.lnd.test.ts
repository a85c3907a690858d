/**
 * Lightning send and receive through the HTTP API and the worker, on the real LND adapter against
 * the LND stand-in (test/standins/lnd.ts), through the ways a real node fails. Every case ends with
 * the books check, no transaction left unexplained, and the exact balances the node implies.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { historyProblems, moneyProblems, stuckTransactions } from '../../test/helpers/invariants.js'
import { startLndStandIn, type LndStandIn } from '../../test/standins/lnd.js'
import { runDueTransactions } from '../transactions/worker.js'

const lnReceive = (amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})
const lnSend = (paymentRequest: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
})

describe('Lightning on LND (stand-in): send and receive through node failures', () => {
  let n: LndStandIn
  let h: Harness
  let alice: TestAccount
  let bob: TestAccount

  beforeAll(async () => {
    n = await startLndStandIn()
    h = await createHarness({
      LIGHTNING: 'lnd',
      LND_REST_URL: n.url,
      LND_MACAROON_HEX: n.macaroonHex,
      LND_TLS_CERT_PATH: n.certPath,
      LND_TIMEOUT_MS: '1000',
    })
    alice = await h.createAccount({ name: 'Alice' })
    bob = await h.createAccount({ name: 'Bob' })
    await h.fund(alice.accountId, 'BTC', '0.01')
  })
  afterAll(async () => {
    await h?.close()
    await n?.close()
  })
  beforeEach(() => {
    n.policy = () => ({ succeed: true })
    n.clockOffsetMs = 0
    n.onRequest = undefined
  })

  /** Exact BTC balance of an account's wallet, in satoshis, from the ledger's own wallet row. */
  const sats = async (a: TestAccount) => {
    const r = await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)
    const w = r.body.data.find((x: any) => x.ccy === 'BTC')
    return { amount: Math.round(w.amount * 1e8), available: Math.round(w.availableBalance * 1e8) }
  }
  /** One pass of the worker with every transaction due now. */
  const work = async () => {
    await h.c.db.query('UPDATE transactions SET next_check_at = 0 WHERE next_check_at IS NOT NULL')
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  }
  const get = async (a: TestAccount, txnId: string) =>
    (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  /** How many SendPaymentV2 requests paid this invoice. */
  const sendsFor = (paymentRequest: string) =>
    n.seen.filter(
      (s) =>
        s.method === 'POST' &&
        s.path === '/v2/router/send' &&
        (s.body as { payment_request?: string } | undefined)?.payment_request === paymentRequest,
    ).length
  const outside = (amountMsat: bigint, expirySeconds = 3600) =>
    n.outsideInvoice({ amountMsat, expirySeconds })
  const send = async (paymentRequest: string) => {
    const q = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(paymentRequest))
    expect(q.status).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.body.txnState).toBe('srccreated')
    return q.body.txnId as string
  }
  const invariants = async () => {
    await h.expectBooksBalanced()
    expect(await moneyProblems(h.c.db)).toEqual([])
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await stuckTransactions(h.c.db)).toEqual([])
  }

  it('a payment in flight when its invoice expires is tracked, not sent again, and completes when LND paid it', async () => {
    n.policy = () => ({ hold: true })
    const before = await sats(alice)
    const inv = outside(100_000_000n, 600)
    const txnId = await send(inv.paymentRequest)
    await work()
    expect((await get(alice, txnId)).txnState).toBe('srccreated')
    expect(n.payments.get(inv.hash)!.status).toBe('IN_FLIGHT')

    // The invoice expires on the node while the payment is still routing, then it succeeds.
    n.clockOffsetMs = 700_000
    await work()
    expect((await get(alice, txnId)).txnState).toBe('srccreated')
    n.resolvePayment(inv.hash, { succeed: true, feeMsat: 42_500n })
    await work()
    const done = await get(alice, txnId)
    expect(done.txnState).toBe('completed')
    expect(done.destReq.reqDetails.preimage).toMatch(/^[0-9a-f]{64}$/)
    // Routing fee 42.5 sats, charged as 43; service fee 10 bps of 100,000 sats = 100 sats.
    expect(done.sourceReq.networkFees).toBe(0.00000043)
    expect(await sats(alice)).toEqual({
      amount: before.amount - 100_000 - 100 - 43,
      available: before.amount - 100_000 - 100 - 43,
    })
    // SendPaymentV2 was called once: every later look was TrackPaymentV2.
    expect(sendsFor(inv.paymentRequest)).toBe(1)
    expect(n.payments.get(inv.hash)!.attempts).toBe(1)
    await invariants()
  })

  it('a payment that failed while in flight fails the send and releases the hold: it is never started again', async () => {
    n.policy = () => ({ hold: true })
    const before = await sats(alice)
    const inv = outside(50_000_000n)
    const txnId = await send(inv.paymentRequest)
    await work()
    expect((await get(alice, txnId)).txnState).toBe('srccreated')
    n.resolvePayment(inv.hash, { fail: 'FAILURE_REASON_NO_ROUTE' })
    // Were the send repeated, LND would start the failed payment again, and this one would pay.
    n.policy = () => ({ succeed: true })
    await work()
    const done = await get(alice, txnId)
    expect(done.txnState).toBe('failed')
    expect(done.msg).toBe('route_not_found')
    expect(n.payments.get(inv.hash)!.attempts).toBe(1)
    expect(n.payments.get(inv.hash)!.status).toBe('FAILED')
    expect(await sats(alice)).toEqual(before)
    await invariants()
  })

  it('a node that refuses to say where a payment in flight stands does not fail it: the hold stays until it does', async () => {
    n.policy = () => ({ hold: true })
    const before = await sats(alice)
    const inv = outside(30_000_000n)
    const txnId = await send(inv.paymentRequest)
    await work()
    // The macaroon is swapped for one without offchain:read: Track is refused, for good as far as
    // the rail can tell. The payment is still LND's, and it may yet succeed.
    n.fault('permission-denied', { path: /^\/v2\/router\/track/, times: 2 })
    await work()
    await work()
    expect((await get(alice, txnId)).txnState).toBe('srccreated')
    n.resolvePayment(inv.hash, { succeed: true, feeMsat: 2_000n })
    await work()
    expect((await get(alice, txnId)).txnState).toBe('completed')
    expect(await sats(alice)).toEqual({
      amount: before.amount - 30_000 - 30 - 2,
      available: before.amount - 30_000 - 30 - 2,
    })
    await invariants()
  })

  it('a payment LND cancelled is reported as payment_canceled, and the hold released', async () => {
    n.policy = () => ({ fail: 'FAILURE_REASON_CANCELED' })
    const before = await sats(alice)
    const inv = outside(10_000_000n)
    const txnId = await send(inv.paymentRequest)
    await work()
    const done = await get(alice, txnId)
    expect([done.txnState, done.msg]).toEqual(['failed', 'payment_canceled'])
    expect(await sats(alice)).toEqual(before)
    await invariants()
  })

  it('an invoice that expired before it was ever sent fails at once (LND refuses it for good)', async () => {
    const before = await sats(alice)
    const inv = outside(10_000_000n, 600)
    const txnId = await send(inv.paymentRequest)
    n.clockOffsetMs = 700_000
    await work()
    const done = await get(alice, txnId)
    expect([done.txnState, done.msg]).toEqual(['failed', 'invoice_expired'])
    expect(n.payments.has(inv.hash)).toBe(false)
    expect(await sats(alice)).toEqual(before)
    await invariants()
  })

  it('a send through a stall, a lost answer, a restart and a proxy error is paid exactly once', async () => {
    n.policy = () => ({ hold: true })
    const before = await sats(alice)
    const inv = outside(20_000_000n)
    const txnId = await send(inv.paymentRequest)
    // The first look finds nothing; the send is carried out but its answer is lost.
    n.fault('drop-answer', { path: /^\/v2\/router\/send/ })
    await work()
    expect((await get(alice, txnId)).txnState).toBe('srccreated')
    // The node restarts; then a proxy in front of it answers 502; then tracking stalls.
    await n.restart(100)
    n.fault('proxy502', { path: /^\/v2\/router\/track/ })
    await work()
    n.fault('stall', { path: /^\/v2\/router\/track/ })
    await work()
    n.fault('starting')
    await work()
    expect((await get(alice, txnId)).txnState).toBe('srccreated')
    n.resolvePayment(inv.hash, { succeed: true, feeMsat: 3_000n })
    await work()
    expect((await get(alice, txnId)).txnState).toBe('completed')
    expect(n.payments.get(inv.hash)!.attempts).toBe(1)
    expect(sendsFor(inv.paymentRequest)).toBe(1)
    expect(await sats(alice)).toEqual({
      amount: before.amount - 20_000 - 20 - 3,
      available: before.amount - 20_000 - 20 - 3,
    })
    await invariants()
  })

  it('a receive is issued with route hints and credited once paid, through node failures in between', async () => {
    const before = await sats(bob)
    // Issuing the invoice while the node is unavailable is refused at confirm; nothing is lost.
    const q = await h.api('POST', '/api/v2/transaction', bob.token, lnReceive('0.0003'))
    n.fault('unavailable', { path: /^\/v1\/invoices/ })
    const refused = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    expect(refused.status).toBe(503)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    expect(c.body.txnState).toBe('srccreated')
    const hash = (await h.c.db.query('SELECT rail_ref FROM transactions WHERE id = $1', [q.body.txnId]))
      .rows[0].rail_ref as string
    expect(n.invoices.get(hash)!.private).toBe(true)

    n.fault('stall', { path: /^\/v1\/invoice\// })
    await work()
    n.fault('cut', { path: /^\/v1\/invoice\// })
    await work()
    await n.restart(50)
    expect((await get(bob, q.body.txnId)).txnState).toBe('srccreated')
    n.payInvoice(hash)
    n.fault('proxy502', { path: /^\/v1\/invoice\// })
    await work()
    expect((await get(bob, q.body.txnId)).txnState).toBe('srccreated')
    await work()
    const done = await get(bob, q.body.txnId)
    expect(done.txnState).toBe('completed')
    expect(await sats(bob)).toEqual({ amount: before.amount + 30_000, available: before.amount + 30_000 })
    await invariants()
  })

  it('a receive whose invoice LND cancelled at its expiry expires, crediting nothing', async () => {
    const before = await sats(bob)
    const q = await h.api('POST', '/api/v2/transaction', bob.token, lnReceive('0.0004'))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    expect(c.body.txnState).toBe('srccreated')
    const hash = (await h.c.db.query('SELECT rail_ref FROM transactions WHERE id = $1', [q.body.txnId]))
      .rows[0].rail_ref as string
    // The node's expiry watcher cancels the invoice once its expiry (INVOICE_EXPIRY_S) has passed.
    n.clockOffsetMs = 3_600_000 + 1_000
    await work()
    const done = await get(bob, q.body.txnId)
    expect([done.txnState, done.msg]).toEqual(['expired', 'invoice_expired'])
    expect(n.invoices.get(hash)!.state).toBe('CANCELED')
    expect(() => n.payInvoice(hash)).toThrow(/CANCELED/)
    expect(await sats(bob)).toEqual(before)
    await invariants()
  })

  it('an invoice of ours paid inside the service and, before its cancel, on the node too: both payments are credited', async () => {
    const inv = await h.api('POST', '/api/v2/transaction', bob.token, lnReceive('0.0002'))
    const conf = await h.api('PUT', `/api/v2/transaction/${inv.body.txnId}/confirm`, bob.token)
    const pr = conf.body.sourceReq.reqDetails.paymentRequest as string
    const hash = (await h.c.db.query('SELECT rail_ref FROM transactions WHERE id = $1', [inv.body.txnId]))
      .rows[0].rail_ref as string
    const bobBefore = await sats(bob)
    const aliceBefore = await sats(alice)
    // The cancel before the settlement gets no answer; the outside payer pays just before the
    // cancel after it, which LND then refuses: the invoice is settled.
    n.fault('stall', { path: /^\/v2\/invoices\/cancel/ })
    let cancels = 0
    n.onRequest = (s) => {
      if (s.path === '/v2/invoices/cancel' && ++cancels === 2) n.payInvoice(hash)
    }
    const q = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(pr))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.body.txnState).toBe('completed')
    // afterConfirm runs after the answer; give it time to finish.
    for (let i = 0; i < 50 && (await deposits(hash)).length === 0; i++)
      await new Promise((r) => setTimeout(r, 20))
    const found = await deposits(hash)
    expect(found).toHaveLength(1)
    expect(found[0]).toMatchObject({ account_id: bob.accountId, state: 'completed', src_method: 'lightning' })
    expect(BigInt(found[0].src_amount)).toBe(20_000n)
    // Bob sees it as a transaction of his own, with its webhook event like any other.
    const shown = await get(bob, found[0].id)
    expect(shown).toMatchObject({
      txnState: 'completed',
      sourceReq: { method: 'lightning', amtSettled: 0.0002 },
    })
    // Bob: once from Alice inside, once from the outside payer on the node. Alice: once.
    expect(await sats(bob)).toEqual({
      amount: bobBefore.amount + 40_000,
      available: bobBefore.amount + 40_000,
    })
    expect(await sats(alice)).toEqual({
      amount: aliceBefore.amount - 20_000 - 20,
      available: aliceBefore.amount - 20_000 - 20,
    })
    await invariants()
  })

  /** Bob's receive, confirmed: its invoice text and payment hash. */
  const bobInvoice = async (amt: string) => {
    const inv = await h.api('POST', '/api/v2/transaction', bob.token, lnReceive(amt))
    const conf = await h.api('PUT', `/api/v2/transaction/${inv.body.txnId}/confirm`, bob.token)
    const hash = (await h.c.db.query('SELECT rail_ref FROM transactions WHERE id = $1', [inv.body.txnId]))
      .rows[0].rail_ref as string
    return {
      txnId: inv.body.txnId as string,
      pr: conf.body.sourceReq.reqDetails.paymentRequest as string,
      hash,
    }
  }

  it('an invoice of ours whose cancel the node never answered is cancelled later by the receive, or its payment there credited', async () => {
    // Neither cancel (before and after the settlement inside) gets an answer.
    const first = await bobInvoice('0.00015')
    n.fault('stall', { path: /^\/v2\/invoices\/cancel/, times: 2 })
    const q1 = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(first.pr))
    expect(
      (await h.api('PUT', `/api/v2/transaction/${q1.body.txnId}/confirm`, alice.token)).body.txnState,
    ).toBe('completed')
    for (let i = 0; i < 100 && (await nextCheck(first.txnId)) === null; i++)
      await new Promise((r) => setTimeout(r, 20))
    expect(await nextCheck(first.txnId)).not.toBeNull()
    // The node is back: the receive's check cancels the invoice there, and stops.
    await work()
    expect(n.invoices.get(first.hash)!.state).toBe('CANCELED')
    expect(await nextCheck(first.txnId)).toBeNull()

    // Again, but this time an outside payer pays on the node before the receive's check gets there.
    const second = await bobInvoice('0.00016')
    n.fault('stall', { path: /^\/v2\/invoices\/cancel/, times: 2 })
    const bobBefore = await sats(bob)
    const q2 = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(second.pr))
    expect(
      (await h.api('PUT', `/api/v2/transaction/${q2.body.txnId}/confirm`, alice.token)).body.txnState,
    ).toBe('completed')
    for (let i = 0; i < 100 && (await nextCheck(second.txnId)) === null; i++)
      await new Promise((r) => setTimeout(r, 20))
    n.payInvoice(second.hash)
    await work()
    expect(await deposits(second.hash)).toHaveLength(1)
    expect(await nextCheck(second.txnId)).toBeNull()
    expect(await sats(bob)).toEqual({
      amount: bobBefore.amount + 32_000,
      available: bobBefore.amount + 32_000,
    })
    await invariants()
  })

  it('a cancel refused because an outside payer was first fails the inside send, and the receive credits the outside payment', async () => {
    const inv = await bobInvoice('0.00017')
    const bobBefore = await sats(bob)
    const aliceBefore = await sats(alice)
    // The outside payer pays just before the cancel; the look-up that follows gets no answer.
    n.onRequest = (s) => {
      if (s.path === '/v2/invoices/cancel') n.payInvoice(inv.hash)
    }
    n.fault('stall', { path: new RegExp(`^/v1/invoice/${inv.hash}`) })
    const q = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(inv.pr))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect([c.body.txnState, c.body.msg]).toEqual(['failed', 'invoice_already_paid'])
    n.onRequest = undefined
    // The stalled look-up was not needed (the cancel's answer said it all); the worker meets it.
    await work()
    await work()
    expect((await get(bob, inv.txnId)).txnState).toBe('completed')
    expect(await sats(bob)).toEqual({
      amount: bobBefore.amount + 17_000,
      available: bobBefore.amount + 17_000,
    })
    expect(await sats(alice)).toEqual(aliceBefore)
    expect(await deposits(inv.hash)).toHaveLength(0)
    await invariants()
  })

  const nextCheck = async (txnId: string) =>
    (
      await h.c.db.query<{ next_check_at: string | null }>(
        'SELECT next_check_at FROM transactions WHERE id = $1',
        [txnId],
      )
    ).rows[0]!.next_check_at

  const deposits = async (hash: string) =>
    (
      await h.c.db.query<any>(
        `SELECT id, account_id, state, src_method, src_amount::text FROM transactions WHERE kind = 'deposit' AND rail_ref = $1`,
        [hash],
      )
    ).rows
})
