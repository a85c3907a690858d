import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAppHarness, type AppHarness } from '../helpers/app-harness.js'
import { startBankStandin, type BankStandin } from '../standins/bank.js'
import { runDueTransactions } from '../../src/transactions/worker.js'

/**
 * The bank rail's secrets and the beneficiary's data stay out of a trace-level log and out of the
 * operator reports, through signed requests, partner failures, a returned payout, `rails check`
 * and the stuck listing.
 */
const API_KEY = 'bank-api-key-' + 'f00d'.repeat(6)
const SIGNING = 'bank-signing-secret-' + 'beef'.repeat(6)
const NOTIFY = 'bank-notify-secret-' + 'cafe'.repeat(6)
const ACCOUNT_NUMBER = '0071000999444555'
const NAME = 'Võ Thị Hồng Nhung'

describe('bank secrets in logs and reports', () => {
  let h: AppHarness
  let bank: BankStandin
  let logged = ''
  beforeAll(async () => {
    bank = await startBankStandin({
      apiKey: API_KEY,
      signingSecret: SIGNING,
      notifySecret: NOTIFY,
      balance: '5000000',
    })
    h = await createAppHarness({
      logLevel: 'trace',
      logDestination: new Writable({
        write(chunk, _encoding, done) {
          logged += String(chunk)
          done()
        },
      }),
      env: {
        VND: 'bank-http',
        BANK_PAYOUT_URL: bank.url,
        BANK_PAYOUT_API_KEY: API_KEY,
        BANK_PAYOUT_SIGNING_SECRET: SIGNING,
        BANK_PAYOUT_WEBHOOK_SECRET: NOTIFY,
      },
    })
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  it('writes none of them, whatever happens to the payout', async () => {
    const a = await h.createAccount({ name: 'Log payer' })
    await h.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy: 'VND', amount: '1000000' })
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: 200_000,
        reqDetails: { bankAcctNum: ACCOUNT_NUMBER, institutionCode: '970415' },
        kyc: { type: 'individual', details: { legalFullName: NAME, countryCode: 'VN' } },
      },
      sourceOfFunds: { purpose: 3, source: 2, relationship: 6 },
    })
    expect(q.status, q.raw).toBe(200)
    const txnId = q.body.txnId as string
    await h.api('PUT', `/api/v2/transaction/${txnId}/confirm`, a.token)
    let clock = Date.now()
    const work = () =>
      runDueTransactions({
        db: h.c.db,
        transactions: h.c.transactions,
        log: h.c.log,
        now: () => (clock += 3_600_000),
        railOps: h.c.config.railOps,
      })
    bank.failNext({ status: 503 }, { status: 401 })
    for (let i = 0; i < 3; i++) await work()
    const bankRef = (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body.destReq.reqDetails
      .bankRef
    expect(bankRef).toEqual(expect.any(String))
    bank.payout(bankRef).status = 'completed'
    await work()
    bank.payout(bankRef).status = 'returned'
    const { body, signature } = bank.notificationFor(bankRef)
    await h.api('POST', '/partners/bank/notifications', undefined, body, { 'x-partner-signature': signature })
    await work()

    const reports = JSON.stringify([
      await h.admin('GET', '/admin/rails'),
      await h.admin('GET', '/admin/transactions/stuck'),
      (await h.api('GET', '/metrics', undefined)).raw,
    ])
    expect(logged).toContain('a completed payout came back')
    for (const [what, secret] of Object.entries({
      'API key': API_KEY,
      'signing secret': SIGNING,
      'notification secret': NOTIFY,
      'account number': ACCOUNT_NUMBER,
      name: NAME,
    })) {
      expect(logged.includes(secret), `${what} in the log`).toBe(false)
      expect(reports.includes(secret), `${what} in a report`).toBe(false)
    }
  }, 60_000)
})
