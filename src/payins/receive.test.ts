import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QRPay } from 'vietnam-qr-pay'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { operatorClient } from '../../test/admin/operator-client.js'
import { pointCliAt, runCli } from '../../test/helpers/cli.js'
import { ATTENTION_SECTIONS } from '../console/attention.js'
import { systemAccountId } from '../ledger/ledger.js'
import { runDueTransactions } from '../transactions/worker.js'
import { allInRate } from '../rates/fx.js'
import { formatMinor, formatRate, parseRate } from '../shared/amount.js'
import { precisionOf } from '../shared/currency.js'
import { getTxn } from '../transactions/repository.js'
import { creditSink, ingestBankCredit } from './credits.js'
import { asTxnId } from '../shared/ids.js'

// FEE_VND_RECEIVE 1000 dong + 1%: every amount below is checked against it by hand.
const FEE = { fixed: 1000n, bps: 100n }
const feeOn = (amount: bigint) => FEE.fixed + (amount * FEE.bps + 9_999n) / 10_000n

describe(`VND receive over VietQR (${ENGINE})`, () => {
  let h: Harness
  let a: TestAccount
  let ref = 0
  beforeAll(async () => {
    h = await createHarness({ FEE_VND_RECEIVE: '1000+100', VND_RECEIVE_TTL_S: '600' })
    a = await h.createAccount({ name: 'Shop' })
  }, 60_000)
  afterAll(async () => h?.close())

  const create = async (side: 'src' | 'dest', amount: number | string) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        ...(side === 'src' ? { amtRequested: amount } : {}),
        reqDetails: {},
      },
      destReq: {
        ccy: 'VND',
        method: 'svcpay',
        ...(side === 'dest' ? { amtRequested: amount } : {}),
        reqDetails: {},
      },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    return q.body
  }
  const receive = async (destAmount = 500_000) => {
    const quoted = await create('dest', destAmount)
    const c = await h.api('PUT', `/api/v2/transaction/${quoted.txnId}/confirm`, a.token)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    return c.body
  }
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const transfer = async (memo: string, amount: number | string) => {
    const r = await h.api('POST', '/admin/sandbox/vnd/transfer', h.adminToken, { memo, amount })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body
  }
  const ingest = (memo: string, amount: bigint, bankRef = `T${++ref}.${Date.now()}`) =>
    ingestBankCredit(h.c.payins, { bankRef, amountMinor: amount, memo, bookedAtMs: Date.now() })
  const balance = async (id: string) => {
    const { rows } = await h.c.db.query<{ total: string | null }>(
      'SELECT SUM(amount)::text AS total FROM postings WHERE ledger_account_id = $1',
      [id],
    )
    return BigInt(rows[0]!.total ?? '0')
  }
  const walletId = async () => (await h.c.accounts.walletId(h.c.db, a.accountId, 'VND'))!
  /** What the wallet, the fee account and suspense gained while `fn` ran. */
  const gains = async (fn: () => Promise<unknown>) => {
    const ids = [await walletId(), systemAccountId('fees', 'VND'), systemAccountId('suspense', 'VND')]
    const before = await Promise.all(ids.map(balance))
    await fn()
    const after = await Promise.all(ids.map(balance))
    await h.expectBooksBalanced()
    return { wallet: after[0]! - before[0]!, fees: after[1]! - before[1]!, suspense: after[2]! - before[2]! }
  }

  it('quotes on either side, with null details until confirm', async () => {
    const dest = await create('dest', 500_000)
    expect(dest.txnState).toBe('quoted')
    expect(dest.destReq.amtRequested).toBe(500_000)
    expect(BigInt(dest.sourceReq.amtRequested)).toBe(500_000n + feeOn(500_000n))
    expect(BigInt(dest.sourceReq.svcpayFees)).toBe(feeOn(500_000n))
    expect(dest.sourceReq.reqDetails).toEqual({
      bankBin: null,
      bankName: null,
      bankAcctNum: null,
      accountName: null,
      amount: null,
      memo: null,
      vietQr: null,
      invoicePageUrl: null,
      expiredAt: null,
    })
    const src = await create('src', '506000')
    expect(src.sourceReq.amtRequested).toBe(506_000)
    expect(BigInt(src.destReq.amtRequested)).toBe(506_000n - feeOn(506_000n))
    const fraction = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'VND', method: 'vnd-instant', amtRequested: '1000.5', reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
    })
    expect(fraction.status).toBe(400)
  })

  it('confirms to srccreated with the account, amount, memo, VietQR code and page', async () => {
    const before = Date.now()
    const t = await receive()
    expect(t.txnState).toBe('srccreated')
    const d = t.sourceReq.reqDetails
    expect(Object.keys(d).sort()).toEqual(
      [
        'accountName',
        'amount',
        'bankAcctNum',
        'bankBin',
        'bankName',
        'expiredAt',
        'invoicePageUrl',
        'memo',
        'vietQr',
      ].sort(),
    )
    expect(d).toMatchObject({
      bankBin: '970436',
      bankName: 'Vietcombank',
      bankAcctNum: '0071000888999',
      accountName: 'SVCPAY SANDBOX',
      amount: String(t.sourceReq.amtRequested),
    })
    expect(d.memo).toMatch(/^SVP[0-9A-HJKMNP-TV-Z]{7}$/)
    expect(d.invoicePageUrl).toMatch(/^http:\/\/localhost:8080\/pay\/[A-Za-z0-9_-]{22}$/)
    expect(t.sourceReq.expiresAt).toBeGreaterThanOrEqual(before + 600_000)
    expect(t.sourceReq.expiresAt).toBeLessThanOrEqual(Date.now() + 600_000)
    expect(d.expiredAt).toBe(new Date(t.sourceReq.expiresAt).toISOString())
    const qr = new QRPay(d.vietQr)
    expect(qr.isValid).toBe(true)
    expect(qr.consumer.bankBin).toBe('970436')
    expect(qr.consumer.bankNumber).toBe('0071000888999')
    expect(qr.amount).toBe(d.amount)
    expect(qr.additionalData.purpose).toBe(d.memo)
  })

  it('credits an exact transfer: completed, the quoted fee, books balanced', async () => {
    const t = await receive()
    const paid = BigInt(t.sourceReq.amtRequested)
    let bankRef = ''
    const g = await gains(async () => {
      const r = await transfer(t.sourceReq.reqDetails.memo, t.sourceReq.amtRequested)
      expect(r).toMatchObject({ status: 'matched', outcome: 'exact', txnId: t.txnId, duplicate: false })
      bankRef = r.bankRef
    })
    // Reconciliation finds the transfer on both sides: the sandbox bank lists it, the receive carries its reference.
    const report = await h.c.reconcile()
    expect(report.rails.find((r) => r.rail === 'bank')?.status).not.toBe('deficit')
    expect(
      report.orphans.filter((o) => o.rail === 'bank' && (o.ref === bankRef || o.txnId === t.txnId)),
    ).toEqual([])
    expect(g).toEqual({ wallet: 500_000n, fees: paid - 500_000n, suspense: 0n })
    const done = await get(t.txnId)
    expect(done).toMatchObject({ txnState: 'completed', msg: '' })
    expect(done.sourceReq.amtSettled).toBe(Number(paid))
    expect(done.destReq.amtSettled).toBe(500_000)
    const { rows: events } = await h.c.db.query<{ txn_state: string }>(
      'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
      [t.txnId],
    )
    expect(events.map((e) => e.txn_state)).toEqual(['quoted', 'srccreated', 'completed'])
  })

  it('credits a short and an over payment as they arrived, the fee on what arrived', async () => {
    for (const [arrived, msg] of [
      [300_000n, 'underpaid'],
      [600_000n, 'overpaid'],
    ] as const) {
      const t = await receive()
      const g = await gains(async () => {
        const r = await ingest(t.sourceReq.reqDetails.memo, arrived)
        expect(r).toMatchObject({ status: 'matched', outcome: msg, txnId: t.txnId })
      })
      expect(g).toEqual({ wallet: arrived - feeOn(arrived), fees: feeOn(arrived), suspense: 0n })
      const done = await get(t.txnId)
      expect(done).toMatchObject({ txnState: 'completed', msg })
      expect(BigInt(done.sourceReq.amtSettled)).toBe(arrived)
      expect(BigInt(done.sourceReq.svcpayFees)).toBe(feeOn(arrived))
    }
  })

  it('expires an unpaid receive; a late transfer, and a second one, become deposits', async () => {
    const t = await receive()
    const memo = t.sourceReq.reqDetails.memo
    const work = (now: number) =>
      runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console, now: () => now })
    await work(Date.now())
    expect((await get(t.txnId)).txnState).toBe('srccreated')
    const saved = h.c.payins.now
    h.c.payins.now = () => t.sourceReq.expiresAt + 1
    try {
      await work(t.sourceReq.expiresAt + 1)
    } finally {
      h.c.payins.now = saved
    }
    expect(await get(t.txnId)).toMatchObject({ txnState: 'expired', msg: 'receive_expired' })
    let late: any
    const g = await gains(async () => {
      late = await ingest(`chuyen tien ${memo.toLowerCase()}`, 200_000n)
    })
    expect(late).toMatchObject({ status: 'deposit', outcome: 'late' })
    expect(g).toEqual({ wallet: 200_000n - feeOn(200_000n), fees: feeOn(200_000n), suspense: 0n })
    const deposit = await get(late.txnId)
    expect(deposit).toMatchObject({ txnState: 'completed', accountId: a.accountId })
    expect(deposit.sourceReq).toMatchObject({ ccy: 'VND', method: 'vnd-instant', amtSettled: 200_000 })
    expect(deposit.sourceReq.reqDetails).toMatchObject({ forTxnId: t.txnId, latePayment: true, memo })

    // A second transfer for a receive that completed is a deposit too.
    const paidOnce = await receive()
    await ingest(paidOnce.sourceReq.reqDetails.memo, BigInt(paidOnce.sourceReq.amtRequested))
    const again = await ingest(paidOnce.sourceReq.reqDetails.memo, 50_000n)
    expect(again).toMatchObject({ status: 'deposit', outcome: 'second_payment' })
    expect((await get(again.txnId!)).sourceReq.reqDetails).toMatchObject({
      forTxnId: paidOnce.txnId,
      secondPayment: true,
    })
    expect((await get(paidOnce.txnId)).destReq.amtSettled).toBe(500_000)
    await h.expectBooksBalanced()
  })

  it.each([
    ['lower case with spaces', (m: string) => `thanh toan ${m.toLowerCase().replace(/(.{3})/g, '$1 ')}`],
    ['dots inside', (m: string) => m.split('').join('.')],
    ['accents injected', (m: string) => `Thanh toán ${m.slice(0, 5)}\u0301${m.slice(5)} đơn hàng`],
    ['bank prefix and suffix', (m: string) => `MBVCB.3278.012345.${m}.CT tu 0123 NGUYEN VAN A`],
  ])('matches a mangled memo: %s', async (_name, mangle) => {
    const t = await receive(10_000)
    const r = await ingest(mangle(t.sourceReq.reqDetails.memo), BigInt(t.sourceReq.amtRequested))
    expect(r).toMatchObject({ status: 'matched', outcome: 'exact', txnId: t.txnId })
  })

  it('records a description or payer PostgreSQL cannot hold as it can, and still matches', async () => {
    const t = await receive(10_000)
    const memo = t.sourceReq.reqDetails.memo
    const r = await ingestBankCredit(h.c.payins, {
      bankRef: `NUL.${Date.now()}`,
      amountMinor: BigInt(t.sourceReq.amtRequested),
      memo: `\u0000${memo}\ud800 x`,
      bookedAtMs: Date.now(),
      payer: { name: 'NGUYEN\u0000 VAN A', accountNumber: '0123456789' },
    })
    expect(r).toMatchObject({ status: 'matched', outcome: 'exact', txnId: t.txnId })
  })

  it('credits a repeated bank notification once, also two at the same time', async () => {
    const t = await receive()
    const amount = BigInt(t.sourceReq.amtRequested)
    const g = await gains(async () => {
      const first = await ingest(t.sourceReq.reqDetails.memo, amount, 'DUP-1')
      const second = await ingest(t.sourceReq.reqDetails.memo, amount, 'DUP-1')
      expect(second).toEqual({ ...first, duplicate: true })
      // The transport's sink, called again with the same transfer, does nothing more either.
      await creditSink(h.c.payins)({ bankRef: 'DUP-1', amountMinor: amount, memo: 'x', bookedAtMs: 0 })
    })
    expect(g.wallet).toBe(500_000n)
    const unmatched = await gains(async () => {
      const both = await Promise.all([
        ingest('no memo here', 70_000n, 'DUP-2'),
        ingest('no memo here', 70_000n, 'DUP-2'),
      ])
      expect(both.map((b) => b.duplicate).sort()).toEqual([false, true])
      expect(both[0]!.creditId).toBe(both[1]!.creditId)
    })
    expect(unmatched).toEqual({ wallet: 0n, fees: 0n, suspense: 70_000n })
  })

  it('puts an unmatched transfer in suspense, lists it, and lets an operator assign it once', async () => {
    let credit: any
    const g = await gains(async () => {
      credit = await transfer('SVPZZZZZZZ tien hang NGUYEN VAN B', 123_456)
    })
    expect(credit).toMatchObject({ status: 'unassigned', outcome: 'unmatched', txnId: null })
    expect(g).toEqual({ wallet: 0n, fees: 0n, suspense: 123_456n })
    const section = ATTENTION_SECTIONS.find((s) => s.key === 'bank-credits')!
    const listed = await section.read(h.c, Date.now(), 100)
    expect(listed.rows.find((r) => r.ref?.id === credit.creditId)?.why).toContain('123456 VND')

    const ops = operatorClient(h.app, h.adminToken)
    const url = `/admin/bank-credits/${credit.creditId}/assign`
    const body = { accountId: a.accountId, reason: 'customer sent the order number by email' }
    expect((await h.api('POST', url, a.token, body)).status).toBe(401)
    const viewer = await ops.signIn(await ops.createOperator('viewer'))
    expect((await ops.request('POST', url, { session: viewer, body })).status).toBe(403)
    const list = await ops.request('GET', '/admin/bank-credits', { session: viewer })
    expect(list.body.data.map((c: any) => c.creditId)).toContain(credit.creditId)
    expect(JSON.stringify(list.body)).not.toMatch(/payer/)

    const finance = await ops.createOperator('finance')
    const session = await ops.signIn(finance)
    const assigned = await gains(async () => {
      const r = await ops.request('POST', url, { session, body })
      expect(r.status, r.raw).toBe(200)
      expect(r.body).toMatchObject({ creditId: credit.creditId, accountId: a.accountId, amount: 123_456 })
      const deposit = await get(r.body.txnId)
      expect(deposit).toMatchObject({ txnState: 'completed' })
      expect(deposit.sourceReq.reqDetails).toMatchObject({ assignedCredit: credit.creditId })
    })
    expect(assigned).toEqual({
      wallet: 123_456n - feeOn(123_456n),
      fees: feeOn(123_456n),
      suspense: -123_456n,
    })
    const twice = await ops.request('POST', url, { session, body })
    expect(twice.status).toBe(409)
    const { rows } = await h.c.db.query<{ operator_id: string; target: string; after: any }>(
      `SELECT operator_id, target, after FROM admin_audit WHERE action = 'bank_credit.assign'`,
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ operator_id: finance.id, target: `creditId=${credit.creditId}` })
    expect(rows[0]!.after).toMatchObject({ reason: body.reason, accountId: a.accountId })
    expect((await section.read(h.c, Date.now(), 100)).rows.map((r) => r.ref?.id)).not.toContain(
      credit.creditId,
    )
  })

  it('assigns a credit from the console page, by a form with its CSRF field', async () => {
    const credit = await transfer('tra tien', 40_000)
    const ops = operatorClient(h.app, h.adminToken)
    const session = await ops.signIn(await ops.createOperator('finance'))
    const page = await h.app.inject({
      method: 'GET',
      url: '/admin/console/bank-credits',
      headers: { cookie: session.cookie },
    })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`/admin/console/bank-credits/${credit.creditId}/assign`)
    expect(page.body).toContain('tra tien')
    const post = (csrf: string) =>
      h.app.inject({
        method: 'POST',
        url: `/admin/console/bank-credits/${credit.creditId}/assign`,
        headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          csrf_token: csrf,
          accountId: a.accountId,
          reason: 'phoned in',
        }).toString(),
      })
    expect((await post('wrong')).statusCode).toBe(403)
    // Post/Redirect/Get: the assignment answers 303 to a result page, which names the credit.
    const done = await post(session.csrfToken)
    expect(done.statusCode, done.body).toBe(303)
    const shown = await h.app.inject({
      method: 'GET',
      url: done.headers.location!,
      headers: { cookie: session.cookie },
    })
    expect(shown.statusCode).toBe(200)
    expect(shown.body).toContain(credit.creditId)
    const { rows } = await h.c.db.query<{ status: string }>('SELECT status FROM bank_credits WHERE id = $1', [
      credit.creditId,
    ])
    expect(rows[0]!.status).toBe('assigned')
    await h.expectBooksBalanced()
  })

  it('assigns a credit in suspense to a waiting receive, which completes', async () => {
    const t = await receive()
    const credit = await transfer('no reference given', t.sourceReq.amtRequested)
    const r = await h.api('POST', `/admin/bank-credits/${credit.creditId}/assign`, h.adminToken, {
      accountId: a.accountId,
      txnId: t.txnId,
      reason: 'payer forgot the memo',
    })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.txnId).toBe(t.txnId)
    expect(await get(t.txnId)).toMatchObject({ txnState: 'completed', msg: '' })
    await h.expectBooksBalanced()
  })

  it('lists receives by method', async () => {
    const r = await h.api('GET', '/api/v2/transaction?srcMethods=vnd-instant&limit=100', a.token)
    expect(r.status).toBe(200)
    expect(r.body.data.length).toBeGreaterThan(5)
    expect(r.body.data.every((t: any) => t.sourceReq.method === 'vnd-instant')).toBe(true)
  })

  it('works from the command line: a transfer in, and an assignment', async () => {
    const restore = await pointCliAt(h)
    try {
      const t = await receive()
      const out = await runCli(
        'sandbox',
        'vnd-transfer',
        '--memo',
        t.sourceReq.reqDetails.memo,
        '--amount',
        String(t.sourceReq.amtRequested),
      )
      expect(out.out).toMatch(/: exact \(txn_/)
      expect((await get(t.txnId)).txnState).toBe('completed')
      const stray = JSON.parse(
        (await runCli('sandbox', 'vnd-transfer', '--memo', 'x', '--amount', '5000', '--json')).out,
      )
      expect((await runCli('credits', 'list')).out).toContain(stray.creditId)
      const assigned = await runCli(
        'credits',
        'assign',
        stray.creditId,
        '--account',
        a.accountId,
        '--reason',
        'by phone',
      )
      expect(assigned.out).toMatch(new RegExp(`assigned ${stray.creditId} \\(5000 VND\\)`))
    } finally {
      restore()
    }
    await h.expectBooksBalanced()
  })

  describe('into a BTC or USDT wallet through the exchange', () => {
    /** The account's `ccy` wallet in minor units, as the books hold it. */
    const walletBalance = async (acct: TestAccount, ccy: string) =>
      balance((await h.c.accounts.walletId(h.c.db, acct.accountId, ccy))!)
    /** `arrived` dong less `fee`, at the transaction's quoted rate, rounded down (docs/payouts.md). */
    const converted = async (txnId: string, ccy: string, arrived: bigint, fee: bigint) => {
      const txn = await getTxn(h.c.db, asTxnId(txnId))
      const r = parseRate(txn!.fxRate)
      // VND has no minor digits: dong x rate, in `ccy` minor units.
      return ((arrived - fee) * r.num * 10n ** BigInt(precisionOf(ccy))) / 10n ** BigInt(r.scale)
    }
    const num = (minor: bigint, ccy: string) => Number(formatMinor(minor, ccy))
    const receiveInto = async (acct: TestAccount, ccy: string, dong: number) => {
      const q = await h.api('POST', '/api/v2/transaction', acct.token, {
        sourceReq: { ccy: 'VND', method: 'vnd-instant', amtRequested: dong, reqDetails: {} },
        destReq: { ccy, method: 'svcpay', reqDetails: {} },
      })
      expect(q.status, JSON.stringify(q.body)).toBe(200)
      const snapshot = await h.c.rates.current()
      const rate = allInRate(
        h.c.rates.perBtc(snapshot, 'VND'),
        h.c.rates.perBtc(snapshot, ccy),
        h.c.config.fxSpreadBps,
      )
      expect(q.body.fxRate).toBe(Number(formatRate(rate)))
      expect(BigInt(q.body.sourceReq.svcpayFees)).toBe(feeOn(BigInt(dong)))
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, acct.token)
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      expect(c.body.destReq.amtRequested).toBe(
        num(await converted(q.body.txnId, ccy, BigInt(dong), feeOn(BigInt(dong))), ccy),
      )
      return c.body
    }
    const getAs = async (acct: TestAccount, txnId: string) =>
      (await h.api('GET', `/api/v2/transaction/${txnId}`, acct.token)).body

    it.each(['BTC', 'USDT'])('credits an exact transfer to the %s wallet at the quoted rate', async (ccy) => {
      const b = await h.createAccount({ name: `Into ${ccy}` })
      const t = await receiveInto(b, ccy, 1_000_000)
      const r = await ingest(t.sourceReq.reqDetails.memo, 1_000_000n)
      expect(r).toMatchObject({ status: 'matched', outcome: 'exact', txnId: t.txnId })
      const done = await getAs(b, t.txnId)
      expect(done).toMatchObject({ txnState: 'completed', msg: '', fxRate: t.fxRate })
      const expected = await converted(t.txnId, ccy, 1_000_000n, feeOn(1_000_000n))
      expect(expected).toBeGreaterThan(0n)
      expect(done.destReq).toMatchObject({ ccy, amtSettled: num(expected, ccy) })
      expect(done.destReq.amtSettled).toBe(done.destReq.amtRequested)
      expect(await walletBalance(b, ccy)).toBe(expected)
      expect(await walletBalance(b, 'VND')).toBe(0n)
      await h.expectBooksBalanced()
    })

    it('credits a short payment to USDT, the fee on what arrived', async () => {
      const b = await h.createAccount({ name: 'Short USDT' })
      const t = await receiveInto(b, 'USDT', 1_000_000)
      const r = await ingest(t.sourceReq.reqDetails.memo, 400_000n)
      expect(r).toMatchObject({ status: 'matched', outcome: 'underpaid', txnId: t.txnId })
      const done = await getAs(b, t.txnId)
      expect(done).toMatchObject({ txnState: 'completed', msg: 'underpaid' })
      expect(BigInt(done.sourceReq.svcpayFees)).toBe(feeOn(400_000n))
      const expected = await converted(t.txnId, 'USDT', 400_000n, feeOn(400_000n))
      expect(done.destReq.amtSettled).toBe(num(expected, 'USDT'))
      expect(await walletBalance(b, 'USDT')).toBe(expected)
      await h.expectBooksBalanced()
    })

    it('credits a late payment, and a suspense credit assigned to it, to USDT at the quoted rate', async () => {
      const b = await h.createAccount({ name: 'Late USDT' })
      const t = await receiveInto(b, 'USDT', 1_000_000)
      const saved = h.c.payins.now
      h.c.payins.now = () => t.sourceReq.expiresAt + 1
      try {
        await runDueTransactions({
          db: h.c.db,
          transactions: h.c.transactions,
          log: console,
          now: () => t.sourceReq.expiresAt + 1,
        })
      } finally {
        h.c.payins.now = saved
      }
      expect((await getAs(b, t.txnId)).txnState).toBe('expired')
      const late = await ingest(t.sourceReq.reqDetails.memo.toLowerCase(), 1_000_000n)
      expect(late).toMatchObject({ status: 'deposit', outcome: 'late' })
      const deposit = await getAs(b, late.txnId!)
      const lateCredit = await converted(t.txnId, 'USDT', 1_000_000n, feeOn(1_000_000n))
      expect(deposit).toMatchObject({ txnState: 'completed', fxRate: t.fxRate })
      expect(deposit.sourceReq).toMatchObject({ ccy: 'VND', amtSettled: 1_000_000 })
      expect(deposit.destReq).toMatchObject({ ccy: 'USDT', amtSettled: num(lateCredit, 'USDT') })
      expect(await walletBalance(b, 'USDT')).toBe(lateCredit)

      // A transfer without its memo, assigned by an operator to the (expired) receive: the same terms.
      const stray = await transfer('no memo', 250_000)
      const assign = await h.api('POST', `/admin/bank-credits/${stray.creditId}/assign`, h.adminToken, {
        accountId: b.accountId,
        txnId: t.txnId,
        reason: 'payer wrote in',
      })
      expect(assign.status, JSON.stringify(assign.body)).toBe(200)
      const assigned = await getAs(b, assign.body.txnId)
      const assignedCredit = await converted(t.txnId, 'USDT', 250_000n, feeOn(250_000n))
      expect(assigned.destReq).toMatchObject({ ccy: 'USDT', amtSettled: num(assignedCredit, 'USDT') })
      expect(await walletBalance(b, 'USDT')).toBe(lateCredit + assignedCredit)
      expect(await walletBalance(b, 'VND')).toBe(0n)
      await h.expectBooksBalanced()
    })

    it('completes a waiting USDT receive from a suspense credit assigned to it', async () => {
      const b = await h.createAccount({ name: 'Assigned USDT' })
      const t = await receiveInto(b, 'USDT', 300_000)
      const stray = await transfer('forgot the memo', 300_000)
      const assign = await h.api('POST', `/admin/bank-credits/${stray.creditId}/assign`, h.adminToken, {
        accountId: b.accountId,
        txnId: t.txnId,
        reason: 'payer forgot the memo',
      })
      expect(assign.status, JSON.stringify(assign.body)).toBe(200)
      expect(assign.body.txnId).toBe(t.txnId)
      const done = await getAs(b, t.txnId)
      const expected = await converted(t.txnId, 'USDT', 300_000n, feeOn(300_000n))
      expect(done).toMatchObject({ txnState: 'completed', msg: '' })
      expect(done.destReq.amtSettled).toBe(num(expected, 'USDT'))
      expect(await walletBalance(b, 'USDT')).toBe(expected)
      await h.expectBooksBalanced()
    })
  })
})
