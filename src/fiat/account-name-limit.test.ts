import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startBankStandin, type BankStandin } from '../../test/standins/bank.js'

/**
 * The hourly window of bank account-name inquiries (docs/rate-limits.md, "Bank account-name
 * inquiries") through our HTTP API, the bank adapter and the partner stand-in, whose `asked` list
 * shows which inquiries reached the bank. Counted in Redis when the suite runs with one.
 */
const BIN = '970436'
const API_KEY = 'partner-key-name-limit'
const SIGNING = 'name-limit-signing-secret-0123456789'

describe('GET /api/v2/fiat/account-name: the account’s hourly window of inquiries', () => {
  let h: Harness
  let bank: BankStandin
  let a: TestAccount
  let b: TestAccount
  beforeAll(async () => {
    bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING })
    bank.accounts.setAccount(BIN, '0011223342', 'VO THANH BINH')
    const redis: Record<string, string> = process.env.REDIS_URL
      ? {
          REDIS_URL: process.env.REDIS_URL,
          RATE_LIMIT_REDIS_PREFIX: `svcpay:rl:test:${randomBytes(6).toString('hex')}`,
        }
      : {}
    h = await createHarness({
      VND: 'bank-http',
      BANK_PAYOUT_URL: bank.url,
      BANK_PAYOUT_API_KEY: API_KEY,
      BANK_PAYOUT_SIGNING_SECRET: SIGNING,
      RATE_LIMITS_ENABLED: 'true',
      // Only the inquiry window is under test: the burst window stays out of the way.
      RATE_LIMIT_STANDARD_PER_SECOND: '100',
      RATE_LIMIT_ACCOUNT_NAME_PER_HOUR: '2',
      ...redis,
    })
    a = await h.createAccount({ name: 'Name asker A' })
    b = await h.createAccount({ name: 'Name asker B' })
  }, 60_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  const ask = (who: TestAccount, query = `institutionCode=${BIN}&bankAcctNum=0011223342`) =>
    h.api('GET', `/api/v2/fiat/account-name?${query}`, who.token)

  it('admits two, refuses the third with 429 and Retry-After without asking the bank; malformed queries and other accounts spend nothing', async () => {
    // Queries the bank is never asked about do not spend the window.
    for (const query of [
      `institutionCode=${BIN}&bankAcctNum=12-34`,
      'institutionCode=999999&bankAcctNum=0011223342',
    ]) {
      expect((await ask(a, query)).status, query).toBe(400)
    }
    expect(bank.accounts.asked).toEqual([])

    const first = await ask(a)
    expect([first.status, first.body.data?.name]).toEqual([200, 'VO THANH BINH'])
    const second = await ask(a)
    expect(second.status).toBe(200)
    // The tightest window is reported: the inquiry window, now empty.
    expect([second.headers['x-ratelimit-limit'], second.headers['x-ratelimit-remaining']]).toEqual(['2', '0'])

    const third = await ask(a)
    expect([third.status, third.body.error]).toEqual([429, 'rate_limit_exceeded'])
    expect(third.body.message).toMatch(/2 requests per hour for bank account-name inquiries of this account/)
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(3500)
    expect([third.headers['x-ratelimit-limit'], third.headers['x-ratelimit-remaining']]).toEqual(['2', '0'])
    expect(bank.accounts.asked).toHaveLength(2)

    const other = await ask(b)
    expect([other.status, other.body.data?.name]).toEqual([200, 'VO THANH BINH'])
    expect(other.headers['x-ratelimit-remaining']).toBe('1')
    expect(bank.accounts.asked).toHaveLength(3)
  })
})
