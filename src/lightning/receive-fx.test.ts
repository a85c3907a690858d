import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { ceilDiv, formatMinor, formatRate, parseAmount, type Rate } from '../shared/amount.js'
import { precisionOf } from '../shared/currency.js'
import { allInRate } from '../rates/fx.js'
import { runDueTransactions } from '../transactions/worker.js'
import { creditSecondPayment } from './second-payment.js'

/**
 * A Lightning receive credited to the account's USDT or VND wallet: bitcoin paid in, converted at
 * the quoted rate. Expected amounts are worked out here from the rates the service reads, the
 * spread and the receive fee it is configured with, by the rule the docs give (docs/bitcoin.md).
 */

const receiveInto = (ccy: string, side: 'src' | 'dest', amt: string) => ({
  sourceReq: {
    ccy: 'BTC',
    method: 'lightning',
    ...(side === 'src' ? { amtRequested: amt } : {}),
    reqDetails: {},
  },
  destReq: { ccy, method: 'svcpay', ...(side === 'dest' ? { amtRequested: amt } : {}), reqDetails: {} },
})
const lnSend = (paymentRequest: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
})
const SAT_DIGITS = 8

describe('Lightning receive into a USDT or VND wallet', () => {
  let h: Harness
  let alice: TestAccount
  let bob: TestAccount
  beforeAll(async () => {
    h = await createHarness({ FEE_LIGHTNING_RECEIVE: '5+100' })
    alice = await h.createAccount({ name: 'Alice' })
    bob = await h.createAccount({ name: 'Bob' })
    await h.fund(alice.accountId, 'BTC', '0.01')
  })
  afterAll(async () => h?.close())

  /** The quoted rate: the rates service's BTC price of `ccy`, less the configured spread. */
  const rateOf = async (ccy: string): Promise<Rate> => {
    const snapshot = await h.c.rates.current()
    return allInRate(
      h.c.rates.perBtc(snapshot, 'BTC'),
      h.c.rates.perBtc(snapshot, ccy),
      h.c.config.fxSpreadBps,
    )
  }
  const fee = (sats: bigint) => {
    const rule = h.c.config.fees.lightning_receive!
    return rule.fixedMinor + ceilDiv(sats * rule.bps, 10_000n)
  }
  // `ccy` minor units that `sats` buy at `r`, rounded down; and the fewest sats buying `minor`.
  const unitsPerSatDen = (r: Rate) => 10n ** BigInt(r.scale + SAT_DIGITS)
  const toDest = (sats: bigint, ccy: string, r: Rate) =>
    (sats * r.num * 10n ** BigInt(precisionOf(ccy))) / unitsPerSatDen(r)
  const satsFor = (minor: bigint, ccy: string, r: Rate) =>
    ceilDiv(minor * unitsPerSatDen(r), r.num * 10n ** BigInt(precisionOf(ccy)))
  const num = (minor: bigint, ccy: string) => Number(formatMinor(minor, ccy))
  const minorOf = (amt: string, ccy: string) => {
    const parsed = parseAmount(amt, ccy)
    if (!parsed.ok) throw new Error(parsed.issue)
    return parsed.minor
  }

  const wallet = async (a: TestAccount, ccy: string) =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === ccy,
    ).amount as number
  const get = async (a: TestAccount, txnId: string) =>
    (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const events = async (txnId: string) =>
    (
      await h.c.db.query<{ txn_state: string }>(
        'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
        [txnId],
      )
    ).rows.map((r) => r.txn_state)
  const postings = async (txnId: string) =>
    (
      await h.c.db.query<{ ledger_account_id: string; ccy: string; amount: string }>(
        `SELECT p.ledger_account_id, p.ccy, p.amount::text AS amount FROM postings p
           JOIN journal_entries e ON e.id = p.entry_id WHERE e.txn_id = $1 ORDER BY p.id`,
        [txnId],
      )
    ).rows.map((r) => [
      r.ledger_account_id.startsWith('sys:') ? r.ledger_account_id : 'wallet',
      r.ccy,
      r.amount,
    ])
  const issue = async (a: TestAccount, body: object) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, body)
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    return c.body
  }
  const hashOf = async (txnId: string) =>
    (await h.c.db.query<{ rail_ref: string }>('SELECT rail_ref FROM transactions WHERE id = $1', [txnId]))
      .rows[0]!.rail_ref

  it.each([
    ['USDT', 'src', '0.0002'],
    ['USDT', 'dest', '12.5'],
    ['VND', 'src', '0.00054321'],
    ['VND', 'dest', '500000'],
  ] as const)(
    'quotes BTC into %s with the amount on the %s side like a swap, the fee in sats',
    async (ccy, side, amt) => {
      const r = await rateOf(ccy)
      const q = await h.api('POST', '/api/v2/transaction', bob.token, receiveInto(ccy, side, amt))
      expect(q.status, JSON.stringify(q.body)).toBe(200)
      let paid: bigint
      let feeSats: bigint
      if (side === 'src') {
        paid = minorOf(amt, 'BTC')
        feeSats = fee(paid)
      } else {
        const net = satsFor(minorOf(amt, ccy), ccy, r)
        feeSats = fee(net)
        paid = net + feeSats
      }
      const credited = toDest(paid - feeSats, ccy, r)
      expect(q.body.fxRate).toBe(Number(formatRate(r)))
      expect(q.body.sourceReq).toMatchObject({
        ccy: 'BTC',
        amtRequested: num(paid, 'BTC'),
        svcpayFees: num(feeSats, 'BTC'),
      })
      expect(q.body.destReq).toMatchObject({ ccy, amtRequested: num(credited, ccy), svcpayFees: 0 })
      // A destination amount is the least the wallet gets: whole sats may buy a little more.
      if (side === 'dest') expect(credited).toBeGreaterThanOrEqual(minorOf(amt, ccy))
    },
  )

  it('paid by an outside payer: the USDT wallet gets the quoted conversion, one balanced entry through sys:fx', async () => {
    const r = await rateOf('USDT')
    const t = await issue(bob, receiveInto('USDT', 'src', '0.0002'))
    const feeSats = fee(20_000n)
    const credited = toDest(20_000n - feeSats, 'USDT', r)
    // The hosted page asks the payer for the bitcoin amount, as for any Lightning receive.
    const page = await h.app.inject({
      method: 'GET',
      url: new URL(t.sourceReq.reqDetails.invoicePageUrl).pathname,
    })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('0.0002')
    expect(page.body).toContain(t.sourceReq.reqDetails.paymentRequest)
    const before = await wallet(bob, 'USDT')
    const paid = await h.api('POST', '/sandbox/lightning/pay', alice.token, {
      paymentRequest: t.sourceReq.reqDetails.paymentRequest,
    })
    expect(paid.status).toBe(200)
    const done = await get(bob, t.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.fxRate).toBe(Number(formatRate(r)))
    expect(done.sourceReq).toMatchObject({ ccy: 'BTC', amtSettled: 0.0002 })
    expect(done.destReq).toMatchObject({ ccy: 'USDT', amtSettled: num(credited, 'USDT') })
    expect(await wallet(bob, 'USDT')).toBeCloseTo(before + num(credited, 'USDT'), 6)
    expect(await postings(t.txnId)).toEqual([
      ['sys:lightning:BTC', 'BTC', '-20000'],
      ['sys:fees:BTC', 'BTC', String(feeSats)],
      ['sys:fx:BTC', 'BTC', String(20_000n - feeSats)],
      ['sys:fx:USDT', 'USDT', String(-credited)],
      ['wallet', 'USDT', String(credited)],
    ])
    expect(await events(t.txnId)).toEqual(['quoted', 'srccreated', 'completed'])
    await h.expectBooksBalanced()
  })

  it('overpaid on the node: the whole payment less the quoted fee converts at the quoted rate, rounded down', async () => {
    const r = await rateOf('VND')
    const t = await issue(bob, receiveInto('VND', 'dest', '500000'))
    const invoiceSats = BigInt(Math.round(t.sourceReq.amtRequested * 1e8))
    const quotedFee = BigInt(Math.round(t.sourceReq.svcpayFees * 1e8))
    // LND settles an overpaid invoice: its invoice registry (lnd invoices/update.go, in later
    // releases update_invoice.go) refuses a payment only when `ctx.amtPaid < inv.Terms.Value`. The
    // sandbox node pays exactly, so its record of the invoice is made to say what LND's would.
    const paidSats = invoiceSats + 1_234n
    await h.c.db.query(
      `UPDATE sandbox_ln_invoices SET state = 'settled', amount_paid_msat = $2 WHERE payment_hash = $1`,
      [await hashOf(t.txnId), (paidSats * 1000n).toString()],
    )
    const before = await wallet(bob, 'VND')
    await h.c.db.query('UPDATE transactions SET next_check_at = 0 WHERE id = $1', [t.txnId])
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    const credited = toDest(paidSats - quotedFee, 'VND', r)
    const done = await get(bob, t.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.sourceReq.amtSettled).toBe(num(paidSats, 'BTC'))
    expect(done.destReq.amtSettled).toBe(Number(credited))
    expect(credited).toBeGreaterThan(BigInt(done.destReq.amtRequested))
    expect(await wallet(bob, 'VND')).toBe(before + Number(credited))
    expect(await events(t.txnId)).toEqual(['quoted', 'srccreated', 'completed'])
    await h.expectBooksBalanced()
  })

  it('overpaid on the node, into the BTC wallet or another: msg overpaid on the API and its event; exact: no msg', async () => {
    const lastEvent = async (txnId: string) =>
      (
        await h.c.db.query<{ txn_state: string; msg: string }>(
          'SELECT txn_state, msg FROM events WHERE txn_id = $1 ORDER BY id DESC LIMIT 1',
          [txnId],
        )
      ).rows.map((r) => [r.txn_state, r.msg])[0]
    const settleOnNode = async (t: any, paidSats: bigint) => {
      await h.c.db.query(
        `UPDATE sandbox_ln_invoices SET state = 'settled', amount_paid_msat = $2 WHERE payment_hash = $1`,
        [await hashOf(t.txnId), (paidSats * 1000n).toString()],
      )
      await h.c.db.query('UPDATE transactions SET next_check_at = 0 WHERE id = $1', [t.txnId])
    }
    const intoBtc = await issue(bob, receiveInto('BTC', 'src', '0.0002'))
    const intoUsdt = await issue(bob, receiveInto('USDT', 'src', '0.0003'))
    const exact = await issue(bob, receiveInto('VND', 'src', '0.0004'))
    await settleOnNode(intoBtc, 20_000n + 777n)
    await settleOnNode(intoUsdt, 60_000n)
    await settleOnNode(exact, 40_000n)
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    for (const [t, paid, msg] of [
      [intoBtc, 20_777n, 'overpaid'],
      [intoUsdt, 60_000n, 'overpaid'],
      [exact, 40_000n, ''],
    ] as const) {
      const done = await get(bob, t.txnId)
      expect([done.txnState, done.msg, done.sourceReq.amtSettled]).toEqual([
        'completed',
        msg,
        num(paid, 'BTC'),
      ])
      expect(await lastEvent(t.txnId)).toEqual(['completed', msg])
    }
    await h.expectBooksBalanced()
  })

  it("paid by another account's Lightning send: settled inside the service, into the USDT wallet", async () => {
    const r = await rateOf('USDT')
    const t = await issue(bob, receiveInto('USDT', 'dest', '7.25'))
    const before = await wallet(bob, 'USDT')
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      lnSend(t.sourceReq.reqDetails.paymentRequest),
    )
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.body.txnState).toBe('completed')
    const paid = BigInt(Math.round(t.sourceReq.amtRequested * 1e8))
    const feeSats = BigInt(Math.round(t.sourceReq.svcpayFees * 1e8))
    const credited = toDest(paid - feeSats, 'USDT', r)
    const done = await get(bob, t.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.destReq).toMatchObject({
      ccy: 'USDT',
      amtRequested: num(credited, 'USDT'),
      amtSettled: num(credited, 'USDT'),
    })
    expect(await wallet(bob, 'USDT')).toBeCloseTo(before + num(credited, 'USDT'), 6)
    expect(await events(t.txnId)).toEqual(['quoted', 'srccreated', 'completed'])
    await h.expectBooksBalanced()

    // An outside payer who beat the node's cancel: a deposit into the same wallet, same rate.
    const hash = await hashOf(t.txnId)
    await h.c.db.query(
      `UPDATE sandbox_ln_invoices SET state = 'settled', amount_paid_msat = $2 WHERE payment_hash = $1`,
      [hash, (paid * 1000n).toString()],
    )
    const deposit = await creditSecondPayment(h.c.bitcoin, hash)
    expect(deposit).toMatchObject({
      kind: 'deposit',
      state: 'completed',
      destCcy: 'USDT',
      fxRate: formatRate(r),
      destSettledMinor: toDest(paid - fee(paid), 'USDT', r),
    })
    expect(await wallet(bob, 'USDT')).toBeCloseTo(
      before + num(credited + toDest(paid - fee(paid), 'USDT', r), 'USDT'),
      6,
    )
    await h.expectBooksBalanced()
  })
})
