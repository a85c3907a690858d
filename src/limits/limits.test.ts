import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { operatorClient } from '../../test/admin/operator-client.js'
import { tronAddressFromPrivateKey } from '../payouts/tron/address.js'
import { runDueTransactions } from '../transactions/worker.js'

/**
 * The limits gate (issue 31) on either engine, through the API: each limit refuses the first minor
 * unit over it and passes exactly at it, a failed send gives its amount back, the refusal's details,
 * GET /limits, and an operator's override. Amounts in USDT with LIMITS_CCY=USDT, so that a limit's
 * edge is an exact amount; one case in USD states the rounding (up, to the cent).
 */

// The USDT token contract on TRON mainnet: a well-known valid address.
const GOOD = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const FAILING = tronAddressFromPrivateKey(new Uint8Array(32).fill(7))
const OTHER = tronAddressFromPrivateKey(new Uint8Array(32).fill(9))

const tron = (amount: string, address = GOOD) => ({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'USDT', method: 'tron', amtRequested: amount, reqDetails: { address } },
})

describe('limits: volume and velocity, atomic with the confirm', () => {
  let h: Harness
  let a: TestAccount
  const work = () => runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  const quote = (acct: TestAccount, amount: string, address?: string) =>
    h.api('POST', '/api/v2/transaction', acct.token, tron(amount, address))
  const confirm = (acct: TestAccount, txnId: string) =>
    h.api('PUT', `/api/v2/transaction/${txnId}/confirm`, acct.token)

  beforeAll(async () => {
    h = await createHarness({
      LIMITS_CCY: 'USDT',
      LIMITS_STANDARD_PER_TRANSACTION: '100',
      LIMITS_STANDARD_DAILY_OUTGOING: '250',
      LIMITS_STANDARD_DAILY_INCOMING_LIGHTNING: '100',
      LIMITS_PREMIUM_SENDS_PER_HOUR: '2',
      LIMITS_PREMIUM_DAILY_OUTGOING_TRON: '1000',
      LIMITS_VIP_NEW_DESTINATION_COOLDOWN_S: '3600',
      SANDBOX_TRON_FAIL: FAILING,
      SANDBOX_PAYOUT_DELAY_MS: '0',
    })
    a = await h.createAccount()
    await h.fund(a.accountId, 'USDT', '5000')
  }, 180_000)
  afterAll(async () => h?.close())

  it('refuses one minor unit over the per-transaction limit at quote, and passes exactly at it', async () => {
    const over = await quote(a, '100.000001')
    expect(over.status).toBe(403)
    expect(over.body).toEqual({
      error: 'limit_exceeded',
      message: expect.any(String),
      details: [
        {
          field: 'destReq.amtRequested',
          issue: 'over the limit',
          limit: 'per_transaction',
          ccy: 'USDT',
          remaining: '100',
        },
      ],
    })
    const at = await quote(a, '100')
    expect(at.status).toBe(200)
    expect((await confirm(a, at.body.txnId)).body.txnState).toBe('srccreated')
  })

  it('binds the daily limit at confirm, frees a failed send, and shows the use', async () => {
    // 100 used. Two quotes of 75 both fit at quote time (informative); the second confirm is refused.
    const q1 = await quote(a, '75')
    const q2 = await quote(a, '75.000001')
    expect(q2.status).toBe(200)
    expect((await confirm(a, q1.body.txnId)).status).toBe(200)
    const refused = await confirm(a, q2.body.txnId)
    expect(refused.status).toBe(403)
    expect(refused.body.details[0]).toMatchObject({ limit: 'daily_outgoing', ccy: 'USDT', remaining: '75' })
    expect(refused.body.details[0].resetsAt).toBeGreaterThan(Date.now() + 23 * 3_600_000)
    // A refused confirm changes nothing: still quoted, nothing held.
    expect((await h.api('GET', `/api/v2/transaction/${q2.body.txnId}`, a.token)).body.txnState).toBe('quoted')
    // Exactly up to the limit passes.
    const q3 = await quote(a, '75')
    expect((await confirm(a, q3.body.txnId)).status).toBe(200)
    const full = await quote(a, '0.000001')
    expect(full.status).toBe(403)
    expect(full.body.details[0]).toMatchObject({ limit: 'daily_outgoing', remaining: '0' })

    const limits = await h.api('GET', `/api/v2/account/${a.accountId}/limits`, a.token)
    expect(limits.status).toBe(200)
    expect(limits.body.data).toMatchObject({ accountId: a.accountId, tier: 'standard', ccy: 'USDT' })
    expect(limits.body.data.limits).toEqual(
      expect.arrayContaining([
        { limit: 'per_transaction', method: null, ccy: 'USDT', amount: '100' },
        expect.objectContaining({
          limit: 'daily_outgoing',
          method: null,
          amount: '250',
          used: '250',
          remaining: '0',
        }),
      ]),
    )
    // The console's account page shows them to an operator.
    const ops = operatorClient(h.app, h.adminToken)
    const viewer = await ops.signIn(await ops.createOperator('viewer'))
    const page = await ops.request('GET', `/admin/console/accounts/${a.accountId}`, { session: viewer })
    expect(page.status).toBe(200)
    expect(page.raw).toContain('data-testid="limits"')
    expect(page.raw).toMatch(/daily_outgoing<\/td><td>[^<]*<\/td><td class="num">250 USDT/)
    // Another account's token may not read them.
    const b = await h.createAccount()
    expect((await h.api('GET', `/api/v2/account/${a.accountId}/limits`, b.token)).status).toBe(401)
  })

  it('caps incoming Lightning value per day, to the exact minor unit after rounding up', async () => {
    const r = await h.createAccount()
    const receive = (amount: string) =>
      h.api('POST', '/api/v2/transaction', r.token, {
        sourceReq: { ccy: 'BTC', method: 'lightning', amtRequested: amount, reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      })
    // 0.001 BTC at 95010 USDT/BTC is exactly 95.01 USDT.
    const first = await receive('0.001')
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect((await confirm(r, first.body.txnId)).status).toBe(200)
    // 5253 sats = 4.9908753 USDT, rounded up to 4.990876: 100.000876 > 100.
    const over = await receive('0.00005253')
    expect(over.status).toBe(403)
    expect(over.body.details[0]).toMatchObject({
      limit: 'daily_incoming',
      issue: 'over the lightning limit',
      remaining: '4.99',
    })
    // 5252 sats = 4.9899252, rounded up to 4.989926 USDT: 99.999926, under the limit.
    const under = await receive('0.00005252')
    expect(under.status).toBe(200)
    expect((await confirm(r, under.body.txnId)).status).toBe(200)
  })

  it('gives a failed send its amount back', async () => {
    const c = await h.createAccount()
    await h.fund(c.accountId, 'USDT', '1000')
    const failing = await quote(c, '100', FAILING)
    expect((await confirm(c, failing.body.txnId)).status).toBe(200)
    const q = await quote(c, '100')
    expect((await confirm(c, q.body.txnId)).status).toBe(200)
    // 200 used: 50.000001 more is refused until the failing send fails.
    expect((await quote(c, '50.000001')).status).toBe(403)
    for (let i = 0; i < 5; i++) await work()
    expect((await h.api('GET', `/api/v2/transaction/${failing.body.txnId}`, c.token)).body.txnState).toBe(
      'failed',
    )
    const after = await quote(c, '100')
    expect(after.status).toBe(200)
    expect((await confirm(c, after.body.txnId)).status).toBe(200)
  })

  it('limits sends per hour (velocity) and a per-method daily limit', async () => {
    const p = await h.createAccount({ tier: 'premium' })
    await h.fund(p.accountId, 'USDT', '5000')
    for (const amount of ['600', '400']) {
      const q = await quote(p, amount)
      expect((await confirm(p, q.body.txnId)).status).toBe(200)
    }
    const third = await quote(p, '1')
    expect(third.status).toBe(403)
    expect(third.body.details[0]).toMatchObject({ limit: 'velocity', remaining: '0' })
    // An operator raises the velocity limit for this account; the TRON daily limit (1000) then binds.
    const set = await h.api('PUT', `/admin/accounts/${p.accountId}/limits/overrides`, h.adminToken, {
      limit: 'sends_per_hour',
      amount: '10',
      reason: 'batch payroll today',
    })
    expect(set.status).toBe(200)
    const fourth = await quote(p, '0.000001')
    expect(fourth.status).toBe(403)
    expect(fourth.body.details[0]).toMatchObject({
      limit: 'daily_outgoing',
      issue: 'over the tron limit',
      remaining: '0',
    })
    const audit = await h.api('GET', '/admin/audit?action=limits.override', h.adminToken)
    expect(JSON.stringify(audit.body)).toContain('batch payroll today')
    // The customer sees the override, never the operator's reason nor who set it.
    const mine = await h.api('GET', `/api/v2/account/${p.accountId}/limits`, p.token)
    expect(mine.body.data.overrides).toEqual([
      { limit: 'sends_per_hour', method: null, amount: '10', setAt: expect.any(Number), expiresAt: null },
    ])
    expect(JSON.stringify(mine.body)).not.toMatch(/payroll|admin-token|setBy|reason/)
  })

  it('holds a new destination in its cool-down, in an operator-assigned tier, and the allow-list mode', async () => {
    const v = await h.createAccount()
    await h.fund(v.accountId, 'USDT', '1000')
    expect(
      (
        await h.api('PUT', `/admin/accounts/${v.accountId}/limits`, h.adminToken, {
          tier: 'vip',
          reason: 'VIP client',
        })
      ).status,
    ).toBe(200)
    const q = await quote(v, '10', OTHER)
    expect(q.status).toBe(200)
    const refused = await confirm(v, q.body.txnId)
    expect(refused.status).toBe(403)
    expect(refused.body.details[0]).toMatchObject({ limit: 'new_destination' })
    expect(refused.body.details[0].resetsAt).toBeGreaterThan(Date.now() + 3_500_000)

    expect(
      (
        await h.api('PUT', `/admin/accounts/${v.accountId}/limits`, h.adminToken, {
          allowListOnly: true,
          reason: 'x',
        })
      ).status,
    ).toBe(200)
    const notListed = await quote(v, '10', GOOD)
    expect(notListed.status).toBe(403)
    expect(notListed.body.details[0]).toMatchObject({ limit: 'allow_list' })
    expect(
      (
        await h.api('POST', `/admin/accounts/${v.accountId}/limits/allow-list`, h.adminToken, {
          destination: `tron:${GOOD}`,
          reason: 'their own exchange account',
        })
      ).status,
    ).toBe(200)
    expect((await quote(v, '10', GOOD)).status).toBe(200)
  })
})

describe('limits in USD: the value at the quote rate, rounded up to the cent', () => {
  let h: Harness
  afterAll(async () => h?.close())

  it('counts USDT at 95000/95010 USD each, rounded up: 1.0001 USDT is 1.00 USD, 1.0002 USDT is 1.01', async () => {
    h = await createHarness({ LIMITS_STANDARD_PER_TRANSACTION: '1.00' })
    const a = await h.createAccount()
    await h.fund(a.accountId, 'USDT', '10')
    // Static rates: 95000 USD and 95010 USDT per BTC. 1.0001 USDT = 0.99999473… USD, rounded up to
    // 1.00: exactly the limit, which passes; 1.0002 USDT = 1.0000947… USD, rounded up to 1.01: refused.
    expect((await h.api('POST', '/api/v2/transaction', a.token, tron('1.0001'))).status).toBe(200)
    const over = await h.api('POST', '/api/v2/transaction', a.token, tron('1.0002'))
    expect(over.status).toBe(403)
    expect(over.body.details[0]).toMatchObject({ limit: 'per_transaction', ccy: 'USD', remaining: '1' })
  }, 180_000)
})
