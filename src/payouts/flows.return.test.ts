import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { historyProblems, moneyProblems } from '../../test/helpers/invariants.js'
import { startBankStandin, type BankStandin } from '../../test/standins/bank.js'
import { runDueTransactions } from '../transactions/worker.js'
import { txnFromRow } from '../transactions/txn.js'

/**
 * A bank payout that comes back after `completed`: through our API, the worker, the bank adapter and
 * the partner stand-in (test/standins/bank.ts), which checks our request signatures. The money goes
 * back to the wallet exactly once, as a transaction of its own with its event, however often the
 * partner tells us.
 */
const API_KEY = 'partner-key-return'
const SIGNING = 'return-signing-secret-0123456789'
const NOTIFY = 'return-notify-secret-0123456789'

describe('VND payouts returned by the bank', () => {
  let h: Harness
  let a: TestAccount
  let bank: BankStandin
  beforeAll(async () => {
    bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING, notifySecret: NOTIFY })
    h = await createHarness({
      VND: 'bank-http',
      BANK_PAYOUT_URL: bank.url,
      BANK_PAYOUT_API_KEY: API_KEY,
      BANK_PAYOUT_WEBHOOK_SECRET: NOTIFY,
      BANK_PAYOUT_SIGNING_SECRET: SIGNING,
    })
    a = await h.createAccount({ name: 'Return payer' })
    await h.fund(a.accountId, 'VND', '5000000')
    await h.fund(a.accountId, 'USDT', '100')
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  // A real partner is asked again after 30 s; the worker runs as if that time had passed.
  const work = () =>
    runDueTransactions({
      db: h.c.db,
      transactions: h.c.transactions,
      log: console,
      now: () => Date.now() + 60_000,
      railOps: h.c.config.railOps,
    })
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const wallet = async (ccy: string) =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === ccy,
    )
  const notify = async (bankRef: string) => {
    const { body, signature } = bank.notificationFor(bankRef)
    const r = await h.app.inject({
      method: 'POST',
      url: '/partners/bank/notifications',
      headers: { 'content-type': 'application/json', 'x-partner-signature': signature },
      payload: body,
    })
    expect([r.statusCode, r.json()]).toEqual([200, { received: true }])
  }
  const returnsOf = async (payoutId: string) =>
    (
      await h.c.db.query<{ id: string; state: string; msg: string; account_id: string }>(
        `SELECT id, state, msg, account_id FROM transactions WHERE kind = 'payout_return' AND rail_ref = $1`,
        [payoutId],
      )
    ).rows

  async function payout(srcCcy: 'VND' | 'USDT', amtRequested: number) {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: srcCcy, method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested,
        reqDetails: { bankAcctNum: '0011223344', institutionCode: '970415' },
        kyc: { type: 'individual', details: { legalFullName: 'Lê Văn Cường', countryCode: 'VN' } },
      },
      sourceOfFunds: { purpose: 3, source: 2, relationship: 6 },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    await work()
    const sent = await get(q.body.txnId)
    expect(sent.txnState).toBe('destsent')
    return { txnId: q.body.txnId as string, bankRef: sent.destReq.reqDetails.bankRef as string }
  }

  async function expectSound() {
    await h.expectBooksBalanced()
    expect(await moneyProblems(h.c.db)).toEqual([])
    expect(await historyProblems(h.c.db)).toEqual([])
  }

  it('gives the money back once, as a completed payout_return with its event, however often the partner says so', async () => {
    const before = await wallet('VND')
    const { txnId, bankRef } = await payout('VND', 300_000)
    bank.payout(bankRef).status = 'completed'
    await work()
    expect((await get(txnId)).txnState).toBe('completed')
    const paid = await wallet('VND')
    expect(paid.amount).toBeLessThan(before.amount)

    // Days later the beneficiary's bank sends it back; the partner tells us.
    bank.payout(bankRef).status = 'returned'
    bank.payout(bankRef).reason = 'beneficiary_account_closed'
    await notify(bankRef)
    await work()
    const returns = await returnsOf(txnId)
    expect(returns).toHaveLength(1)
    const ret = await get(returns[0]!.id)
    expect(ret.txnState).toBe('completed')
    expect(ret.msg).toBe('beneficiary_account_closed')
    expect(ret.sourceReq.ccy).toBe('VND')
    expect(ret.destReq.ccy).toBe('VND')
    const back = await wallet('VND')
    expect([back.amount, back.availableBalance]).toEqual([before.amount, before.availableBalance])
    const original = await get(txnId)
    expect(original.txnState).toBe('completed')
    expect(original.destReq.reqDetails.returnTxnId).toBe(returns[0]!.id)
    // Its event: the webhook's source, written with the return.
    const { rows: events } = await h.c.db.query<{ txn_state: string; msg: string }>(
      'SELECT txn_state, msg FROM events WHERE txn_id = $1',
      [returns[0]!.id],
    )
    expect(events).toEqual([{ txn_state: 'completed', msg: 'beneficiary_account_closed' }])

    // The partner repeats itself, and our workers run again: nothing more happens.
    for (let i = 0; i < 3; i++) {
      await notify(bankRef)
      await Promise.all([work(), work()])
    }
    expect(await returnsOf(txnId)).toHaveLength(1)
    expect((await wallet('VND')).amount).toBe(before.amount)
    await expectSound()
  })

  it('returns a converted payout to the wallet it came from, in that currency, fee included', async () => {
    const before = await wallet('USDT')
    const { txnId, bankRef } = await payout('USDT', 250_000)
    bank.payout(bankRef).status = 'completed'
    await work()
    expect((await wallet('USDT')).amount).toBeLessThan(before.amount)
    bank.payout(bankRef).status = 'reversed'
    await notify(bankRef)
    await work()
    const [ret] = await returnsOf(txnId)
    expect((await get(ret!.id)).msg).toBe('returned_by_bank')
    expect((await wallet('USDT')).amount).toBe(before.amount)
    await expectSound()
  })

  it('keeps asking while the partner is down, then returns the money once it answers', async () => {
    const before = await wallet('VND')
    const { txnId, bankRef } = await payout('VND', 100_000)
    bank.payout(bankRef).status = 'completed'
    await work()
    bank.payout(bankRef).status = 'returned'
    await notify(bankRef)
    bank.failNext({ status: 502 })
    await work()
    expect(await returnsOf(txnId)).toHaveLength(0)
    // Not forgotten: still due for another look.
    const { rows } = await h.c.db.query<{ next_check_at: string | null }>(
      'SELECT next_check_at::text FROM transactions WHERE id = $1',
      [txnId],
    )
    expect(rows[0]!.next_check_at).not.toBeNull()
    // Listed as stuck once the partner has failed for longer than the bank's bound (4 h by default).
    const stuckIds = async () => {
      const r = await h.app.inject({
        method: 'GET',
        url: '/admin/transactions/stuck',
        headers: { authorization: `Bearer ${h.adminToken}` },
      })
      return r.json().data as Array<{ txnId: string; state: string; reason: string; lastError: string }>
    }
    expect((await stuckIds()).map((t) => t.txnId)).not.toContain(txnId)
    await h.c.db.query('UPDATE rail_attempts SET first_failed_at = first_failed_at - $2 WHERE txn_id = $1', [
      txnId,
      5 * 3_600_000,
    ])
    expect((await stuckIds()).find((t) => t.txnId === txnId)).toMatchObject({
      state: 'completed',
      reason: 'rail_failing',
      lastError: 'bank_http_502',
    })
    await runDueTransactions({
      db: h.c.db,
      transactions: h.c.transactions,
      log: console,
      now: () => Date.now() + 3_600_000,
      railOps: h.c.config.railOps,
    })
    expect(await returnsOf(txnId)).toHaveLength(1)
    expect((await wallet('VND')).amount).toBe(before.amount)
    expect((await stuckIds()).map((t) => t.txnId)).not.toContain(txnId)
    await expectSound()
  })

  it('two workers that both read the payout before either returned it still return it once', async () => {
    const before = await wallet('VND')
    const { txnId, bankRef } = await payout('VND', 90_000)
    bank.payout(bankRef).status = 'completed'
    await work()
    bank.payout(bankRef).status = 'returned'
    // Both hold the same row, read before any return existed, and look at the partner at once.
    const { rows } = await h.c.db.query('SELECT * FROM transactions WHERE id = $1', [txnId])
    const stale = txnFromRow(rows[0])
    const flow = h.c.transactions.flows.get('vnd_payout')!
    await Promise.all([flow.advance!(stale), flow.advance!(stale), flow.advance!(stale)])
    expect(await returnsOf(txnId)).toHaveLength(1)
    expect((await wallet('VND')).amount).toBe(before.amount)
    await expectSound()
  })

  it('a payout returned before we saw it completed fails, its hold released', async () => {
    const before = await wallet('VND')
    const { txnId, bankRef } = await payout('VND', 120_000)
    bank.payout(bankRef).status = 'returned'
    await work()
    const t = await get(txnId)
    expect([t.txnState, t.msg]).toEqual(['failed', 'returned_by_bank'])
    expect(await returnsOf(txnId)).toHaveLength(0)
    const after = await wallet('VND')
    expect([after.amount, after.availableBalance]).toEqual([before.amount, before.availableBalance])
    await expectSound()
  })
})
