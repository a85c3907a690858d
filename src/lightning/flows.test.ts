import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import bolt11 from 'bolt11'
import { bech32 } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { encodeInvoice } from './bolt11.js'
import { runDueTransactions } from '../transactions/worker.js'

/** The `bolt11` package's description of regtest (it knows the prefix but wants it spelled out). */
const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] }

const lnReceive = (amt: unknown, extra: Record<string, unknown> = {}) => ({
  sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
  ...extra,
})
const lnSend = (paymentRequest: string, amt?: unknown, extra: Record<string, unknown> = {}) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: {
    ccy: 'BTC',
    method: 'lightning',
    ...(amt === undefined ? {} : { amtRequested: amt }),
    reqDetails: { paymentRequest },
  },
  ...extra,
})

describe('Lightning: receive and send through the HTTP API on the sandbox node', () => {
  let h: Harness
  let alice: TestAccount
  let bob: TestAccount
  beforeAll(async () => {
    h = await createHarness()
    alice = await h.createAccount({ name: 'Alice Shop' })
    bob = await h.createAccount({ name: 'Bob' })
    await h.fund(alice.accountId, 'BTC', '0.01')
  })
  afterAll(async () => h?.close())

  const btc = async (a: TestAccount) =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === 'BTC',
    )
  const work = () => runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  const get = async (a: TestAccount, txnId: string) =>
    (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const events = async (txnId: string) =>
    (
      await h.c.db.query<{ txn_state: string }>(
        'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
        [txnId],
      )
    ).rows.map((r) => r.txn_state)
  const outsideInvoice = async (body: Record<string, unknown>) => {
    const r = await h.api('POST', '/sandbox/lightning/invoice', bob.token, body)
    expect(r.status).toBe(200)
    return r.body.paymentRequest as string
  }
  const receive = async (a: TestAccount, amt: string) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, lnReceive(amt))
    expect(q.status).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    return c.body
  }

  it('receive: quoted without an invoice, srccreated with a signed BOLT11 and page, completed and credited when paid', async () => {
    const q = await h.api('POST', '/api/v2/transaction', alice.token, lnReceive('0.00012345'))
    expect(q.status).toBe(200)
    expect(q.body.txnState).toBe('quoted')
    expect(q.body.sourceReq.reqDetails).toEqual({ paymentRequest: null, invoicePageUrl: null })
    expect(q.body.sourceReq.amtRequested).toBe(0.00012345)
    expect(q.body.destReq.amtRequested).toBe(0.00012345)
    expect(q.body.sourceReq.svcpayFees).toBe(0)
    expect(q.body.sourceReq.networkFees).toBe(0)

    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.status).toBe(200)
    const t = c.body
    expect(t.txnState).toBe('srccreated')
    expect(t.sourceReq.reqStatus).toBe('1')
    expect(t.sourceReq.reqDetails.paymentRequest).toMatch(/^lnbcrt123450n1/)
    expect(t.sourceReq.reqDetails.invoicePageUrl).toMatch(
      /^http:\/\/localhost:8080\/pay\/[A-Za-z0-9_-]{22,}$/,
    )

    // The invoice, read by an independent decoder: our node signed it, for this amount and hash.
    const decoded = bolt11.decode(t.sourceReq.reqDetails.paymentRequest, REGTEST)
    expect(decoded.payeeNodeKey).toBe(h.c.bitcoin.keys.nodePublicKey)
    expect(decoded.satoshis).toBe(12345)
    expect(decoded.tagsObject.description).toBe('svcpay Alice Shop')
    expect(decoded.timeExpireDate! - decoded.timestamp!).toBe(3600)
    expect(t.sourceReq.expiresAt).toBe(decoded.timeExpireDate! * 1000)
    const { rows } = await h.c.db.query('SELECT rail_ref, page_id FROM transactions WHERE id = $1', [t.txnId])
    expect(rows[0].rail_ref).toBe(decoded.tagsObject.payment_hash)
    expect(t.sourceReq.reqDetails.invoicePageUrl.endsWith('/' + rows[0].page_id)).toBe(true)
    expect(Buffer.from(rows[0].page_id, 'base64url').length).toBeGreaterThanOrEqual(16)

    // Nothing happens until it is paid.
    await h.c.db.query('UPDATE transactions SET next_check_at = 0 WHERE id = $1', [t.txnId])
    await work()
    expect((await get(alice, t.txnId)).txnState).toBe('srccreated')

    const paid = await h.api('POST', '/sandbox/lightning/pay', bob.token, {
      paymentRequest: t.sourceReq.reqDetails.paymentRequest,
    })
    expect(paid.status).toBe(200)
    expect(paid.body).toEqual({ paymentHash: rows[0].rail_ref, amount: 0.00012345 })
    await work()
    const done = await get(alice, t.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.sourceReq.amtSettled).toBe(0.00012345)
    expect(done.destReq.amtSettled).toBe(0.00012345)
    expect(done.destReq.reqStatus).toBe('2')
    expect((await btc(alice)).amount).toBe(0.01012345)
    expect(await events(t.txnId)).toEqual(['quoted', 'srccreated', 'completed'])

    const again = await h.api('POST', '/sandbox/lightning/pay', bob.token, {
      paymentRequest: t.sourceReq.reqDetails.paymentRequest,
    })
    expect(again.status).toBe(400)
    expect(again.body).toMatchObject({
      error: 'invalid_payment_request',
      details: [{ field: 'paymentRequest' }],
    })
    await h.expectBooksBalanced()
  })

  it('receive: an invoice unpaid at its expiry expires, and can no longer be paid', async () => {
    const t = await receive(bob, '0.0001')
    const hash = (await h.c.db.query('SELECT rail_ref FROM transactions WHERE id = $1', [t.txnId])).rows[0]
      .rail_ref
    await h.c.db.query('UPDATE sandbox_ln_invoices SET expires_at = $2 WHERE payment_hash = $1', [
      hash,
      Date.now() - 1,
    ])
    await h.c.db.query('UPDATE transactions SET next_check_at = 0, expires_at = $2 WHERE id = $1', [
      t.txnId,
      Date.now() - 1,
    ])
    await work()
    const done = await get(bob, t.txnId)
    expect(done.txnState).toBe('expired')
    expect(done.msg).toBe('invoice_expired')
    expect(done.sourceReq.reqStatus).toBe('3')
    const late = await h.api('POST', '/sandbox/lightning/pay', alice.token, {
      paymentRequest: t.sourceReq.reqDetails.paymentRequest,
    })
    expect(late.status).toBe(400)
    expect(late.body.error).toBe('invalid_payment_request')
    expect((await btc(bob)).amount).toBe(0)
    expect(await events(t.txnId)).toEqual(['quoted', 'srccreated', 'expired'])
    await h.expectBooksBalanced()
  })

  it('receive: an unconfirmed quote can be cancelled or expire like any other', async () => {
    const q = await h.api('POST', '/api/v2/transaction', bob.token, lnReceive('0.0001'))
    expect((await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, bob.token)).body.txnState).toBe(
      'usercanceled',
    )
    const q2 = await h.api('POST', '/api/v2/transaction', bob.token, lnReceive('0.0001'))
    await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = $2 WHERE id = $1', [
      q2.body.txnId,
      Date.now() - 1,
    ])
    await work()
    expect((await get(bob, q2.body.txnId)).txnState).toBe('expired')
  })

  it('send to an outside invoice: held, paid by the worker, preimage returned and the unused routing fee refunded', async () => {
    const pr = await outsideInvoice({ amount: '0.001' })
    const before = await btc(alice)
    const q = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(pr))
    expect(q.status).toBe(200)
    const t = q.body
    expect(t.txnState).toBe('quoted')
    expect(t.destReq.amtRequested).toBe(0.001)
    expect(t.sourceReq.amtRequested).toBe(0.001)
    // Routing-fee limit: the larger of 10 sats and 0.5% (500 sats); service fee 10 bps (100 sats).
    expect(t.sourceReq.networkFees).toBe(0.000005)
    expect(t.sourceReq.svcpayFees).toBe(0.000001)
    expect(t.destReq.reqDetails.paymentRequest).toBe(pr)
    expect((await btc(alice)).availableBalance).toBeCloseTo(before.availableBalance - 0.001006, 8)

    const c = await h.api('PUT', `/api/v2/transaction/${t.txnId}/confirm`, alice.token)
    expect(c.body.txnState).toBe('srccreated')
    expect((await btc(alice)).amount).toBe(before.amount)
    await work()
    const done = await get(alice, t.txnId)
    expect(done.txnState).toBe('completed')
    // The sandbox route charged 1 sat + 0.1% = 101 sats of the 500 held; the rest came back.
    expect(done.sourceReq.networkFees).toBe(0.00000101)
    expect(done.destReq.amtSettled).toBe(0.001)
    const preimage = done.destReq.reqDetails.preimage
    expect(preimage).toMatch(/^[0-9a-f]{64}$/)
    expect(bytesToHex(sha256(hexToBytes(preimage)))).toBe(bolt11.decode(pr, REGTEST).tagsObject.payment_hash)
    const after = await btc(alice)
    expect(after.amount).toBeCloseTo(before.amount - 0.001 - 0.000001 - 0.00000101, 8)
    expect(after.availableBalance).toBe(after.amount)
    expect(await events(t.txnId)).toEqual(['quoted', 'srccreated', 'completed'])

    // The node pays each payment hash once: a second send of the same invoice fails, and refunds.
    const q2 = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(pr))
    await h.api('PUT', `/api/v2/transaction/${q2.body.txnId}/confirm`, alice.token)
    await work()
    const second = await get(alice, q2.body.txnId)
    expect(second.txnState).toBe('failed')
    expect(second.msg).toBe('invoice_already_paid')
    const refunded = await btc(alice)
    expect([refunded.amount, refunded.availableBalance]).toEqual([after.amount, after.availableBalance])
    await h.expectBooksBalanced()
  })

  it('send that the network cannot route fails with route_not_found and releases the hold', async () => {
    const pr = await outsideInvoice({ amount: '0.0005', outcome: 'fail' })
    const before = await btc(alice)
    const q = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(pr, '0.0005'))
    expect(q.status).toBe(200)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    await work()
    const done = await get(alice, q.body.txnId)
    expect(done.txnState).toBe('failed')
    expect(done.msg).toBe('route_not_found')
    expect(done.sourceReq.reqStatus).toBe('3')
    expect(await btc(alice)).toMatchObject({
      amount: before.amount,
      availableBalance: before.availableBalance,
    })
    expect(await events(q.body.txnId)).toEqual(['quoted', 'srccreated', 'failed'])
    await h.expectBooksBalanced()
  })

  it('send paying an invoice of another account settles both at once, without a routing fee', async () => {
    const inv = await receive(bob, '0.0002')
    const bobBefore = await btc(bob)
    const aliceBefore = await btc(alice)
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      lnSend(inv.sourceReq.reqDetails.paymentRequest),
    )
    expect(q.status).toBe(200)
    expect(q.body.sourceReq.networkFees).toBe(0)
    expect(q.body.destReq.amtRequested).toBe(0.0002)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.body.txnState).toBe('completed')
    expect(c.body.sourceReq.networkFees).toBe(0)
    expect(c.body.destReq.amtSettled).toBe(0.0002)
    const received = await get(bob, inv.txnId)
    expect(received.txnState).toBe('completed')
    expect(received.destReq.amtSettled).toBe(0.0002)
    expect((await btc(bob)).amount).toBeCloseTo(bobBefore.amount + 0.0002, 8)
    expect((await btc(alice)).amount).toBeCloseTo(aliceBefore.amount - 0.0002 - 0.0000002, 8)
    expect(await events(q.body.txnId)).toEqual(['quoted', 'completed'])
    expect(await events(inv.txnId)).toEqual(['quoted', 'srccreated', 'completed'])
    // Nothing left for the worker, and the sandbox's outside payer cannot pay it a second time.
    const { rows } = await h.c.db.query('SELECT next_check_at FROM transactions WHERE id = ANY($1::text[])', [
      [q.body.txnId, inv.txnId],
    ])
    expect(rows.every((r: any) => r.next_check_at === null)).toBe(true)
    // The node no longer offers the invoice: it was cancelled there after the internal settlement.
    const onNode = await h.c.db.query('SELECT state FROM sandbox_ln_invoices WHERE payment_request = $1', [
      inv.sourceReq.reqDetails.paymentRequest,
    ])
    expect(onNode.rows[0].state).toBe('canceled')
    const outside = await h.api('POST', '/sandbox/lightning/pay', bob.token, {
      paymentRequest: inv.sourceReq.reqDetails.paymentRequest,
    })
    expect(outside.status).toBe(400)

    // Paying it again from any account is refused at the quote.
    const again = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      lnSend(inv.sourceReq.reqDetails.paymentRequest),
    )
    expect(again.status).toBe(400)
    expect(again.body.error).toBe('invalid_payment_request')
    expect(again.body.details[0]).toEqual({
      field: 'destReq.reqDetails.paymentRequest',
      issue: 'the invoice is already paid',
    })
    await h.expectBooksBalanced()
  })

  it('send paying an invoice of ours cancels it on the node before settling it, when its funds are held', async () => {
    // Records, when the node cancels an invoice, what state its receive had in the database then.
    await h.c.db.query('CREATE TABLE test_cancel_seen (payment_request text, receive_state text)')
    await h.c.db.query(`CREATE FUNCTION test_cancel_seen() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO test_cancel_seen
          SELECT NEW.payment_request, state FROM transactions
           WHERE rail_ref = NEW.payment_hash AND kind = 'ln_receive';
        RETURN NEW;
      END $$`)
    await h.c.db.query(`CREATE TRIGGER test_cancel_seen AFTER UPDATE OF state ON sandbox_ln_invoices
      FOR EACH ROW WHEN (NEW.state = 'canceled') EXECUTE FUNCTION test_cancel_seen()`)
    const seen = async (inv: any) =>
      (
        await h.c.db.query<{ receive_state: string }>(
          'SELECT receive_state FROM test_cancel_seen WHERE payment_request = $1',
          [inv.sourceReq.reqDetails.paymentRequest],
        )
      ).rows.map((r) => r.receive_state)
    try {
      // Funds held at the quote: the node stops offering the invoice while the receive is still
      // open, so no outside payer can pay it between the node's last answer and the settlement.
      const inv = await receive(bob, '0.0001')
      const q = await h.api(
        'POST',
        '/api/v2/transaction',
        alice.token,
        lnSend(inv.sourceReq.reqDetails.paymentRequest),
      )
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
      expect(c.body.txnState).toBe('completed')
      expect(await seen(inv)).toEqual(['srccreated'])
      expect((await get(bob, inv.txnId)).txnState).toBe('completed')

      // A quote made before the wallet could cover it holds nothing: its confirm may yet fail for
      // want of funds, so the invoice is cancelled on the node only after the settlement.
      const carol = await h.createAccount({ name: 'Carol' })
      const late = await receive(bob, '0.0001')
      const unheld = await h.api(
        'POST',
        '/api/v2/transaction',
        carol.token,
        lnSend(late.sourceReq.reqDetails.paymentRequest),
      )
      expect(unheld.status).toBe(200)
      await h.fund(carol.accountId, 'BTC', '0.001')
      const done = await h.api('PUT', `/api/v2/transaction/${unheld.body.txnId}/confirm`, carol.token)
      expect(done.body.txnState).toBe('completed')
      expect(await seen(late)).toEqual(['completed'])
      await h.expectBooksBalanced()
    } finally {
      await h.c.db.query('DROP TRIGGER test_cancel_seen ON sandbox_ln_invoices')
    }
  })

  it('send of an invoice of ours that the node already settled, unseen by the worker, fails and refunds', async () => {
    const inv = await receive(bob, '0.0001')
    const aliceBefore = await btc(alice)
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      lnSend(inv.sourceReq.reqDetails.paymentRequest),
    )
    // An outside payment the node has settled, before any worker looked at the receive.
    await h.c.db.query(
      `UPDATE sandbox_ln_invoices SET state = 'settled', amount_paid_msat = 10000000 WHERE payment_request = $1`,
      [inv.sourceReq.reqDetails.paymentRequest],
    )
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect([c.body.txnState, c.body.msg]).toEqual(['failed', 'invoice_already_paid'])
    const aliceAfter = await btc(alice)
    expect([aliceAfter.amount, aliceAfter.availableBalance]).toEqual([
      aliceBefore.amount,
      aliceBefore.availableBalance,
    ])
    expect((await get(bob, inv.txnId)).txnState).toBe('srccreated')
    await h.expectBooksBalanced()
  })

  it('send of an internal invoice that was paid or expired between quote and confirm fails cleanly', async () => {
    const inv = await receive(bob, '0.0001')
    const pr = inv.sourceReq.reqDetails.paymentRequest
    const before = await btc(alice)
    const q = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(pr))
    expect(q.status).toBe(200)
    expect((await h.api('POST', '/sandbox/lightning/pay', bob.token, { paymentRequest: pr })).status).toBe(
      200,
    )
    await work()
    expect((await get(bob, inv.txnId)).txnState).toBe('completed')
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.body.txnState).toBe('failed')
    expect(c.body.msg).toBe('invoice_already_paid')
    expect(await btc(alice)).toMatchObject({
      amount: before.amount,
      availableBalance: before.availableBalance,
    })

    const inv2 = await receive(bob, '0.0001')
    const q2 = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      lnSend(inv2.sourceReq.reqDetails.paymentRequest),
    )
    await h.c.db.query('UPDATE transactions SET expires_at = $2 WHERE id = $1', [inv2.txnId, Date.now() - 1])
    const c2 = await h.api('PUT', `/api/v2/transaction/${q2.body.txnId}/confirm`, alice.token)
    expect(c2.body.txnState).toBe('failed')
    expect(c2.body.msg).toBe('invoice_expired')
    expect((await get(bob, inv2.txnId)).txnState).toBe('srccreated')
    expect(await btc(alice)).toMatchObject({
      amount: before.amount,
      availableBalance: before.availableBalance,
    })
    await h.expectBooksBalanced()
  })

  it('send: parallel payments of one internal invoice settle it once; the others fail and are refunded', async () => {
    const inv = await receive(bob, '0.0001')
    const pr = inv.sourceReq.reqDetails.paymentRequest
    const bobBefore = (await btc(bob)).amount
    const aliceBefore = await btc(alice)
    const quotes = []
    for (let i = 0; i < 4; i++)
      quotes.push((await h.api('POST', '/api/v2/transaction', alice.token, lnSend(pr))).body)
    const results = await Promise.all([
      ...quotes.map((q) => h.api('PUT', `/api/v2/transaction/${q.txnId}/confirm`, alice.token)),
      h.api('POST', '/sandbox/lightning/pay', bob.token, { paymentRequest: pr }),
    ])
    const confirms = results.slice(0, 4).map((r) => r.body)
    const outsidePaid = results[4]!.status === 200
    await work()
    const completed = confirms.filter((t) => t.txnState === 'completed')
    expect(completed.length + (outsidePaid ? 1 : 0)).toBe(1)
    for (const t of confirms.filter((x) => x.txnState !== 'completed')) {
      expect(t.txnState).toBe('failed')
      expect(t.msg).toBe('invoice_already_paid')
    }
    expect((await get(bob, inv.txnId)).txnState).toBe('completed')
    expect((await btc(bob)).amount).toBeCloseTo(bobBefore + 0.0001, 8)
    const spent = completed.length === 1 ? 0.0001 + 0.0000001 : 0
    const after = await btc(alice)
    expect(after.amount).toBeCloseTo(aliceBefore.amount - spent, 8)
    expect(after.availableBalance).toBeCloseTo(aliceBefore.availableBalance - spent, 8)
    await h.expectBooksBalanced()
  })

  it('send: a zero-amount invoice needs amtRequested, and is paid that amount', async () => {
    const pr = await outsideInvoice({})
    expect(bolt11.decode(pr, REGTEST).satoshis).toBeNull()
    const missing = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(pr))
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({
      error: 'invalid_payment_request',
      details: [{ field: 'destReq.amtRequested' }],
    })
    const q = await h.api('POST', '/api/v2/transaction', alice.token, lnSend(pr, 0.0003))
    expect(q.status).toBe(200)
    expect(q.body.destReq.amtRequested).toBe(0.0003)
    expect(q.body.sourceReq.networkFees).toBe(0.0000015)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    await work()
    expect((await get(alice, q.body.txnId)).txnState).toBe('completed')
    const hash = bolt11.decode(pr, REGTEST).tagsObject.payment_hash
    const { rows } = await h.c.db.query(
      'SELECT amount_msat FROM sandbox_ln_payments WHERE payment_hash = $1',
      [hash],
    )
    expect(rows[0].amount_msat).toBe(30_000_000n)
    await h.expectBooksBalanced()
  })

  it('send: deductNetworkFeesFromDest pays a zero-amount invoice the amount less the fees', async () => {
    const pr = await outsideInvoice({})
    const before = await btc(alice)
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      lnSend(pr, '0.001', { deductNetworkFeesFromDest: true }),
    )
    expect(q.status).toBe(200)
    // 100,000 sats less 100 (service) and 500 (routing limit) = 99,400 sats.
    expect(q.body.sourceReq.amtRequested).toBe(0.001)
    expect(q.body.destReq.amtRequested).toBe(0.000994)
    expect((await btc(alice)).availableBalance).toBeCloseTo(before.availableBalance - 0.001, 8)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    await work()
    const done = await get(alice, q.body.txnId)
    expect(done.txnState).toBe('completed')
    // The route used 1 sat + 0.1% of 99,400 sats = 100.4 sats, charged as 101, so 399 sats come back.
    expect(done.sourceReq.networkFees).toBe(0.00000101)
    expect((await btc(alice)).amount).toBeCloseTo(before.amount - 0.001 + 0.00000399, 8)
    const fixed = await outsideInvoice({ amount: '0.0001' })
    const r = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      lnSend(fixed, undefined, { deductNetworkFeesFromDest: true }),
    )
    expect(r.status).toBe(400)
    expect(r.body.details[0].field).toBe('deductNetworkFeesFromDest')
    await h.expectBooksBalanced()
  })

  it('send: refuses invoices for another network, expired, tampered, malformed, or whose amount disagrees', async () => {
    const key = new Uint8Array(32).fill(7)
    const make = (fields: Partial<Parameters<typeof encodeInvoice>[0]>) =>
      encodeInvoice(
        {
          network: 'regtest',
          amountMsat: 50_000_000n,
          paymentHash: new Uint8Array(32).fill(1),
          paymentSecret: new Uint8Array(32).fill(2),
          description: 'elsewhere',
          expirySeconds: 3600,
          timestampSec: Math.floor(Date.now() / 1000),
          ...fields,
        },
        key,
      )
    const ours = (await receive(bob, '0.0001')).sourceReq.reqDetails.paymentRequest as string
    // Our own invoice with the amount raised and the checksum recomputed: the text no longer matches what we issued.
    const { prefix, words } = bech32.decode(ours as `${string}1${string}`, false)
    const forged = bech32.encode(prefix.replace('100u', '200u'), words, false)
    const flipped = ours.slice(0, 30) + (ours[30] === 'q' ? 'p' : 'q') + ours.slice(31)
    const amountMismatch = await outsideInvoice({ amount: '0.001' })
    const cases: Array<[unknown, string, string]> = [
      [lnSend(make({ network: 'mainnet' })), 'invalid_payment_request', 'destReq.reqDetails.paymentRequest'],
      [lnSend(make({ network: 'testnet' })), 'invalid_payment_request', 'destReq.reqDetails.paymentRequest'],
      [
        lnSend(make({ timestampSec: Math.floor(Date.now() / 1000) - 7200 })),
        'invalid_payment_request',
        'destReq.reqDetails.paymentRequest',
      ],
      [lnSend(flipped), 'invalid_payment_request', 'destReq.reqDetails.paymentRequest'],
      [lnSend(forged), 'invalid_payment_request', 'destReq.reqDetails.paymentRequest'],
      [lnSend('lnbcrt1notaninvoice'), 'invalid_payment_request', 'destReq.reqDetails.paymentRequest'],
      [lnSend(''), 'invalid_payment_request', 'destReq.reqDetails.paymentRequest'],
      [lnSend(amountMismatch, '0.002'), 'invalid_payment_request', 'destReq.amtRequested'],
    ]
    for (const [body, code, field] of cases) {
      const r = await h.api('POST', '/api/v2/transaction', alice.token, body)
      expect([r.status, r.body.error, r.body.details?.[0]?.field], JSON.stringify(body)).toEqual([
        400,
        code,
        field,
      ])
    }
    // The same amount on either side is fine.
    const ok = await h.api('POST', '/api/v2/transaction', alice.token, {
      ...lnSend(amountMismatch),
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001', reqDetails: {} },
    })
    expect(ok.status).toBe(200)
  })

  it('send without the funds fails at confirm with insufficient_funds', async () => {
    const carol = await h.createAccount({ name: 'Carol' })
    const pr = await outsideInvoice({ amount: '0.0001' })
    const q = await h.api('POST', '/api/v2/transaction', carol.token, lnSend(pr))
    expect(q.status).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, carol.token)
    expect(c.body.txnState).toBe('failed')
    expect(c.body.msg).toBe('insufficient_funds')
    await h.expectBooksBalanced()
  })
})

describe('Lightning receive with a receive fee', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ FEE_LIGHTNING_RECEIVE: '5+100' })
  })
  afterAll(async () => h?.close())

  it('the payer pays the destination amount plus the fee; the wallet is credited the destination amount', async () => {
    const a = await h.createAccount({ name: 'Fee payer' })
    const q = await h.api('POST', '/api/v2/transaction', a.token, lnReceive('0.0001'))
    // 5 sats + 1% of 10,000 sats = 105 sats.
    expect(q.body.sourceReq.svcpayFees).toBe(0.00000105)
    expect(q.body.sourceReq.amtRequested).toBe(0.00010105)
    expect(q.body.destReq.amtRequested).toBe(0.0001)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(bolt11.decode(c.body.sourceReq.reqDetails.paymentRequest, REGTEST).satoshis).toBe(10105)
    await h.api('POST', '/sandbox/lightning/pay', a.token, {
      paymentRequest: c.body.sourceReq.reqDetails.paymentRequest,
    })
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    const done = (await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)).body
    expect(done.txnState).toBe('completed')
    expect(done.sourceReq.amtSettled).toBe(0.00010105)
    expect(done.destReq.amtSettled).toBe(0.0001)
    const w = (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (x: any) => x.ccy === 'BTC',
    )
    expect(w.amount).toBe(0.0001)
    await h.expectBooksBalanced()
  })
})
