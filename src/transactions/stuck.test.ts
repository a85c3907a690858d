import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startBankStandin, type BankStandin } from '../../test/standins/bank.js'
import { backoffDelayMs } from '../rails/attempts.js'
import { runDueTransactions } from './worker.js'

/**
 * No transaction stuck in silence: retries of a failing rail back off per rail and keep their
 * count across a restart, and a transaction its rail has not brought to an outcome within the
 * rail's bound is listed by GET /admin/transactions/stuck and counted by svcpay_transactions_stuck.
 */
const API_KEY = 'partner-key-stuck'
const SIGNING = 'stuck-signing-secret-0123456789'

describe('backoffDelayMs', () => {
  const settings = { retryBaseMs: 1_000, retryMaxMs: 8_000 }
  it('doubles from the base up to the cap', () => {
    expect([1, 2, 3, 4, 5, 50].map((n) => backoffDelayMs(settings, n, () => 0))).toEqual([
      1_000, 2_000, 4_000, 8_000, 8_000, 8_000,
    ])
  })
  it('takes off a random part of up to half, never more', () => {
    expect(backoffDelayMs(settings, 3, () => 0.999_999)).toBe(2_000)
    for (let i = 0; i < 200; i++) {
      const d = backoffDelayMs(settings, 2)
      expect(d).toBeGreaterThanOrEqual(1_000)
      expect(d).toBeLessThanOrEqual(2_000)
    }
  })
})

async function payout(h: Harness, a: TestAccount, amtRequested = 150_000): Promise<string> {
  const q = await h.api('POST', '/api/v2/transaction', a.token, {
    sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
    destReq: {
      ccy: 'VND',
      method: 'vnd-instant',
      amtRequested,
      reqDetails: { bankAcctNum: '0011223344', institutionCode: '970415' },
      kyc: { type: 'individual', details: { legalFullName: 'Phạm Minh Đức', countryCode: 'VN' } },
    },
    sourceOfFunds: { purpose: 3, source: 2, relationship: 6 },
  })
  expect(q.status, JSON.stringify(q.body)).toBe(200)
  const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
  expect(c.body.txnState).toBe('srccreated')
  return q.body.txnId
}

const bankEnv = (bank: BankStandin, extra: Record<string, string> = {}) => ({
  VND: 'bank-http',
  BANK_PAYOUT_URL: bank.url,
  BANK_PAYOUT_API_KEY: API_KEY,
  BANK_PAYOUT_SIGNING_SECRET: SIGNING,
  ...extra,
})

const BACKOFF = { RAIL_BANK_RETRY_BASE_MS: '60000', RAIL_BANK_RETRY_MAX_MS: '240000' }

describe('retries of a failing rail back off, and the backoff survives a restart', () => {
  let h: Harness
  let bank: BankStandin
  beforeAll(async () => {
    bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING })
    h = await createHarness(bankEnv(bank, BACKOFF))
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  const state = async (txnId: string) => {
    const { rows } = await h.c.db.query<{
      state: string
      next_check_at: string
      failures: number | null
      last_error: string | null
      last_answer_at: string | null
    }>(
      `SELECT t.state, t.next_check_at::text, a.failures, a.last_error, a.last_answer_at::text
         FROM transactions t LEFT JOIN rail_attempts a ON a.txn_id = t.id WHERE t.id = $1`,
      [txnId],
    )
    const row = rows[0]!
    return { ...row, next_check_at: Number(row.next_check_at) }
  }

  it('waits longer after each failure in a row, up to the cap, and starts over once the partner answers', async () => {
    const a = await h.createAccount({ name: 'Backoff payer' })
    await h.fund(a.accountId, 'VND', '1000000')
    const txnId = await payout(h, a)
    bank.failNext(...Array.from({ length: 4 }, () => ({ status: 503 })))

    let clock = Date.now()
    const run = (harness: Harness) =>
      runDueTransactions({
        db: harness.c.db,
        transactions: harness.c.transactions,
        log: console,
        now: () => clock,
        railOps: harness.c.config.railOps,
      })

    // Nominal waits 60 s, 120 s, then 240 s (the cap), each less up to half of it for jitter.
    const expected = [60_000, 120_000, 240_000, 240_000]
    for (const [i, nominal] of expected.entries()) {
      // The third look is made by another process on the same database: a restart.
      const worker = i >= 2 ? await createHarness(bankEnv(bank, BACKOFF), { shareDbWith: h }) : h
      try {
        await run(worker)
      } finally {
        if (worker !== h) await worker.close()
      }
      const s = await state(txnId)
      expect([s.state, s.failures, s.last_error]).toEqual(['srccreated', i + 1, 'bank_http_503'])
      const wait = s.next_check_at - clock
      expect(wait).toBeGreaterThanOrEqual(Math.max(nominal / 2, 30_000))
      expect(wait).toBeLessThanOrEqual(nominal)
      // Nothing is asked before that time.
      const asked = bank.seen.length
      clock = s.next_check_at - 1
      await run(h)
      expect(bank.seen.length).toBe(asked)
      clock = s.next_check_at
    }
    expect(bank.seen.map((s) => s.status)).toEqual([503, 503, 503, 503])

    await run(h)
    const s = await state(txnId)
    // The failures in a row are over; the last one's code stays on record.
    expect([s.state, s.failures, s.last_error]).toEqual(['destsent', 0, 'bank_http_503'])
    expect(Number(s.last_answer_at)).toBe(clock)
    await h.expectBooksBalanced()
  })
})

describe('GET /admin/transactions/stuck and svcpay_transactions_stuck', () => {
  let h: Harness
  let a: TestAccount
  let bank: BankStandin
  beforeAll(async () => {
    bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING })
    h = await createHarness(
      bankEnv(bank, { RAIL_BANK_STUCK_AFTER_S: '600', RAIL_LIGHTNING_STUCK_AFTER_S: '300' }),
    )
    a = await h.createAccount({ name: 'Stuck payer' })
    await h.fund(a.accountId, 'VND', '2000000')
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  const admin = (url: string, token: string | null = h.adminToken) =>
    h.app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} })
  const stuck = async (query = '') => {
    const r = await admin(`/admin/transactions/stuck${query}`)
    expect(r.statusCode, r.body).toBe(200)
    return r.json()
  }
  const gauge = async () => {
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body
    return Object.fromEntries(
      [...text.matchAll(/^svcpay_transactions_stuck\{rail="(\w+)"\} (\d+)$/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]),
    )
  }
  /** Move a transaction's clocks back, as if it had waited that long. */
  const age = (txnId: string, ms: number) =>
    h.c.db.query(
      `UPDATE transactions SET src_updated_at = src_updated_at - $2, expires_at = expires_at - $2 WHERE id = $1`,
      [txnId, ms],
    )
  const work = () =>
    runDueTransactions({
      db: h.c.db,
      transactions: h.c.transactions,
      log: console,
      now: () => Date.now() + 60_000,
      railOps: h.c.config.railOps,
    })

  it('lists what has waited on its rail past the rail’s bound, with what the rail last said', async () => {
    // One payout the partner holds (answered: pending), one the partner cannot take (failing).
    const held = await payout(h, a)
    await work()
    // Its next look is an hour away, so that the next run asks about the other one only.
    await h.c.db.query('UPDATE transactions SET next_check_at = next_check_at + 3600000 WHERE id = $1', [
      held,
    ])
    const failing = await payout(h, a)
    bank.failNext({ status: 500 })
    await work()
    // And an open Lightning invoice: it waits on its payer, not on the node.
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: 0.0001, reqDetails: {} },
    })
    const invoice = q.body.txnId as string
    expect((await h.api('PUT', `/api/v2/transaction/${invoice}/confirm`, a.token)).body.txnState).toBe(
      'srccreated',
    )

    expect(await stuck()).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0 } })
    expect(await gauge()).toEqual({ lightning: 0, onchain: 0, tron: 0, bank: 0, ethereum: 0 })

    // Eleven minutes on: past the bank's bound of ten; the invoice is not past its expiry yet.
    await age(held, 11 * 60_000)
    await age(failing, 11 * 60_000)
    await h.c.db.query('UPDATE rail_attempts SET first_failed_at = first_failed_at - $2 WHERE txn_id = $1', [
      failing,
      11 * 60_000,
    ])
    await age(invoice, 11 * 60_000)
    const listed = await stuck()
    expect(listed.pagination).toEqual({ page: 1, limit: 20, total: 2 })
    const byId = Object.fromEntries(listed.data.map((t: any) => [t.txnId, t]))
    expect(byId[held]).toEqual({
      txnId: held,
      accountId: a.accountId,
      type: 'vnd_payout',
      rail: 'bank',
      state: 'destsent',
      since: expect.any(Number),
      reason: 'no_outcome',
      failures: 0,
      lastError: null,
      lastAttemptAt: expect.any(Number),
      lastAnswerAt: expect.any(Number),
      nextRetryAt: expect.any(Number),
    })
    expect(byId[failing]).toMatchObject({
      type: 'vnd_payout',
      rail: 'bank',
      state: 'srccreated',
      reason: 'rail_failing',
      failures: 1,
      lastError: 'bank_http_500',
    })
    expect(byId[failing].nextRetryAt).toBeGreaterThan(Date.now())
    expect(await gauge()).toEqual({ lightning: 0, onchain: 0, tron: 0, bank: 2, ethereum: 0 })

    // The invoice an hour past its expiry and still open: overdue on the Lightning rail.
    await age(invoice, 60 * 60_000)
    const all = await stuck()
    expect(all.pagination.total).toBe(3)
    expect(all.data.find((t: any) => t.txnId === invoice)).toMatchObject({
      type: 'ln_receive',
      rail: 'lightning',
      state: 'srccreated',
      reason: 'overdue',
    })
    expect(await gauge()).toEqual({ lightning: 1, onchain: 0, tron: 0, bank: 2, ethereum: 0 })

    // Paged, the longest waiting first.
    const first = await stuck('?limit=2')
    const second = await stuck('?limit=2&page=2')
    expect(first.data).toHaveLength(2)
    expect(second.data).toHaveLength(1)
    expect(second.pagination).toEqual({ page: 2, limit: 2, total: 3 })
    const order = [...first.data, ...second.data].map((t: any) => t.since)
    expect(order).toEqual([...order].sort((x, y) => x - y))

    // Once the partner answers and completes, the payout is no longer stuck.
    bank.payout(bank.byKey.get(held)!.id).status = 'completed'
    await h.c.db.query('UPDATE transactions SET next_check_at = 0 WHERE id = $1', [held])
    await work()
    expect((await stuck()).data.map((t: any) => t.txnId)).not.toContain(held)
    await h.expectBooksBalanced()
  })

  it('lists at once a transaction no worker will ever look at again', async () => {
    const orphan = await payout(h, a)
    expect((await stuck()).data.map((t: any) => t.txnId)).not.toContain(orphan)
    await h.c.db.query('UPDATE transactions SET next_check_at = NULL WHERE id = $1', [orphan])
    expect((await stuck()).data.find((t: any) => t.txnId === orphan)).toMatchObject({
      state: 'srccreated',
      reason: 'unscheduled',
      nextRetryAt: null,
    })
  })

  it('is for operators only, and refuses a page larger than 100', async () => {
    expect((await admin('/admin/transactions/stuck', null)).statusCode).toBe(401)
    expect((await admin('/admin/transactions/stuck', 'adm_wrong')).statusCode).toBe(401)
    const big = await admin('/admin/transactions/stuck?limit=101')
    expect([big.statusCode, big.json().error]).toEqual([400, 'invalid_request'])
    const bad = await admin('/admin/transactions/stuck?page=0')
    expect(bad.statusCode).toBe(400)
  })
})
