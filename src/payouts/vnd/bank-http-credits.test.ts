import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailFailure } from '../../rails/rail.js'
import { startBankStandin, type BankStandin } from '../../../test/standins/bank.js'
import { createBankHttpRail } from './bank-http.js'
import { MEMO_CHARS_MAX, readCredit } from './bank-http-credits.js'

/**
 * The bank adapter's incoming credits: what a partner's credit is read as, and the statement read
 * over a real socket from the partner stand-in (test/standins/bank.ts), signed as every request is.
 */
describe('reading a partner credit', () => {
  const base = {
    id: 'CR-1',
    amount: '150000',
    currency: 'VND',
    description: 'SVCAB12 tra tien',
    bookedAt: 1_700_000_000_000,
  }

  it('keeps the amount exact as a bigint, and the payer fields that are well formed', () => {
    expect(
      readCredit({
        ...base,
        amount: '99999999999999999999',
        payer: { bankBin: '97043', accountNumber: '0011 22', name: ' TRAN B ' },
      }),
    ).toStrictEqual({
      bankRef: 'CR-1',
      amountMinor: 99_999_999_999_999_999_999n,
      memo: 'SVCAB12 tra tien',
      bookedAtMs: 1_700_000_000_000,
      payer: { name: 'TRAN B' },
    })
  })

  it('cuts a long description, blanks control characters, and keeps a credit without one', () => {
    const long = readCredit({ ...base, description: 'đ'.repeat(MEMO_CHARS_MAX + 20) })
    expect('memo' in long && [...long.memo].length).toBe(MEMO_CHARS_MAX)
    expect(readCredit({ ...base, description: 'SVC\u0000AB\n12\u202e' })).toMatchObject({
      memo: 'SVC AB 12 ',
    })
    expect(readCredit({ ...base, description: undefined })).toMatchObject({ memo: '' })
  })

  it('names the field at fault, and the id only when it is a valid one', () => {
    expect(readCredit(null)).toEqual({ problem: 'not_an_object' })
    expect(readCredit({ ...base, id: 'a/b' })).toEqual({ problem: 'id' })
    for (const amount of ['0', '-1', '1.5', '01', 1000, ''])
      expect(readCredit({ ...base, amount })).toEqual({ id: 'CR-1', problem: 'amount' })
    expect(readCredit({ ...base, currency: 'vnd' })).toEqual({ id: 'CR-1', problem: 'currency' })
    expect(readCredit({ ...base, bookedAt: 1.5 })).toEqual({ id: 'CR-1', problem: 'booked_at' })
    expect(readCredit({ ...base, description: 42 })).toEqual({ id: 'CR-1', problem: 'description' })
  })
})

describe('the bank adapter reading credits from the partner', () => {
  let partner: BankStandin
  beforeAll(async () => {
    partner = await startBankStandin({
      apiKey: 'k',
      signingSecret: 'sign-secret',
      notifySecret: 'notify-secret',
    })
  })
  afterAll(() => partner.stop())
  const rail = (signingSecret = 'sign-secret') =>
    createBankHttpRail({ url: partner.url, apiKey: 'k', signingSecret, webhookSecret: 'notify-secret' })

  it('lists credits since a time, oldest first, a page at a time with the cursor', async () => {
    const t = 1_800_000_000_000
    await partner.receiveCredit({ amount: 2n, description: 'two', bookedAt: t + 2 }, 'none')
    await partner.receiveCredit({ amount: 1n, description: 'one', bookedAt: t + 1 }, 'none')
    await partner.receiveCredit({ amount: 9n, description: 'old', bookedAt: t - 1 }, 'none')
    partner.listRaw({ id: 'CRBAD', amount: '5', currency: 'USD', bookedAt: t + 3 })
    const page = await rail().listCredits(t, null)
    expect(page.credits.map((c) => c.memo)).toEqual(['one', 'two'])
    expect(page.skipped).toEqual([{ id: 'CRBAD', problem: 'currency' }])
    expect(page.nextCursor).toBeNull()
    expect(partner.seen.at(-1)!.path).toBe(`/v1/credits?since=${t}&limit=200`)
    for (let i = 0; i < 200; i++)
      await partner.receiveCredit({ amount: 1n, description: `p${i}`, bookedAt: t + 10 }, 'none')
    const first = await rail().listCredits(t, null)
    expect(first.credits).toHaveLength(199)
    expect(first.nextCursor).not.toBeNull()
    const second = await rail().listCredits(t, first.nextCursor)
    expect(second.credits.map((c) => c.memo)).toEqual(['p197', 'p198', 'p199'])
    expect(second.nextCursor).toBeNull()
  })

  it('a request the partner refuses (a wrong signing secret) is a retryable failure', async () => {
    const err = await rail('wrong')
      .listCredits(0, null)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RailFailure)
    expect(err).toMatchObject({ code: 'bank_http_401', retryable: true })
  })

  it('checks a credit notification: signature first, then the credit', () => {
    const { body, signature } = partner.creditNotification({
      type: 'credit',
      id: 'CR77',
      amount: '500',
      currency: 'VND',
      description: 'm',
      bookedAt: 5,
    })
    expect(rail().verifyCredit(body, signature)).toEqual({
      ok: true,
      credit: { bankRef: 'CR77', amountMinor: 500n, memo: 'm', bookedAtMs: 5 },
    })
    expect(rail().verifyCredit(body + ' ', signature)).toEqual({ ok: false, error: 'unauthorized' })
    const payout = partner.creditNotification({ id: 'PO1', status: 'completed' } as never)
    expect(rail().verifyCredit(payout.body, payout.signature)).toEqual({
      ok: false,
      error: 'malformed',
      problem: 'type',
    })
    const unsigned = createBankHttpRail({ url: partner.url, apiKey: 'k' })
    expect(unsigned.verifyCredit(body, signature)).toEqual({ ok: false, error: 'unauthorized' })
  })
})
