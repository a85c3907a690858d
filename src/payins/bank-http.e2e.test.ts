import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startBankStandin, type BankStandin, type CreditDelivery } from '../../test/standins/bank.js'
import { runDueDeliveries } from '../events/delivery-worker.js'
import { deliveryDepsOf, startReceiver, type Receiver } from '../../test/helpers/webhooks.js'
import { runBankCreditPoll } from '../payouts/vnd/bank-credit-poll.js'
import { ATTENTION_SECTIONS } from '../console/attention.js'

/**
 * A VND receive paid over the bank partner (`VND=bank-http`), end to end: the partner played by the
 * stand-in (test/standins/bank.ts) on a real socket, posting its signed credit notifications to our
 * app listening on another, or listing them in the statement our poll reads; the real sink
 * (src/payins/credits.ts) matching them to receives made through the API.
 */
const API_KEY = 'partner-key-payins'
const NOTIFY_SECRET = 'partner-notify-secret-payins'
const SIGNING_SECRET = 'svcpay-signing-secret-payins'
const HOOK_SECRET = 'whsec-payins-0123456789'

describe(`VND receive over the bank partner (${ENGINE})`, () => {
  let partner: BankStandin
  let h: Harness
  let a: TestAccount
  let hooks: Receiver
  // The poll's own clock, an hour on per run so that each is due.
  let clock = Date.now()

  beforeAll(async () => {
    partner = await startBankStandin({
      apiKey: API_KEY,
      signingSecret: SIGNING_SECRET,
      notifySecret: NOTIFY_SECRET,
    })
    h = await createHarness({
      VND: 'bank-http',
      BANK_PAYOUT_URL: partner.url,
      BANK_PAYOUT_API_KEY: API_KEY,
      BANK_PAYOUT_WEBHOOK_SECRET: NOTIFY_SECRET,
      BANK_PAYOUT_SIGNING_SECRET: SIGNING_SECRET,
      BANK_CREDITS_POLL_S: '1',
      VND_RECEIVE: 'true',
      VND_RECEIVE_BANK_BIN: '970422',
      VND_RECEIVE_ACCOUNT: '0801234567890',
      VND_RECEIVE_ACCOUNT_NAME: 'CONG TY SVCPAY',
    })
    await h.app.listen({ port: 0, host: '127.0.0.1' })
    partner.creditNotifyUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/partners/bank/credits`
    a = await h.createAccount({ name: 'Shop' })
    hooks = await startReceiver(HOOK_SECRET)
    const hook = await h.api('POST', '/api/v2/webhook', a.token, { callback: hooks.url, secret: HOOK_SECRET })
    expect(hook.status).toBe(200)
  }, 60_000)
  afterAll(async () => {
    await hooks?.close()
    await h?.close()
    await partner?.stop()
  })

  const receive = async (dong: number) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'VND', method: 'vnd-instant', reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', amtRequested: dong, reqDetails: {} },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    expect(c.body.sourceReq.reqDetails).toMatchObject({ bankBin: '970422', bankAcctNum: '0801234567890' })
    return c.body as { txnId: string; sourceReq: { amtRequested: number; reqDetails: { memo: string } } }
  }
  /** The memo as a banking app passes it on: its own prefix, lower case, spaces, the payer's name. */
  const mangled = (memo: string) =>
    `MBVCB.3278.012345.${memo.toLowerCase().replace(/(.{4})/g, '$1 ')}.CT tu 0123 NGUYEN VAN A`
  const pay = (t: Awaited<ReturnType<typeof receive>>, delivery: CreditDelivery = 'once') =>
    partner.receiveCredit(
      { amount: BigInt(t.sourceReq.amtRequested), description: mangled(t.sourceReq.reqDetails.memo) },
      delivery,
    )
  const vndWallet = async () =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === 'VND',
    ).amount as number
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const creditsOf = async (bankRef: string) =>
    (
      await h.c.db.query<{ status: string; txn_id: string | null }>(
        'SELECT status, txn_id FROM bank_credits WHERE bank_ref = $1',
        [bankRef],
      )
    ).rows
  const poll = () =>
    runBankCreditPoll({
      db: h.c.db,
      list: h.c.bankCredits!.list,
      sink: h.c.bankCredits!.sink,
      intervalMs: h.c.bankCredits!.pollMs,
      log: { warn: () => {} },
      now: () => (clock += 3_600_000),
    })

  it('completes a receive from the notification of a transfer with a mangled memo, with its webhook', async () => {
    const t = await receive(500_000)
    const before = await vndWallet()
    const { credit, statuses } = await pay(t)
    expect(statuses).toEqual([200])
    const done = await get(t.txnId)
    expect(done).toMatchObject({ txnState: 'completed', msg: '' })
    expect(done.destReq.amtSettled).toBe(500_000)
    expect(await vndWallet()).toBe(before + 500_000)
    expect(await creditsOf(credit.id)).toEqual([{ status: 'matched', txn_id: t.txnId }])
    await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: () => 0 }))
    const deadline = Date.now() + 5_000
    while (!hooks.received.some((r) => r.body.txnId === t.txnId && r.body.txnState === 'completed')) {
      expect(Date.now()).toBeLessThan(deadline)
      await hooks.waitFor(hooks.received.length + 1, 5_000)
    }
    const hook = hooks.received.find((r) => r.body.txnId === t.txnId && r.body.txnState === 'completed')!
    expect(hook.signatureValid).toBe(true)
    await h.expectBooksBalanced()
  })

  it('credits a transfer notified twice once', async () => {
    const t = await receive(120_000)
    const before = await vndWallet()
    const { credit, statuses } = await pay(t, 'twice')
    expect(statuses).toEqual([200, 200])
    expect((await get(t.txnId)).txnState).toBe('completed')
    expect(await vndWallet()).toBe(before + 120_000)
    expect(await creditsOf(credit.id)).toHaveLength(1)
    const { rows } = await h.c.db.query(
      "SELECT id FROM transactions WHERE kind = 'deposit' AND rail_ref = $1",
      [credit.id],
    )
    expect(rows).toEqual([])
    await h.expectBooksBalanced()
  })

  it('completes a receive whose transfer was never notified when the statement poll finds it', async () => {
    const t = await receive(75_000)
    const before = await vndWallet()
    const { credit, statuses } = await pay(t, 'none')
    expect(statuses).toEqual([])
    expect((await get(t.txnId)).txnState).toBe('srccreated')
    await poll()
    expect(await get(t.txnId)).toMatchObject({ txnState: 'completed', msg: '' })
    expect(await creditsOf(credit.id)).toEqual([{ status: 'matched', txn_id: t.txnId }])
    expect(await vndWallet()).toBe(before + 75_000)
    // The statement lists the notified transfers too: read again, nothing is credited twice.
    await poll()
    expect(await vndWallet()).toBe(before + 75_000)
    await h.expectBooksBalanced()
  })

  it('puts a transfer naming no receive in suspense, listed for an operator', async () => {
    const before = await vndWallet()
    const { credit, statuses } = await partner.receiveCredit({
      amount: 33_000n,
      description: 'chuyen tien hang thang',
    })
    expect(statuses).toEqual([200])
    const listed = await h.api('GET', '/admin/bank-credits?status=unassigned', h.adminToken)
    expect(listed.status).toBe(200)
    expect(listed.body.data).toContainEqual(
      expect.objectContaining({ bankRef: credit.id, amount: 33_000, status: 'unassigned', txnId: null }),
    )
    expect(await vndWallet()).toBe(before)
    await h.expectBooksBalanced()
  })

  it('an unrecordable statement item is left out and shown to operators; the rest is read, its notification is a 400', async () => {
    const t = await receive(64_000)
    // An amount no ledger can hold, listed before a genuine credit that was never notified.
    const huge = {
      type: 'credit',
      id: 'CRHUGE1',
      amount: '99999999999999999999',
      currency: 'VND',
      description: 'chuyen tien',
      bookedAt: Date.now() - 1_000,
    }
    partner.listRaw(huge)
    const { credit } = await pay(t, 'none')
    await poll()
    expect(await get(t.txnId)).toMatchObject({ txnState: 'completed', msg: '' })
    expect(await creditsOf(credit.id)).toEqual([{ status: 'matched', txn_id: t.txnId }])
    const cursor = await h.c.db.query<{ failures: number }>('SELECT failures FROM bank_credit_cursor')
    expect(Number(cursor.rows[0]!.failures)).toBe(0)
    // The same item as a signed notification: refused for good (400), not "try again" (503).
    const body = JSON.stringify(huge)
    const { createHmac } = await import('node:crypto')
    const told = await h.app.inject({
      method: 'POST',
      url: '/partners/bank/credits',
      headers: {
        'content-type': 'application/json',
        'x-partner-signature': createHmac('sha256', NOTIFY_SECRET).update(body).digest('hex'),
      },
      payload: body,
    })
    expect(told.statusCode, told.body).toBe(400)
    expect(await creditsOf('CRHUGE1')).toEqual([])
    // Operators see it on the attention list, by its id and the field at fault only.
    const section = ATTENTION_SECTIONS.find((s) => s.key === 'bank-credits-skipped')
    expect(section).toBeDefined()
    const listed = await section!.read(h.c, Date.now(), 10)
    expect(listed.rows).toContainEqual(
      expect.objectContaining({
        ref: expect.objectContaining({ id: 'CRHUGE1' }),
        why: expect.stringContaining('amount'),
      }),
    )
    expect(JSON.stringify(listed.rows)).not.toContain('99999999999999999999')
    await h.expectBooksBalanced()
  })

  it('reconciliation matches credits against the statement: genuine ones clear, a suspense transfer is one orphan until assigned, a credit the statement never lists is its own alarm', async () => {
    const bankOrphans = async () =>
      ((await h.api('GET', '/admin/reconciliation', h.adminToken)).body.orphans as any[]).filter(
        (o) => o.rail === 'bank',
      )
    // Every credit so far is on the statement: none of the credited receives is an orphan.
    const first = await bankOrphans()
    expect(first.filter((o) => o.reason === 'not_on_rail')).toEqual([])
    // The transfer in suspense: one orphan, for its reference.
    const { credit } = await partner.receiveCredit({ amount: 41_000n, description: 'khong co ma' })
    const mine = (await bankOrphans()).filter((o) => o.ref === credit.id)
    expect(mine).toEqual([
      expect.objectContaining({ side: 'ledger', reason: 'unassigned_credit', amount: '41000' }),
    ])
    const listed = await h.api('GET', '/admin/bank-credits?status=unassigned', h.adminToken)
    const creditId = listed.body.data.find((c: any) => c.bankRef === credit.id).creditId
    const assigned = await h.api('POST', `/admin/bank-credits/${creditId}/assign`, h.adminToken, {
      accountId: a.accountId,
      reason: 'the shop says it is theirs',
    })
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200)
    expect((await bankOrphans()).filter((o) => o.ref === credit.id)).toEqual([])
    // A signed notification of a credit the partner's statement never lists (a leaked secret).
    const t = await receive(55_000)
    const forged = {
      type: 'credit',
      id: 'FORGED1',
      amount: '55000',
      currency: 'VND',
      description: t.sourceReq.reqDetails.memo,
      bookedAt: Date.now(),
    }
    const body = JSON.stringify(forged)
    const { createHmac } = await import('node:crypto')
    const told = await h.app.inject({
      method: 'POST',
      url: '/partners/bank/credits',
      headers: {
        'content-type': 'application/json',
        'x-partner-signature': createHmac('sha256', NOTIFY_SECRET).update(body).digest('hex'),
      },
      payload: body,
    })
    expect(told.statusCode).toBe(200)
    // Within the grace window the statement may still be catching up: no alarm yet.
    expect((await bankOrphans()).filter((o) => o.ref === 'FORGED1')).toEqual([])
    await h.c.db.query('UPDATE journal_entries SET created_at = created_at - 7200000 WHERE txn_id = $1', [
      t.txnId,
    ])
    expect((await bankOrphans()).filter((o) => o.ref === 'FORGED1')).toEqual([
      expect.objectContaining({ side: 'ledger', reason: 'credit_not_on_statement', txnId: t.txnId }),
    ])
  })
})
