import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAppHarness, type AppHarness } from '../helpers/app-harness.js'
import { startBankStandin, type BankStandin } from '../standins/bank.js'
import { runDueTransactions } from '../../src/transactions/worker.js'

/**
 * The beneficiary name inquiry and the payout name check write neither the account number nor
 * either name to a trace-level log: not the request line of GET /api/v2/fiat/account-name (its
 * query holds the account number), not a failure of the bank, not the worker's warnings.
 */
const API_KEY = 'names-log-api-key-0123456789'
const ACCOUNT_NUMBER = '0071000999444777'
const MISSING = '0071000999444404'
const BANK_NAME = 'HOANG THI NHUNG'
const EXPECTED = 'Hoàng Văn Nhung'

describe('account names in logs', () => {
  let h: AppHarness
  let bank: BankStandin
  let logged = ''
  beforeAll(async () => {
    bank = await startBankStandin({ apiKey: API_KEY })
    bank.accounts.setAccount('970415', ACCOUNT_NUMBER, BANK_NAME)
    h = await createAppHarness({
      logLevel: 'trace',
      logDestination: new Writable({
        write(chunk, _encoding, done) {
          logged += String(chunk)
          done()
        },
      }),
      env: { VND: 'bank-http', BANK_PAYOUT_URL: bank.url, BANK_PAYOUT_API_KEY: API_KEY },
    })
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  it('writes none of them, through an inquiry, a bank failure and a refused payout', async () => {
    const a = await h.createAccount({ name: 'Names log payer' })
    await h.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy: 'VND', amount: '1000000' })
    const ask = (acct: string) =>
      h.api('GET', `/api/v2/fiat/account-name?institutionCode=970415&bankAcctNum=${acct}`, a.token)
    expect((await ask(ACCOUNT_NUMBER)).body.data.name).toBe(BANK_NAME)
    expect((await ask(MISSING)).status).toBe(404)
    bank.failNext({ status: 502 })
    expect((await ask(ACCOUNT_NUMBER)).status).toBe(503)

    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: 200_000,
        reqDetails: { bankAcctNum: ACCOUNT_NUMBER, institutionCode: '970415', expectedName: EXPECTED },
        kyc: { type: 'individual', details: { legalFullName: EXPECTED, countryCode: 'VN' } },
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
    bank.failNext({ status: 503 })
    await work()
    await work()
    const t = (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
    expect([t.txnState, t.msg]).toEqual(['rejected', 'beneficiary_name_mismatch'])

    expect(logged).toContain('payout submission will be retried')
    expect(logged).toContain('/api/v2/transaction')
    for (const [what, secret] of Object.entries({
      'account number': ACCOUNT_NUMBER,
      'missing account number': MISSING,
      "bank's name": BANK_NAME,
      'expected name': EXPECTED,
    }))
      expect(logged.includes(secret), `${what} in the log`).toBe(false)
  }, 60_000)
})
