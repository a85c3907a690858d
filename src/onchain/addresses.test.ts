import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { migrate } from '../db/migrate.js'
import { runDueTransactions } from '../transactions/worker.js'
import { runDueAddresses } from './deposits.js'

// Issue 16, defect 2: BIP173 allows a bech32 address written all in upper case (QR codes use it). It
// names the same script, so it must reach the same wallet; before the fix it was stored as typed and
// its deposits were never credited.

/** Swap the case of every letter: a mixed-case spelling that no bech32 decoder accepts. */
const mixedCase = (address: string) =>
  [...address].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join('')

describe('addresses: one spelling for every bech32 address', () => {
  let h: Harness
  let alice: TestAccount
  let bob: TestAccount
  beforeAll(async () => {
    h = await createHarness()
    alice = await h.createAccount({ name: 'Alice' })
    bob = await h.createAccount({ name: 'Bob' })
    await h.fund(bob.accountId, 'BTC', '0.1')
  })
  afterAll(async () => h?.close())

  const btc = async (a: TestAccount) =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === 'BTC',
    )
  const work = async () => {
    await runDueAddresses({ ...h.c.bitcoin, log: console })
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  }
  const mine = async () =>
    expect((await h.api('POST', '/sandbox/onchain/mine', bob.token, { blocks: 1 })).status).toBe(200)
  const staticOf = async (a: TestAccount) =>
    (await h.api('GET', '/api/v2/account/onchain-address', a.token)).body.staticOnchainAddress as string
  const sendBody = (address: string, amt: string) => ({
    sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
    destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: amt, reqDetails: { address } },
  })

  it('a send to another account’s static address in upper case is stored in lower case and credited', async () => {
    const address = await staticOf(alice)
    expect(address).toBe(address.toLowerCase())
    const before = (await btc(alice)).amount
    const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(address.toUpperCase(), '0.001'))
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    expect(q.body.destReq.reqDetails.address).toBe(address)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    expect(c.body.txnState).toBe('srccreated')
    await work()
    await mine()
    await work()
    await work()
    expect((await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, bob.token)).body.txnState).toBe(
      'completed',
    )
    expect((await btc(alice)).amount).toBeCloseTo(before + 0.001, 8)
    await h.expectBooksBalanced()
  })

  it('an outside payment to an upper-case spelling of our addresses is credited (static and receive)', async () => {
    const address = await staticOf(alice)
    const before = (await btc(alice)).amount
    const paid = await h.api('POST', '/sandbox/onchain/send', bob.token, {
      address: address.toUpperCase(),
      amount: '0.0003',
    })
    expect(paid.status).toBe(200)
    const q = await h.api('POST', '/api/v2/transaction', alice.token, {
      sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0002', reqDetails: {} },
    })
    const r = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    const receiveAddress = r.body.sourceReq.reqDetails.address as string
    expect(
      (
        await h.api('POST', '/sandbox/onchain/send', bob.token, {
          address: receiveAddress.toUpperCase(),
          amount: '0.0002',
        })
      ).status,
    ).toBe(200)
    await work()
    await mine()
    await work()
    expect((await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, alice.token)).body.txnState).toBe(
      'completed',
    )
    expect((await btc(alice)).amount).toBeCloseTo(before + 0.0005, 8)
    await h.expectBooksBalanced()
  })

  it('a mixed-case bech32 address is refused with a clear error, and nothing is held', async () => {
    const address = await staticOf(alice)
    const available = (await btc(bob)).availableBalance
    const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(mixedCase(address), '0.001'))
    expect(q.status).toBe(400)
    expect(q.body.error).toBe('invalid_address')
    expect(q.body.details[0]).toMatchObject({ field: 'destReq.reqDetails.address' })
    expect(q.body.details[0].issue).toContain('mixed case')
    const paid = await h.api('POST', '/sandbox/onchain/send', bob.token, {
      address: mixedCase(address),
      amount: '0.001',
    })
    expect(paid.status).toBe(400)
    expect(paid.body.error).toBe('invalid_address')
    expect((await btc(bob)).availableBalance).toBe(available)
  })

  it('migration 020 lower-cases upper-case bech32 addresses already stored, and the lost deposit is credited', async () => {
    // The state the defect left behind: a send stored with the upper-case spelling, and the sandbox
    // chain's output indexed under it, where the watcher never looked.
    const address = await staticOf(alice)
    const before = (await btc(alice)).amount
    const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(address, '0.0004'))
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, bob.token)
    await h.c.db.query(
      `UPDATE transactions SET dest_details = jsonb_set(dest_details, '{address}', to_jsonb(upper(dest_details->>'address'))) WHERE id = $1`,
      [q.body.txnId],
    )
    const txid = 'ab'.repeat(32)
    await h.c.db.query(
      `INSERT INTO sandbox_chain_txs (txid, request_id, fee_sats, created_at) VALUES ($1, NULL, 0, $2)`,
      [txid, Date.now()],
    )
    await h.c.db.query(
      `INSERT INTO sandbox_chain_outputs (txid, vout, address, amount_sats) VALUES ($1, 0, $2, 40000)`,
      [txid, address.toUpperCase()],
    )
    await mine()
    await work()
    expect((await btc(alice)).amount).toBe(before)
    const base58 = '2N3oefVeg6stiTb5Kh3ozCSkaqmx91FZHkf' // Base58 is case-sensitive: never touched.
    await h.c.db.query(
      `UPDATE transactions SET src_details = jsonb_set(src_details, '{address}', to_jsonb($2::text)) WHERE id = $1`,
      [q.body.txnId, base58],
    )

    await h.c.db.query(`DELETE FROM schema_migrations WHERE name = '020_bech32_lower_case.sql'`)
    expect(await migrate(h.c.db)).toEqual(['020_bech32_lower_case.sql'])
    const txn = (await h.c.db.query<any>('SELECT * FROM transactions WHERE id = $1', [q.body.txnId])).rows[0]
    expect(txn.dest_details.address).toBe(address)
    expect(txn.src_details.address).toBe(base58)
    const outputs = await h.c.db.query<{ address: string }>(
      'SELECT address FROM sandbox_chain_outputs WHERE txid = $1',
      [txid],
    )
    expect(outputs.rows[0]!.address).toBe(address)
    await work()
    await mine()
    await work()
    expect((await btc(alice)).amount).toBeCloseTo(before + 0.0004, 8)
    await h.expectBooksBalanced()
  })

  it('Lightning: our invoice written in upper case is paid and settled; mixed case is refused', async () => {
    const q = await h.api('POST', '/api/v2/transaction', alice.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.00003', reqDetails: {} },
    })
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    const invoice = c.body.sourceReq.reqDetails.paymentRequest as string
    const mixed = await h.api('POST', '/api/v2/transaction', bob.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest: mixedCase(invoice) } },
    })
    expect(mixed.status).toBe(400)
    expect(mixed.body.error).toBe('invalid_payment_request')
    expect(mixed.body.details[0].issue).toContain('mixed case')
    const before = (await btc(alice)).amount
    const paid = await h.api('POST', '/sandbox/lightning/pay', bob.token, {
      paymentRequest: invoice.toUpperCase(),
    })
    expect(paid.status, JSON.stringify(paid.body)).toBe(200)
    expect((await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, alice.token)).body.txnState).toBe(
      'completed',
    )
    expect((await btc(alice)).amount).toBeCloseTo(before + 0.00003, 8)
    await h.expectBooksBalanced()
  })
})
