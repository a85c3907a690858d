import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { tronAddressFromPrivateKey } from './tron/address.js'
import { systemAccountId } from '../ledger/ledger.js'
import { runDueTransactions } from '../transactions/worker.js'

// TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t is the USDT token contract on TRON mainnet: a well-known valid address.
const GOOD_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const FAILING_ADDRESS = tronAddressFromPrivateKey(new Uint8Array(32).fill(7))

const KYC = { type: 'individual', details: { legalFullName: 'Nguyễn Thị Minh Khai', countryCode: 'VN' } }
const SOURCE_OF_FUNDS = { purpose: 1, source: 1, relationship: 2 }

const tron = (address: unknown, amt: unknown = 100, extra: Record<string, unknown> = {}) => ({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: {
    ccy: 'USDT',
    method: 'tron',
    amtRequested: amt,
    reqDetails: address === undefined ? {} : { address },
  },
  ...extra,
})

const vnd = (opts: {
  src?: string
  srcAmt?: unknown
  destAmt?: unknown
  bankAcctNum?: unknown
  institutionCode?: unknown
  kyc?: unknown
  sourceOfFunds?: unknown
}) => {
  const reqDetails: Record<string, unknown> = {}
  if (opts.bankAcctNum !== null) reqDetails.bankAcctNum = opts.bankAcctNum ?? '0123456789'
  if (opts.institutionCode !== null) reqDetails.institutionCode = opts.institutionCode ?? '970436'
  return {
    sourceReq: {
      ccy: opts.src ?? 'VND',
      method: 'svcpay',
      ...(opts.srcAmt !== undefined ? { amtRequested: opts.srcAmt } : {}),
      reqDetails: {},
    },
    destReq: {
      ccy: 'VND',
      method: 'vnd-instant',
      ...(opts.srcAmt === undefined ? { amtRequested: opts.destAmt ?? 500_000 } : {}),
      reqDetails,
      ...(opts.kyc === null ? {} : { kyc: opts.kyc ?? KYC }),
    },
    ...(opts.sourceOfFunds === null ? {} : { sourceOfFunds: opts.sourceOfFunds ?? SOURCE_OF_FUNDS }),
  }
}

describe('payouts: TRON USDT and VND bank', () => {
  let h: Harness
  let a: TestAccount
  let other: TestAccount
  beforeAll(async () => {
    h = await createHarness({
      SANDBOX_PAYOUT_DELAY_MS: '0',
      SANDBOX_TRON_FAIL: FAILING_ADDRESS,
      QUOTE_TTL_S: '60',
    })
    a = await h.createAccount({ name: 'Payer' })
    other = await h.createAccount({ name: 'Someone else' })
    await h.fund(a.accountId, 'USDT', '1000')
    await h.fund(a.accountId, 'VND', '10000000')
    await h.fund(a.accountId, 'BTC', '0.01')
  }, 120_000)
  afterAll(async () => h?.close())

  const wallet = async (ccy: string) =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === ccy,
    )
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const work = () => runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  const systemBalance = async (id: string) => {
    const { rows } = await h.c.db.query<{ total: bigint | null }>(
      'SELECT SUM(amount)::int8 AS total FROM postings WHERE ledger_account_id = $1',
      [id],
    )
    return rows[0]?.total ?? 0n
  }
  const states = async (txnId: string) =>
    (
      await h.c.db.query<{ txn_state: string }>(
        'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
        [txnId],
      )
    ).rows.map((r) => r.txn_state)

  /** Create and confirm a payout; returns the confirmed transaction. */
  async function payout(body: unknown) {
    const q = await h.api('POST', '/api/v2/transaction', a.token, body)
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.status).toBe(200)
    expect(c.body.txnState).toBe('srccreated')
    return c.body
  }

  /** Let the worker hand the payout over, then settle it. */
  async function settle(txnId: string) {
    await work()
    const sent = await get(txnId)
    expect(sent.txnState).toBe('destsent')
    await work()
    return get(txnId)
  }

  it('pays out USDT over TRON: held at confirm, txHash at destsent, posted at completed', async () => {
    const before = await wallet('USDT')
    const q = await h.api('POST', '/api/v2/transaction', a.token, tron(GOOD_ADDRESS, 100))
    expect(q.status).toBe(200)
    expect(q.body.txnState).toBe('quoted')
    expect(q.body.fxRate).toBe(1)
    expect(q.body.sourceReq.amtRequested).toBe(100)
    expect(q.body.destReq.amtRequested).toBe(100)
    // 20 bps of 100 USDT, and the fixed 1 USDT network fee (TRON_NETWORK_FEE_USDT).
    expect(q.body.sourceReq.svcpayFees).toBe(0.2)
    expect(q.body.sourceReq.networkFees).toBe(1)
    expect(q.body.destReq.reqDetails).toEqual({ address: GOOD_ADDRESS })

    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    const held = await wallet('USDT')
    expect(held.amount).toBe(before.amount)
    expect(held.availableBalance).toBe(before.availableBalance - 101.2)

    await work()
    const sent = await get(q.body.txnId)
    expect(sent.txnState).toBe('destsent')
    expect(sent.destReq.reqDetails.txHash).toMatch(/^[0-9a-f]{64}$/)
    expect([sent.sourceReq.reqStatus, sent.destReq.reqStatus]).toEqual(['2', '1'])
    // Nothing is posted until the network reports the transfer done: the funds stay held.
    expect((await wallet('USDT')).amount).toBe(before.amount)

    await work()
    const done = await get(q.body.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.msg).toBe('')
    expect(done.destReq.amtSettled).toBe(100)
    expect(done.destReq.reqDetails.txHash).toBe(sent.destReq.reqDetails.txHash)
    const after = await wallet('USDT')
    expect(after.amount).toBe(before.amount - 101.2)
    expect(after.availableBalance).toBe(after.amount)
    // Exactly the 100 USDT the chain moves leaves by the TRON account; the 1 USDT network fee stays
    // in the hot wallet (the chain is paid in TRX) and goes to revenue with the service fee.
    const fees = await systemBalance(systemAccountId('fees', 'USDT'))
    expect(await systemBalance(systemAccountId('tron', 'USDT'))).toBe(100_000_000n)
    expect(fees).toBeGreaterThanOrEqual(1_200_000n)
    expect(await states(q.body.txnId)).toEqual(['quoted', 'srccreated', 'destsent', 'completed'])
    await h.expectBooksBalanced()
  })

  it('takes the fees out of a TRON payout with deductNetworkFeesFromDest', async () => {
    const before = await wallet('USDT')
    const c = await payout(tron(GOOD_ADDRESS, 50, { deductNetworkFeesFromDest: true }))
    expect(c.sourceReq.amtRequested).toBe(50)
    expect(c.destReq.amtRequested).toBe(48.9)
    const done = await settle(c.txnId)
    expect(done.txnState).toBe('completed')
    expect((await wallet('USDT')).amount).toBe(before.amount - 50)
    await h.expectBooksBalanced()
  })

  it('fails a TRON transfer to a SANDBOX_TRON_FAIL address and voids the hold', async () => {
    const before = await wallet('USDT')
    const c = await payout(tron(FAILING_ADDRESS, 10))
    expect((await wallet('USDT')).availableBalance).toBe(before.availableBalance - 11.02)
    const done = await settle(c.txnId)
    expect(done.txnState).toBe('failed')
    expect(done.msg).toBe('transfer_reverted')
    expect(done.destReq.amtSettled).toBeNull()
    expect(done.destReq.reqDetails.txHash).toMatch(/^[0-9a-f]{64}$/)
    const after = await wallet('USDT')
    expect([after.amount, after.availableBalance]).toEqual([before.amount, before.availableBalance])
    expect(await states(c.txnId)).toEqual(['quoted', 'srccreated', 'destsent', 'failed'])
    await h.expectBooksBalanced()
  })

  it('refuses bad TRON addresses with invalid_address naming the field', async () => {
    const badChecksum = GOOD_ADDRESS.slice(0, -1) + (GOOD_ADDRESS.endsWith('t') ? 'u' : 't')
    for (const address of [
      badChecksum,
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      'T123',
      42,
      undefined,
    ]) {
      const r = await h.api('POST', '/api/v2/transaction', a.token, tron(address))
      expect([r.status, r.body.error], String(address)).toEqual([400, 'invalid_address'])
      expect(r.body.details[0].field).toBe('destReq.reqDetails.address')
      expect(r.body.message).toContain('destReq.reqDetails.address')
    }
    await h.expectBooksBalanced()
  })

  it('fails a payout the wallet cannot cover at confirm, and cancels a quote with its hold released', async () => {
    const before = await wallet('USDT')
    const q = await h.api('POST', '/api/v2/transaction', a.token, tron(GOOD_ADDRESS, 5000))
    expect(q.status).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect([c.status, c.body.txnState, c.body.msg]).toEqual([200, 'failed', 'insufficient_funds'])
    const q2 = await h.api('POST', '/api/v2/transaction', a.token, vnd({ src: 'USDT', srcAmt: '1' }))
    expect((await wallet('USDT')).availableBalance).toBeLessThan(before.availableBalance)
    const cancelled = await h.api('PUT', `/api/v2/transaction/${q2.body.txnId}/cancel`, a.token)
    expect(cancelled.body.txnState).toBe('usercanceled')
    const after = await wallet('USDT')
    expect([after.amount, after.availableBalance]).toEqual([before.amount, before.availableBalance])
    await h.expectBooksBalanced()
  })

  it('pays 500,000 VND from the VND wallet to a listed bank', async () => {
    const before = await wallet('VND')
    const c = await payout(vnd({ destAmt: 500_000 }))
    expect(c.fxRate).toBe(1)
    expect(c.sourceReq.amtRequested).toBe(500_000)
    // 30 bps of 500,000 VND; bank payouts have no network fee.
    expect(c.sourceReq.svcpayFees).toBe(1500)
    expect(c.sourceReq.networkFees).toBe(0)
    expect(c.destReq.reqDetails).toEqual({ bankAcctNum: '0123456789', institutionCode: '970436' })
    expect(c.destReq.kyc).toEqual(KYC)
    expect(c.sourceOfFunds).toEqual(SOURCE_OF_FUNDS)
    const done = await settle(c.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.destReq.reqDetails.bankRef).toMatch(/^SBX[0-9A-F]{16}$/)
    expect(done.destReq.amtSettled).toBe(500_000)
    expect((await wallet('VND')).amount).toBe(before.amount - 501_500)
    expect(await states(c.txnId)).toEqual(['quoted', 'srccreated', 'destsent', 'completed'])
    await h.expectBooksBalanced()
  })

  it('pays 500,000 VND from the BTC wallet at the all-in rate', async () => {
    const before = await wallet('BTC')
    const bankBefore = await systemBalance(systemAccountId('bank', 'VND'))
    const c = await payout(vnd({ src: 'BTC', destAmt: 500_000 }))
    // 2,470,000,000 VND/BTC less the 0.5% spread; 500,000 VND needs 20,344.6 sats, rounded up.
    expect(c.fxRate).toBe(2457650000)
    expect(c.sourceReq.amtRequested).toBe(0.00020345)
    expect(c.sourceReq.svcpayFees).toBe(0.00000062)
    expect(c.destReq.amtRequested).toBe(500_000)
    const done = await settle(c.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.destReq.amtSettled).toBe(500_000)
    expect((await wallet('BTC')).amount).toBeCloseTo(before.amount - 0.00020407, 8)
    expect((await systemBalance(systemAccountId('bank', 'VND'))) - bankBefore).toBe(500_000n)
    await h.expectBooksBalanced()
  })

  it('pays VND from the USDT wallet, converting a source amount', async () => {
    const before = await wallet('USDT')
    const c = await payout(vnd({ src: 'USDT', srcAmt: '20' }))
    // 2,470,000,000 / 95,010 VND per USDT less 0.5%, to 12 significant digits.
    expect(c.fxRate).toBe(25867.2771287)
    expect(c.destReq.amtRequested).toBe(517_345)
    expect(c.sourceReq.svcpayFees).toBe(0.06)
    const done = await settle(c.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.destReq.amtSettled).toBe(517_345)
    expect((await wallet('USDT')).amount).toBeCloseTo(before.amount - 20.06, 6)
    await h.expectBooksBalanced()
  })

  it('releases the funds when the bank rejects (account ending 0000) or the transfer fails (1111)', async () => {
    const before = await wallet('VND')
    const rejected = await payout(vnd({ bankAcctNum: '1234560000' }))
    const failed = await payout(vnd({ bankAcctNum: '1234561111' }))
    expect((await wallet('VND')).availableBalance).toBe(before.availableBalance - 2 * 501_500)
    await work()
    await work()
    const r = await get(rejected.txnId)
    const f = await get(failed.txnId)
    expect([r.txnState, r.msg]).toEqual(['rejected', 'rejected_by_bank'])
    expect([f.txnState, f.msg]).toEqual(['failed', 'beneficiary_account_closed'])
    expect([r.sourceReq.reqStatus, f.destReq.reqStatus]).toEqual(['3', '3'])
    expect(r.destReq.reqDetails.bankRef).toMatch(/^SBX/)
    const after = await wallet('VND')
    expect([after.amount, after.availableBalance]).toEqual([before.amount, before.availableBalance])
    expect(await states(rejected.txnId)).toEqual(['quoted', 'srccreated', 'destsent', 'rejected'])
    await h.expectBooksBalanced()
  })

  it('answers incomplete or wrong VND payouts with clear 400s naming the field', async () => {
    const cases: Array<[unknown, string, string]> = [
      [vnd({ institutionCode: '999999' }), 'invalid_institution', 'destReq.reqDetails.institutionCode'],
      [vnd({ institutionCode: null }), 'invalid_request', 'destReq.reqDetails.institutionCode'],
      [vnd({ bankAcctNum: '12-34 56' }), 'invalid_request', 'destReq.reqDetails.bankAcctNum'],
      [vnd({ bankAcctNum: null }), 'invalid_request', 'destReq.reqDetails.bankAcctNum'],
      [vnd({ kyc: null }), 'kyc_required', 'destReq.kyc'],
      [
        vnd({ kyc: { type: 'individual', details: { countryCode: 'VN' } } }),
        'kyc_required',
        'destReq.kyc.details.legalFullName',
      ],
      [
        vnd({ kyc: { type: 'individual', details: { legalFullName: '  ', countryCode: 'VN' } } }),
        'kyc_required',
        'destReq.kyc.details.legalFullName',
      ],
      [
        vnd({ kyc: { type: 'individual', details: { legalFullName: 'A B' } } }),
        'kyc_required',
        'destReq.kyc.details.countryCode',
      ],
      [
        vnd({ kyc: { type: 'individual', details: { legalFullName: 'A B', countryCode: 'XX' } } }),
        'invalid_request',
        'destReq.kyc.details.countryCode',
      ],
      [
        vnd({ kyc: { type: 'robot', details: { legalFullName: 'A B', countryCode: 'VN' } } }),
        'invalid_request',
        'destReq.kyc.type',
      ],
      [
        vnd({ kyc: { type: 'individual', details: { legalFullName: 'x'.repeat(141), countryCode: 'VN' } } }),
        'invalid_request',
        'destReq.kyc.details.legalFullName',
      ],
      [vnd({ sourceOfFunds: null }), 'kyc_required', 'sourceOfFunds'],
      [vnd({ sourceOfFunds: { purpose: 1, source: 1 } }), 'kyc_required', 'sourceOfFunds.relationship'],
      [
        vnd({ sourceOfFunds: { purpose: 99, source: 1, relationship: 1 } }),
        'invalid_request',
        'sourceOfFunds.purpose',
      ],
      [
        vnd({ sourceOfFunds: { purpose: 1, source: '1', relationship: 1 } }),
        'invalid_request',
        'sourceOfFunds.source',
      ],
      [
        { ...vnd({}), destReq: { ...vnd({}).destReq, ccy: 'USD' } },
        'unsupported_currency_pair',
        'destReq.ccy',
      ],
      [vnd({ src: 'CAD' }), 'unsupported_currency_pair', 'sourceReq.ccy'],
    ]
    for (const [body, code, field] of cases) {
      const r = await h.api('POST', '/api/v2/transaction', a.token, body)
      expect([r.status, r.body.error, r.body.details?.[0]?.field], JSON.stringify(body)).toEqual([
        400,
        code,
        field,
      ])
      expect(r.body.message).toContain(field)
    }
    // The checks never echo the personal data they were given.
    const r = await h.api(
      'POST',
      '/api/v2/transaction',
      a.token,
      vnd({ kyc: { type: 'individual', details: { legalFullName: 'Trần Văn Bảo', countryCode: 'ZZ' } } }),
    )
    expect(JSON.stringify(r.body)).not.toContain('Trần')
    await h.expectBooksBalanced()
  })

  it('keeps the KYC to the owning account: another account gets 404 and never sees it', async () => {
    const c = await payout(vnd({ destAmt: 100_000 }))
    const mine = await h.api('GET', `/api/v2/transaction/${c.txnId}`, a.token)
    expect(mine.body.destReq.kyc).toEqual(KYC)
    const theirs = await h.api('GET', `/api/v2/transaction/${c.txnId}`, other.token)
    expect([theirs.status, theirs.body.error]).toEqual([404, 'not_found'])
    expect(JSON.stringify(theirs.body)).not.toContain('Nguyễn')
    const list = await h.api('GET', '/api/v2/transaction', other.token)
    expect(list.body.data.map((t: any) => t.txnId)).not.toContain(c.txnId)
    expect((await h.api('PUT', `/api/v2/transaction/${c.txnId}/confirm`, other.token)).status).toBe(404)
    await settle(c.txnId)
    // The KYC lives on the transaction row and nowhere else: not in the events, not in the sandbox bank.
    const { rows } = await h.c.db.query('SELECT * FROM events WHERE txn_id = $1', [c.txnId])
    const { rows: bank } = await h.c.db.query('SELECT * FROM sandbox_payouts')
    const text = JSON.stringify([rows, bank], (_k, v) => (typeof v === 'bigint' ? String(v) : v))
    expect(text).not.toContain('Nguyễn')
    expect(text).not.toContain('0123456789')
    await h.expectBooksBalanced()
  })

  it('lists the Vietnamese banks by NAPAS BIN', async () => {
    const r = await h.api('GET', '/api/v2/fiat/institutions?ccy=VND', a.token)
    expect(r.status).toBe(200)
    expect(r.body.data).toContainEqual(expect.objectContaining({ code: '970436', shortName: 'Vietcombank' }))
    expect(r.body.data.length).toBeGreaterThan(20)
    for (const i of r.body.data) {
      expect(Object.keys(i).sort()).toEqual(['code', 'name', 'shortName'])
      expect(i.code).toMatch(/^\d{6}$/)
    }
    expect((await h.api('GET', '/api/v2/fiat/institutions?ccy=vnd', a.token)).body.data.length).toBe(
      r.body.data.length,
    )
    expect((await h.api('GET', '/api/v2/fiat/institutions?ccy=USD', a.token)).body).toEqual({ data: [] })
    const missing = await h.api('GET', '/api/v2/fiat/institutions', a.token)
    expect([missing.status, missing.body.error, missing.body.details[0].field]).toEqual([
      400,
      'invalid_request',
      'query.ccy',
    ])
    expect((await h.api('GET', '/api/v2/fiat/institutions?ccy=VND', undefined)).status).toBe(401)
  })

  it('serves the source-of-funds code tables', async () => {
    const r = await h.api('GET', '/api/v2/fiat/source-of-funds-codes', a.token)
    expect(r.status).toBe(200)
    for (const table of ['purpose', 'source', 'relationship']) {
      expect(r.body.data[table].length).toBeGreaterThan(3)
      for (const row of r.body.data[table]) {
        expect(Number.isInteger(row.code)).toBe(true)
        expect(typeof row.label).toBe('string')
      }
    }
    expect(r.body.data.purpose).toContainEqual({ code: 1, label: 'Family support' })
    expect((await h.api('GET', '/api/v2/fiat/source-of-funds-codes', undefined)).status).toBe(401)
  })
})
