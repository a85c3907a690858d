import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import bolt11 from 'bolt11'
import { createHarness, type Harness, type TestAccount } from '../../../test/helpers/harness.js'
import { decodeLnurl } from './lnurl-encoding.js'
import { parseRate } from '../../shared/amount.js'
import { invoiceFor, payRequestFor } from './lnurl.js'
import { runDueTransactions } from '../../transactions/worker.js'

/** The `bolt11` package's description of regtest (it knows the prefix but wants it spelled out). */
const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] }
const BASE = 'https://pay.example.com'
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/**
 * Lightning Address receive (issue 21) through HTTP on the sandbox node: the answers checked field
 * by field against LUD-06 (payRequest, callback), LUD-12 (comment) and LUD-16 (address), and the
 * invoice read by the independent `bolt11` decoder.
 */
describe('Lightning Address: LNURL-pay answers (LUD-06, LUD-12, LUD-16)', () => {
  let h: Harness
  let alice: TestAccount
  let bob: TestAccount
  beforeAll(async () => {
    h = await createHarness({ PUBLIC_BASE_URL: BASE, RATE_LIMIT_LN_ADDRESS_MAX_SATS: '500000' })
    alice = await h.createAccount({ name: 'Alice Shop' })
    bob = await h.createAccount({ name: 'Bob' })
    const put = await h.api('PUT', `/api/v2/account/${alice.accountId}/lightning-address`, alice.token, {
      username: 'alice',
      creditCcy: 'BTC',
    })
    expect(put.status).toBe(200)
  })
  afterAll(async () => h?.close())

  const get = async (url: string) => {
    const res = await h.app.inject({ method: 'GET', url: url.replace(BASE, '') })
    return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers }
  }
  const receivesOf = async (a: TestAccount) =>
    (await h.c.db.query('SELECT id FROM transactions WHERE account_id = $1', [a.accountId])).rows.length
  const callback = (query: string) => get(`/lnurlp/alice/callback?${query}`)

  it('answers the well-known URL with a payRequest, field by field', async () => {
    const res = await get('/.well-known/lnurlp/alice')
    expect(res.status).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe('*')
    const p = res.body
    expect(Object.keys(p).sort()).toEqual(
      ['callback', 'commentAllowed', 'maxSendable', 'metadata', 'minSendable', 'tag'].sort(),
    )
    expect(p.tag).toBe('payRequest')
    expect(p.callback).toBe(`${BASE}/lnurlp/alice/callback`)
    // Millisatoshis, as JSON integers: 1 sat up to the configured 500,000 sats.
    expect(p.minSendable).toBe(1000)
    expect(p.maxSendable).toBe(500_000_000)
    expect(p.commentAllowed).toBe(140)
    // LUD-06: metadata is a JSON *string* of [mime, content] pairs with exactly one text/plain;
    // LUD-16: it holds text/identifier username@domain.
    expect(typeof p.metadata).toBe('string')
    const pairs = JSON.parse(p.metadata) as [string, string][]
    expect(pairs.filter(([m]) => m === 'text/plain')).toHaveLength(1)
    expect(pairs).toContainEqual(['text/identifier', 'alice@pay.example.com'])
    for (const pair of pairs) expect(pair).toHaveLength(2)
  })

  it('issues an invoice whose description hash is the SHA-256 of the metadata, for the amount asked', async () => {
    const { body: p } = await get('/.well-known/lnurlp/alice')
    const res = await callback('amount=150000')
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['pr', 'routes'])
    expect(res.body.routes).toEqual([])
    const decoded = bolt11.decode(res.body.pr, REGTEST)
    expect(decoded.millisatoshis).toBe('150000')
    const tag = (name: string) => decoded.tags.find((t) => t.tagName === name)?.data
    expect(tag('purpose_commit_hash')).toBe(sha256(p.metadata))
    expect(tag('description')).toBeUndefined()
  })

  it('refuses in the LNURL error shape: out of bounds, not whole sats, a long comment, unknown names', async () => {
    const before = await receivesOf(alice)
    const refusals = [
      await callback('amount=500001000'),
      await callback('amount=999'),
      await callback('amount=1500'),
      await callback('amount=0'),
      await callback('amount=abc'),
      await callback(''),
      await callback(`amount=2000&comment=${'x'.repeat(141)}`),
      await get('/.well-known/lnurlp/nobody'),
      await get('/lnurlp/nobody/callback?amount=2000'),
      await get('/.well-known/lnurlp/Alice'),
    ]
    for (const r of refusals) {
      expect(r.status).toBe(200)
      expect(Object.keys(r.body).sort()).toEqual(['reason', 'status'])
      expect(r.body.status).toBe('ERROR')
      expect(r.body.reason).toMatch(/\w/)
    }
    expect(refusals[0]!.body.reason).toMatch(/from 1000 to 500000000 millisatoshis/)
    expect(refusals[2]!.body.reason).toMatch(/whole number of satoshis/)
    expect(refusals[6]!.body.reason).toMatch(/at most 140/)
    expect(refusals[7]!.body.reason).toMatch(/nobody@pay.example.com/)
    // No refusal created a transaction.
    expect(await receivesOf(alice)).toBe(before)
  })

  it('counts a comment in characters (LUD-12) and refuses bidi controls, creating nothing (issue 28.12)', async () => {
    const before = await receivesOf(alice)
    const emoji = '🍜'.repeat(140)
    const ok = await callback(`amount=2000&comment=${encodeURIComponent(emoji)}`)
    expect(ok.body.status).toBeUndefined()
    expect(typeof ok.body.pr).toBe('string')
    expect(await receivesOf(alice)).toBe(before + 1)
    const long = await callback(`amount=2000&comment=${encodeURIComponent(`${emoji}🍜`)}`)
    expect(long.body).toEqual({ status: 'ERROR', reason: expect.stringMatching(/at most 140/) })
    for (const bad of ['invoice\u202Etxt.exe', 'a\u2067b', 'a\u0085b']) {
      const r = await callback(`amount=2000&comment=${encodeURIComponent(bad)}`)
      expect(r.body, JSON.stringify(bad)).toEqual({
        status: 'ERROR',
        reason: expect.stringMatching(/comment/),
      })
    }
    // The same rule on a Lightning receive made through the API.
    const api = await h.api('POST', '/api/v2/transaction', bob.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: { comment: 'pay \u202Eevil' } },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
    })
    expect(api.status).toBe(400)
    expect(api.body.details?.[0]?.field).toBe('sourceReq.reqDetails.comment')
    expect(await receivesOf(alice)).toBe(before + 1)
  })

  it('paying the invoice completes a Lightning receive with the comment, sends the webhook, books balanced', async () => {
    await h.api('POST', '/api/v2/webhook', alice.token, {
      callback: 'http://127.0.0.1:9/hook',
      secret: 'lightning-address-secret-01',
    })
    const res = await callback(`amount=21000000&comment=${encodeURIComponent('thanks for the coffee ☕')}`)
    const pr = res.body.pr as string
    const paid = await h.api('POST', '/sandbox/lightning/pay', bob.token, { paymentRequest: pr })
    expect(paid.status).toBe(200)
    const { rows } = await h.c.db.query<{ id: string }>(
      `SELECT id FROM transactions WHERE account_id = $1 AND kind = 'ln_receive' AND src_details->>'paymentRequest' = $2`,
      [alice.accountId, pr],
    )
    expect(rows).toHaveLength(1)
    const txn = (await h.api('GET', `/api/v2/transaction/${rows[0]!.id}`, alice.token)).body
    expect(txn.txnState).toBe('completed')
    expect(txn.sourceReq.method).toBe('lightning')
    expect(txn.sourceReq.reqDetails.comment).toBe('thanks for the coffee ☕')
    expect(txn.destReq.ccy).toBe('BTC')
    expect(txn.destReq.amtSettled ?? txn.destReq.amtRequested).toBe(0.00021)
    const wallet = (
      await h.api('GET', `/api/v2/account/${alice.accountId}/wallet/`, alice.token)
    ).body.data.find((w: any) => w.ccy === 'BTC')
    expect(wallet.amount).toBe(0.00021)
    const queued = await h.c.db.query(
      `SELECT 1 FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.txn_id = $1 AND e.txn_state = 'completed'`,
      [rows[0]!.id],
    )
    expect(queued.rows).toHaveLength(1)
    await h.expectBooksBalanced()
  })

  it('with creditCcy VND, the payment lands as dong at the rate quoted at the callback', async () => {
    const carol = await h.createAccount({ name: 'Carol' })
    const claimed = await h.api('PUT', `/api/v2/account/${carol.accountId}/lightning-address`, carol.token, {
      username: 'carol',
      creditCcy: 'VND',
    })
    expect(claimed.status).toBe(200)
    const res = await get('/lnurlp/carol/callback?amount=200000000')
    expect(res.body.status).toBeUndefined()
    expect(bolt11.decode(res.body.pr, REGTEST).millisatoshis).toBe('200000000')
    // The rate of the moment: what a swap from BTC to VND is quoted at, right after the callback.
    const swap = await h.api('POST', '/api/v2/transaction', carol.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001', reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
    })
    const paid = await h.api('POST', '/sandbox/lightning/pay', bob.token, { paymentRequest: res.body.pr })
    expect(paid.status).toBe(200)
    const { rows } = await h.c.db.query<{ id: string }>(
      `SELECT id FROM transactions WHERE account_id = $1 AND kind = 'ln_receive'`,
      [carol.accountId],
    )
    const txn = (await h.api('GET', `/api/v2/transaction/${rows[0]!.id}`, carol.token)).body
    expect(txn.txnState).toBe('completed')
    expect(txn.destReq.ccy).toBe('VND')
    expect(String(txn.fxRate)).toBe(String(swap.body.fxRate))
    // What the wallet gets: the sats paid less the receive fee, at that rate, rounded down.
    const sats = 200_000n
    const feeSats = BigInt(Math.round(Number(txn.sourceReq.svcpayFees) * 1e8))
    const rate = parseRate(String(txn.fxRate))
    const dong = ((sats - feeSats) * rate.num) / (10n ** BigInt(rate.scale) * 100_000_000n)
    expect(dong).toBeGreaterThan(0n)
    expect(BigInt(txn.destReq.amtSettled)).toBe(dong)
    const vnd = (
      await h.api('GET', `/api/v2/account/${carol.accountId}/wallet/`, carol.token)
    ).body.data.find((w: any) => w.ccy === 'VND')
    expect(BigInt(vnd.amount)).toBe(dong)
    await h.expectBooksBalanced()
  })

  it('a payment to the address into a dong wallet, overpaid on the node, completes with msg overpaid', async () => {
    const dave = await h.createAccount({ name: 'Dave' })
    const claimed = await h.api('PUT', `/api/v2/account/${dave.accountId}/lightning-address`, dave.token, {
      username: 'dave',
      creditCcy: 'VND',
    })
    expect(claimed.status).toBe(200)
    const res = await get('/lnurlp/dave/callback?amount=100000000')
    expect(res.body.status).toBeUndefined()
    const { rows } = await h.c.db.query<{ id: string; rail_ref: string }>(
      `SELECT id, rail_ref FROM transactions WHERE account_id = $1 AND kind = 'ln_receive'`,
      [dave.accountId],
    )
    const { id, rail_ref: hash } = rows[0]!
    // LND settles an invoice paid more than its amount: its invoice registry refuses a payment only
    // when `ctx.amtPaid < inv.Terms.Value` (lnd invoices/update.go). The sandbox node pays exactly,
    // so its record of the invoice is made to say what LND's would: 100,000 sats asked, 150,000 paid.
    await h.c.db.query(
      `UPDATE sandbox_ln_invoices SET state = 'settled', amount_paid_msat = 150000000 WHERE payment_hash = $1`,
      [hash],
    )
    await h.c.db.query('UPDATE transactions SET next_check_at = 0 WHERE id = $1', [id])
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    const txn = (await h.api('GET', `/api/v2/transaction/${id}`, dave.token)).body
    expect([txn.txnState, txn.msg, txn.sourceReq.amtRequested, txn.sourceReq.amtSettled]).toEqual([
      'completed',
      'overpaid',
      0.001,
      0.0015,
    ])
    const events = await h.c.db.query<{ txn_state: string; msg: string }>(
      'SELECT txn_state, msg FROM events WHERE txn_id = $1 ORDER BY id DESC LIMIT 1',
      [id],
    )
    expect(events.rows[0]).toEqual({ txn_state: 'completed', msg: 'overpaid' })
    await h.expectBooksBalanced()
  })

  it('serves the send side directly: payRequestFor and invoiceFor, with the same answers as HTTP', async () => {
    const deps = h.c.lightningAddresses
    expect(await payRequestFor(deps, 'alice')).toEqual((await get('/.well-known/lnurlp/alice')).body)
    expect(await invoiceFor(deps, 'nobody', 1000n)).toEqual({ status: 'ERROR', reason: expect.any(String) })
    const issued = await invoiceFor(deps, 'alice', 5000n)
    expect('pr' in issued && bolt11.decode(issued.pr, REGTEST).millisatoshis).toBe('5000')
  })

  it('a Lightning receive through the API takes a description hash and a comment only in their shapes', async () => {
    const body = (reqDetails: Record<string, unknown>) => ({
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
    })
    const bad = await h.api('POST', '/api/v2/transaction', bob.token, body({ descriptionHash: 'zz' }))
    expect(bad.status).toBe(400)
    expect(bad.body.details).toEqual([
      { field: 'sourceReq.reqDetails.descriptionHash', issue: expect.any(String) },
    ])
    const long = await h.api('POST', '/api/v2/transaction', bob.token, body({ comment: 'x'.repeat(1001) }))
    expect(long.body.details?.[0]?.field).toBe('sourceReq.reqDetails.comment')
    const control = await h.api('POST', '/api/v2/transaction', bob.token, body({ comment: 'line\nbreak' }))
    expect(control.body.details?.[0]?.field).toBe('sourceReq.reqDetails.comment')
    const ok = await h.api(
      'POST',
      '/api/v2/transaction',
      bob.token,
      body({ descriptionHash: 'AB'.repeat(32) }),
    )
    expect(ok.status).toBe(200)
    expect(ok.body.sourceReq.reqDetails.descriptionHash).toBe('ab'.repeat(32))
  })

  it('the LNURL of the address decodes to its well-known URL (LUD-01)', async () => {
    const { body } = await h.api('GET', `/api/v2/account/${alice.accountId}/lightning-address`, alice.token)
    expect(body.data.lnurl).toMatch(/^LNURL1[0-9A-Z]+$/)
    expect(decodeLnurl(body.data.lnurl)).toBe(`${BASE}/.well-known/lnurlp/alice`)
    expect(body.data.address).toBe('alice@pay.example.com')
  })
})
