import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startBankStandin, type BankStandin } from '../../../test/standins/bank.js'
import { RailFailure } from '../../rails/rail.js'
import { createBankHttpRail, signRequest, type BankHttpConfig } from './bank-http.js'

/**
 * The bank adapter against the partner stand-in (test/standins/bank.ts), which checks our key and
 * our request signature as docs/payouts.md says a partner does, and fails as a partner's service
 * does. Request signing, check(), returned payouts and the partner's failures.
 */
const API_KEY = 'partner-key-sign-1'
const SIGNING = 'our-request-signing-secret-0123456789'
const NOTIFY = 'partner-notify-secret-0123456789'

const PAYOUT = {
  requestId: 'txn_sign_1',
  amountMinor: 1_250_000n,
  ccy: 'VND' as const,
  bankAcctNum: '0011004567890',
  institutionCode: '970436',
  beneficiary: { type: 'individual' as const, legalFullName: 'Trần Thị Bình', countryCode: 'VN' },
  sourceOfFunds: { purpose: 1, source: 3, relationship: 2 },
}

let bank: BankStandin
beforeEach(async () => {
  bank = await startBankStandin({
    apiKey: API_KEY,
    signingSecret: SIGNING,
    notifySecret: NOTIFY,
    balance: '75000000',
  })
})
afterEach(async () => {
  await bank.stop()
})

function rail(overrides: Partial<BankHttpConfig> = {}) {
  return createBankHttpRail({
    url: bank.url,
    apiKey: API_KEY,
    webhookSecret: NOTIFY,
    signingSecret: SIGNING,
    // Generous: the machine running the tests may be busy; the time-out cases set their own.
    timeoutMs: 10_000,
    ...overrides,
  })
}

async function failure(promise: Promise<unknown>): Promise<RailFailure> {
  try {
    await promise
  } catch (err) {
    expect(err).toBeInstanceOf(RailFailure)
    return err as RailFailure
  }
  throw new Error('expected a RailFailure')
}

describe('bank partner: request signing', () => {
  it('signs every request over timestamp, method, path and body; the partner accepts it', async () => {
    const { bankRef } = await rail().submitPayout(PAYOUT)
    expect(await rail().getPayout(bankRef)).toEqual({ status: 'pending' })
    expect(bank.seen.map((s) => s.status)).toEqual([201, 200])
    const post = bank.seen[0]!
    const timestamp = String(post.headers['x-svcpay-timestamp'])
    expect(Math.abs(Number(timestamp) - Date.now())).toBeLessThan(10_000)
    const body = JSON.stringify(bank.payout(bankRef).body)
    expect(post.headers['x-svcpay-signature']).toBe(
      signRequest(SIGNING, timestamp, 'POST', '/v1/payouts', body),
    )
    // The secret itself never travels.
    expect(JSON.stringify(bank.seen)).not.toContain(SIGNING)
  })

  it('is refused without a signature, with a wrong one, or with an old timestamp (retryable, nothing paid)', async () => {
    const unsigned = await failure(rail({ signingSecret: undefined }).submitPayout(PAYOUT))
    const wrong = await failure(rail({ signingSecret: 'another-secret-0123456789' }).submitPayout(PAYOUT))
    const old = await failure(rail({ now: () => Date.now() - 6 * 60_000 }).submitPayout(PAYOUT))
    for (const err of [unsigned, wrong, old])
      expect([err.code, err.retryable]).toEqual(['bank_http_401', true])
    expect(bank.seen.map((s) => s.status)).toEqual([401, 401, 401])
    expect(bank.byId.size).toBe(0)
  })

  it('a signature covers the path: one made for another payout is refused', () => {
    const a = signRequest(SIGNING, '1700000000000', 'GET', '/v1/payouts/PO1', '')
    const b = signRequest(SIGNING, '1700000000000', 'GET', '/v1/payouts/PO2', '')
    const c = signRequest(SIGNING, '1700000000001', 'GET', '/v1/payouts/PO1', '')
    expect(new Set([a, b, c]).size).toBe(3)
    expect(a).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe('bank partner: returned payouts', () => {
  it('reads returned and reversed as reversed, keeping a short reason code only', async () => {
    const { bankRef } = await rail().submitPayout(PAYOUT)
    const p = bank.payout(bankRef)
    p.status = 'completed'
    expect(await rail().getPayout(bankRef)).toEqual({ status: 'completed' })
    p.status = 'returned'
    p.reason = 'account_closed'
    expect(await rail().getPayout(bankRef)).toEqual({ status: 'reversed', reason: 'account_closed' })
    p.status = 'reversed'
    p.reason = 'Returned: Trần Thị Bình closed 0011004567890'
    expect(await rail().getPayout(bankRef)).toEqual({ status: 'reversed', reason: 'returned_by_bank' })
  })
})

describe('bank partner: failures of the partner', () => {
  it('5xx and time-outs are retryable; after a restart the retry finds the same payout', async () => {
    bank.failNext({ status: 503 }, 'hang')
    const down = await failure(rail().submitPayout(PAYOUT))
    expect([down.code, down.retryable]).toEqual(['bank_http_503', true])
    const slow = await failure(rail({ timeoutMs: 300 }).submitPayout(PAYOUT))
    expect([slow.code, slow.retryable]).toEqual(['bank_timeout', true])
    const { bankRef } = await rail().submitPayout(PAYOUT)
    await bank.stop()
    const gone = await failure(rail().getPayout(bankRef))
    expect([gone.code, gone.retryable]).toEqual(['bank_unreachable', true])
    await bank.start()
    expect(await rail().submitPayout(PAYOUT)).toEqual({ bankRef })
    expect(bank.byId.size).toBe(1)
  })
})

describe('bank partner: check()', () => {
  it('reports a reachable partner that accepts our credentials, with its balance', async () => {
    expect(await rail().check()).toEqual({
      rail: 'bank',
      adapter: 'bank-http',
      reachable: true,
      balances: { VND: '75000000' },
      problems: [],
    })
  })

  it('a partner without a balance endpoint is fine: 404 comes only after authentication', async () => {
    await bank.stop()
    bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING })
    const report = await rail().check()
    expect([report.reachable, report.balances, report.problems]).toEqual([true, undefined, []])
  })

  it('reports refused credentials, a bad signature, a partner that is down, and missing secrets', async () => {
    const wrongKey = await rail({ apiKey: 'not-the-key' }).check()
    expect(wrongKey.reachable).toBe(true)
    expect(wrongKey.problems).toEqual(['the bank partner refused our credentials (HTTP 401: unauthorized)'])
    const wrongSecret = await rail({ signingSecret: 'wrong-signing-secret-0123456789' }).check()
    expect(wrongSecret.problems).toEqual([
      'the bank partner refused our credentials (HTTP 401: bad_signature)',
    ])
    const unsigned = await rail({ signingSecret: undefined, webhookSecret: undefined }).check()
    expect(unsigned.problems).toHaveLength(3)
    expect(unsigned.problems.join(' ')).toMatch(/BANK_PAYOUT_SIGNING_SECRET.*BANK_PAYOUT_WEBHOOK_SECRET/)
    await bank.stop()
    const down = await rail().check()
    expect(down.reachable).toBe(false)
    expect(down.problems).toEqual(['the bank partner did not answer (bank_unreachable)'])
    // No report ever carries a secret.
    expect(JSON.stringify([wrongKey, wrongSecret, unsigned, down])).not.toMatch(/not-the-key|secret-0123/)
  })
})
