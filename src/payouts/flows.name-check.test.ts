import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startBankStandin, type BankStandin } from '../../test/standins/bank.js'
import { runDueTransactions } from '../transactions/worker.js'

/**
 * The beneficiary name check (docs/payouts.md, "Beneficiary name check") through our HTTP API, the
 * worker and the VND rail: once on the sandbox bank, once on the bank adapter against the partner
 * stand-in (test/standins/bank.ts, which checks our signatures). The same accounts hold the same
 * holders on both: the stand-in is given the names the sandbox derives for them.
 */
const BIN = '970436'
/** Account -> the holder the bank names (the sandbox's own names for these numbers). */
const HOLDERS: Record<string, string> = {
  '0011223342': 'VO THANH BINH',
  '0011223343': 'DO HUU AN',
  '0011223347': 'BUI T** HAI',
  '0011223345': 'BUI QUANG KHANH',
}
const NOT_FOUND = '0011223404'
const KYC = { type: 'individual', details: { legalFullName: 'Võ Thành Bình', countryCode: 'VN' } }
const API_KEY = 'partner-key-names'
const SIGNING = 'names-signing-secret-0123456789'

interface Setup {
  name: string
  start(): Promise<{ env: Record<string, string>; bank?: BankStandin }>
}

const SETUPS: Setup[] = [
  { name: 'the sandbox bank', start: async () => ({ env: { SANDBOX_PAYOUT_DELAY_MS: '0' } }) },
  {
    name: 'the bank adapter and the partner stand-in',
    async start() {
      const bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING })
      for (const [acct, holder] of Object.entries(HOLDERS)) bank.accounts.setAccount(BIN, acct, holder)
      const env = {
        VND: 'bank-http',
        BANK_PAYOUT_URL: bank.url,
        BANK_PAYOUT_API_KEY: API_KEY,
        BANK_PAYOUT_SIGNING_SECRET: SIGNING,
      }
      return { env, bank }
    },
  },
]

describe.each(SETUPS)('beneficiary name check on $name', (setup) => {
  let h: Harness
  let a: TestAccount
  let bank: BankStandin | undefined
  // The worker runs ahead of the clock (a real partner is asked again after 30 s); after a
  // failed attempt it is moved further on, past the rail's backoff.
  let aheadMs = 60_000
  beforeAll(async () => {
    const started = await setup.start()
    bank = started.bank
    h = await createHarness(started.env)
    a = await h.createAccount({ name: 'Name check payer' })
    await h.fund(a.accountId, 'VND', '10000000')
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  const work = () =>
    runDueTransactions({
      db: h.c.db,
      transactions: h.c.transactions,
      log: console,
      now: () => Date.now() + aheadMs,
      railOps: h.c.config.railOps,
    })
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const wallet = async () =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === 'VND',
    )
  const accountName = (query: string, opts: { anonymous?: boolean } = {}) =>
    h.api('GET', `/api/v2/fiat/account-name?${query}`, opts.anonymous ? undefined : a.token)

  async function payout(bankAcctNum: string, expectedName?: unknown) {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: 300_000,
        reqDetails: {
          bankAcctNum,
          institutionCode: BIN,
          ...(expectedName === undefined ? {} : { expectedName }),
        },
        kyc: KYC,
      },
      sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    return q.body.txnId as string
  }

  /** Let the worker send the payout, have the bank complete it, and let the worker see that. */
  async function completeIt(txnId: string) {
    await work()
    const sent = await get(txnId)
    // The sandbox settles at once (SANDBOX_PAYOUT_DELAY_MS 0), and the worker may see it already.
    expect(['destsent', 'completed'], sent.msg).toContain(sent.txnState)
    if (bank) bank.payout(sent.destReq.reqDetails.bankRef).status = 'completed'
    await work()
    return get(txnId)
  }

  it('answers the holder’s name, masked as the bank masks it', async () => {
    const plain = await accountName(`institutionCode=${BIN}&bankAcctNum=0011223342`)
    expect([plain.status, plain.body]).toEqual([
      200,
      { data: { institutionCode: BIN, bankAcctNum: '0011223342', name: 'VO THANH BINH' } },
    ])
    const masked = await accountName(`institutionCode=${BIN}&bankAcctNum=0011223347`)
    expect(masked.body.data.name).toBe('BUI T** HAI')
  })

  it('answers 404 for an account the bank does not have, 400 for a bad query, 401 without a token', async () => {
    const missing = await accountName(`institutionCode=${BIN}&bankAcctNum=${NOT_FOUND}`)
    expect([missing.status, missing.body.error]).toEqual([404, 'not_found'])
    const unknown = await accountName('institutionCode=999999&bankAcctNum=0011223342')
    expect([unknown.status, unknown.body.error, unknown.body.details[0].field]).toEqual([
      400,
      'invalid_institution',
      'query.institutionCode',
    ])
    const malformed = await accountName(`institutionCode=${BIN}&bankAcctNum=12-34`)
    expect([malformed.status, malformed.body.error, malformed.body.details[0].field]).toEqual([
      400,
      'invalid_request',
      'query.bankAcctNum',
    ])
    const absent = await accountName(`institutionCode=${BIN}`)
    expect([absent.status, absent.body.details[0].field]).toEqual([400, 'query.bankAcctNum'])
    expect(JSON.stringify(malformed.body)).not.toContain('12-34')
    const anonymous = await accountName(`institutionCode=${BIN}&bankAcctNum=0011223342`, { anonymous: true })
    expect([anonymous.status, anonymous.body.error]).toEqual([401, 'unauthorized'])
  })

  it('completes a payout whose expected name matches, whatever the accents, case and spacing', async () => {
    const before = await wallet()
    const plain = await payout('0011223342', '  võ thành   BÌNH ')
    const withD = await payout('0011223343', 'Đỗ Hữu An')
    const masked = await payout('0011223347', 'Bùi Thị Hải')
    for (const txnId of [plain, withD, masked]) {
      const done = await completeIt(txnId)
      expect([done.txnState, done.msg]).toEqual(['completed', ''])
      expect(done.destReq.reqDetails.nameCheck).toBe('matched')
    }
    // The expected name is kept trimmed, as sent; the bank's name is kept nowhere.
    expect((await get(plain)).destReq.reqDetails.expectedName).toBe('võ thành   BÌNH')
    expect((await wallet()).amount).toBe(before.amount - 3 * 300_900)
    await h.expectBooksBalanced()
  })

  it('rejects a payout whose name does not match, or whose account does not exist, and releases the funds', async () => {
    const before = await wallet()
    const other = await payout('0011223345', 'Nguyễn Văn An')
    const longer = await payout('0011223347', 'Bùi Thanh Hải')
    const missing = await payout(NOT_FOUND, 'Nguyễn Văn An')
    expect((await wallet()).availableBalance).toBe(before.availableBalance - 3 * 300_900)
    await work()
    for (const [txnId, msg] of [
      [other, 'beneficiary_name_mismatch'],
      [longer, 'beneficiary_name_mismatch'],
      [missing, 'beneficiary_account_not_found'],
    ] as const) {
      const t = await get(txnId)
      expect([t.txnState, t.msg, t.destReq.reqStatus]).toEqual(['rejected', msg, '3'])
      expect(t.destReq.reqDetails.bankRef).toBeUndefined()
      // Nothing reached the partner under this payout.
      if (bank) expect(bank.byKey.has(txnId)).toBe(false)
      // The bank's name is neither on the transaction nor in its events (the webhook bodies).
      const { rows } = await h.c.db.query('SELECT * FROM events WHERE txn_id = $1', [txnId])
      const text = JSON.stringify([t, rows], (_k, v) => (typeof v === 'bigint' ? String(v) : v))
      expect(text).not.toContain('BUI QUANG KHANH')
      expect(text).not.toContain('BUI T** HAI')
    }
    const after = await wallet()
    expect([after.amount, after.availableBalance]).toEqual([before.amount, before.availableBalance])
    await h.expectBooksBalanced()
  })

  it('refuses a malformed expectedName at create', async () => {
    for (const expectedName of ['  ', 'x'.repeat(141), 7]) {
      const r = await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'VND',
          method: 'vnd-instant',
          amtRequested: 300_000,
          reqDetails: { bankAcctNum: '0011223342', institutionCode: BIN, expectedName },
          kyc: KYC,
        },
        sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
      })
      expect([r.status, r.body.error, r.body.details[0].field]).toEqual([
        400,
        'invalid_request',
        'destReq.reqDetails.expectedName',
      ])
    }
  })

  it.runIf(setup.name.includes('stand-in'))(
    'keeps a payout in flight while the bank cannot answer the inquiry, and sends it once it can',
    async () => {
      const standin = bank!
      const route = await (async () => {
        standin.failNext({ status: 503 })
        return accountName(`institutionCode=${BIN}&bankAcctNum=0011223342`)
      })()
      expect([route.status, route.body.error]).toEqual([503, 'service_unavailable'])

      const txnId = await payout('0011223342', 'Võ Thành Bình')
      standin.failNext({ status: 503 }, { status: 429 })
      await work()
      expect((await get(txnId)).txnState).toBe('srccreated')
      aheadMs += 60 * 60_000
      await work()
      expect((await get(txnId)).txnState).toBe('srccreated')
      // Never sent unchecked: the partner has no payout under it yet.
      expect(standin.byKey.has(txnId)).toBe(false)
      aheadMs += 60 * 60_000
      const done = await completeIt(txnId)
      expect([done.txnState, done.msg]).toEqual(['completed', ''])
      await h.expectBooksBalanced()
    },
  )

  it.runIf(setup.name.includes('stand-in'))(
    'does not ask again once the name matched: a retried submission is sent as checked',
    async () => {
      const standin = bank!
      const txnId = await payout('0011223343', 'Đỗ Hữu An')
      // The partner answers the submission with another payout under our key: a retryable failure
      // after the check passed, as a lost answer would be.
      const squatter = { ...standin.payoutMadeElsewhere(1n), status: 'processing' as const, key: txnId }
      standin.byKey.set(txnId, squatter)
      const asked = standin.accounts.asked.length
      await work()
      const first = await get(txnId)
      expect([first.txnState, first.destReq.reqDetails.nameCheck]).toEqual(['srccreated', 'matched'])
      expect(standin.accounts.asked.length).toBe(asked + 1)
      // The bank would now name someone else; the payout was checked already and is not refused.
      standin.byKey.delete(txnId)
      standin.accounts.setAccount(BIN, '0011223343', 'LE VAN BINH')
      aheadMs += 60 * 60_000
      const done = await completeIt(txnId)
      expect([done.txnState, done.msg]).toEqual(['completed', ''])
      expect(standin.accounts.asked.length).toBe(asked + 1)
      standin.accounts.setAccount(BIN, '0011223343', HOLDERS['0011223343']!)
      await h.expectBooksBalanced()
    },
  )
})
