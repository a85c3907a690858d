import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBankStandin, type BankStandin } from '../../../test/standins/bank.js'
import { RailFailure } from '../../rails/rail.js'
import { createBankHttpRail } from './bank-http.js'

/**
 * The account inquiry of the bank adapter (docs/payouts.md, "Account inquiry") against the partner
 * stand-in, which checks the API key and our request signature before it answers.
 */
const API_KEY = 'partner-key-accounts'
const SIGNING = 'accounts-signing-secret-0123456789'
const ACCOUNT = { institutionCode: '970436', bankAcctNum: '0011004567890' }

describe('bank-http account inquiry', () => {
  let bank: BankStandin
  const rail = (timeoutMs = 2_000) =>
    createBankHttpRail({ url: bank.url, apiKey: API_KEY, signingSecret: SIGNING, timeoutMs })
  beforeAll(async () => {
    bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING })
    bank.accounts.setAccount('970436', '0011004567890', 'NGUYEN VAN AN')
    bank.accounts.setAccount('970415', '1029384757', 'TRAN T** HOA')
  })
  afterAll(async () => bank?.stop())

  async function failure(promise: Promise<unknown>): Promise<RailFailure> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(RailFailure)
    return err as RailFailure
  }

  it('answers the holder’s name as the bank gives it, masked or not, over a signed GET', async () => {
    expect(await rail().accountName(ACCOUNT)).toEqual({ found: true, name: 'NGUYEN VAN AN' })
    expect(await rail().accountName({ institutionCode: '970415', bankAcctNum: '1029384757' })).toEqual({
      found: true,
      name: 'TRAN T** HOA',
    })
    const seen = bank.seen.at(-1)!
    expect([seen.method, seen.path, seen.status]).toEqual(['GET', '/v1/accounts/970415/1029384757', 200])
    expect(seen.headers['x-svcpay-signature']).toMatch(/^[0-9a-f]{64}$/)
  })

  it('answers not found only on the partner’s account_not_found', async () => {
    expect(await rail().accountName({ institutionCode: '970436', bankAcctNum: '999999999' })).toEqual({
      found: false,
    })
  })

  it('treats server errors, rate limits, a stall and a partner without the endpoint as retryable', async () => {
    for (const status of [500, 503, 429]) {
      bank.failNext({ status })
      const err = await failure(rail().accountName(ACCOUNT))
      expect([err.code, err.retryable]).toEqual([`bank_http_${status}`, true])
    }
    bank.failNext('hang')
    const stalled = await failure(rail(200).accountName(ACCOUNT))
    expect([stalled.code, stalled.retryable]).toEqual(['bank_timeout', true])
    // failNext answers 404 { error: 'unavailable' }: a 404 that does not say account_not_found.
    bank.failNext({ status: 404 })
    const unsupported = await failure(rail().accountName(ACCOUNT))
    expect([unsupported.code, unsupported.retryable]).toEqual(['bank_inquiry_unsupported', true])
    // No failure message quotes the account number (personal data), not even the path.
    for (const err of [stalled, unsupported]) expect(err.message).not.toContain('0011004567890')
  })

  it('a wrong key is retryable; a malformed account is refused before anything is sent', async () => {
    const other = createBankHttpRail({ url: bank.url, apiKey: 'wrong', signingSecret: SIGNING })
    const refused = await failure(other.accountName(ACCOUNT))
    expect([refused.code, refused.retryable]).toEqual(['bank_http_401', true])
    const sent = bank.seen.length
    const malformed = await failure(rail().accountName({ institutionCode: '97043', bankAcctNum: '12' }))
    expect([malformed.code, malformed.retryable]).toEqual(['invalid_account', false])
    expect(bank.seen.length).toBe(sent)
  })
})
