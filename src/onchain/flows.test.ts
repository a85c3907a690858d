import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as bip21 from 'bip21'
import { address as btcAddress, networks } from 'bitcoinjs-lib'
import { p2pk, p2pkh, p2sh, p2tr, p2wpkh, p2wsh } from '@scure/btc-signer'
import type { BTC_NETWORK } from '@scure/btc-signer/utils.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { runDueTransactions } from '../transactions/worker.js'
import { runDueAddresses } from './deposits.js'

const REGTEST: BTC_NETWORK = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }
const pub = secp256k1.getPublicKey(new Uint8Array(32).fill(9), true)
/** One valid regtest address of each type the spec accepts, made by an independent library. */
const ADDRESSES = {
  p2wpkh: p2wpkh(pub, REGTEST).address!,
  p2tr: p2tr(pub.subarray(1), undefined, REGTEST).address!,
  p2sh: p2sh(p2wpkh(pub, REGTEST), REGTEST).address!,
  p2pkh: p2pkh(pub, REGTEST).address!,
  p2wsh: p2wsh(p2pk(pub), REGTEST).address!,
}
/** vsize of a 1-input P2WPKH send with change, per destination type (see ./vsize.ts). */
const VSIZE = { p2wpkh: 141, p2tr: 153, p2sh: 142, p2pkh: 144, p2wsh: 153 }
/** The sandbox estimator's rate for our 3-block target, sat/vB. */
const RATE = 12

const receiveBody = (amt: unknown) => ({
  sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})
const sendBody = (address: string, amt: unknown, extra: Record<string, unknown> = {}) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: amt, reqDetails: { address } },
  ...extra,
})

describe('On-chain: receive, deposits and send through the HTTP API on the sandbox chain', () => {
  let h: Harness
  let alice: TestAccount
  let bob: TestAccount
  beforeAll(async () => {
    h = await createHarness()
    alice = await h.createAccount({ name: 'Alice Shop' })
    bob = await h.createAccount({ name: 'Bob' })
    await h.fund(bob.accountId, 'BTC', '0.1')
  })
  afterAll(async () => h?.close())

  const btc = async (a: TestAccount) =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === 'BTC',
    )
  const get = async (a: TestAccount, txnId: string) =>
    (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const events = async (txnId: string) =>
    (
      await h.c.db.query<{ txn_state: string }>(
        'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
        [txnId],
      )
    ).rows.map((r) => r.txn_state)
  /** Let the watcher and the transaction worker do everything that is due now. */
  const work = async () => {
    await runDueAddresses({ ...h.c.bitcoin, log: console })
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  }
  const pay = async (address: string, amount: unknown) => {
    const r = await h.api('POST', '/sandbox/onchain/send', bob.token, { address, amount })
    expect(r.status).toBe(200)
    expect(r.body.txid).toMatch(/^[0-9a-f]{64}$/)
    return r.body.txid as string
  }
  const mine = async (blocks = 1) => {
    const r = await h.api('POST', '/sandbox/onchain/mine', bob.token, { blocks })
    expect(r.status).toBe(200)
    return r.body.height as number
  }
  const receive = async (a: TestAccount, amt: string) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, receiveBody(amt))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srcintent')
    return c.body
  }
  const depositsOf = async (a: TestAccount) =>
    (
      await h.c.db.query<{ id: string }>(
        `SELECT id FROM transactions WHERE account_id = $1 AND kind = 'deposit' ORDER BY created_at`,
        [a.accountId],
      )
    ).rows.map((r) => r.id)

  it('receive: quoted without an address; srcintent with address, BIP21 and page; seen -> srccreated; mined -> completed', async () => {
    const q = await h.api('POST', '/api/v2/transaction', alice.token, receiveBody('0.0005'))
    expect(q.status).toBe(200)
    expect(q.body.txnState).toBe('quoted')
    expect(q.body.sourceReq.reqDetails).toEqual({ address: null, invoicePageUrl: null })
    const before = Date.now()
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.status).toBe(200)
    const t = c.body
    expect(t.txnState).toBe('srcintent')
    expect(t.sourceReq.reqStatus).toBe('0')
    const d = t.sourceReq.reqDetails
    expect(d.address).toMatch(/^bcrt1q[a-z0-9]{38}$/)
    expect(d.amount).toBe(0.0005)
    expect(d.invoicePageUrl).toMatch(/^http:\/\/localhost:8080\/pay\/[A-Za-z0-9_-]{22,}$/)
    const expiredAt = Date.parse(d.expiredAt)
    expect(new Date(expiredAt).toISOString()).toBe(d.expiredAt)
    expect(expiredAt).toBeGreaterThanOrEqual(before + 86_400_000)
    expect(expiredAt).toBeLessThan(Date.now() + 86_400_000 + 1)
    expect(t.sourceReq.expiresAt).toBe(expiredAt)
    // Independent checks of the artefacts: the address is a valid regtest script, the URI parses.
    expect(btcAddress.toOutputScript(d.address, networks.regtest).length).toBe(22)
    const uri = bip21.decode(d.invoice)
    expect(uri.address).toBe(d.address)
    expect(uri.options.amount).toBe(0.0005)
    expect(uri.options.label).toBe('Alice Shop')

    await work()
    expect((await get(alice, t.txnId)).txnState).toBe('srcintent')
    const txid = await pay(d.address, '0.0005')
    await work()
    const seen = await get(alice, t.txnId)
    expect(seen.txnState).toBe('srccreated')
    expect(seen.sourceReq.reqDetails.txid).toBe(txid)
    expect(seen.sourceReq.amtSettled).toBeNull()
    expect((await btc(alice)).amount).toBe(0)

    await mine()
    await work()
    const done = await get(alice, t.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.sourceReq.amtSettled).toBe(0.0005)
    expect(done.destReq.amtSettled).toBe(0.0005)
    expect(done.sourceReq.reqDetails.confirmations).toBe(1)
    expect((await btc(alice)).amount).toBe(0.0005)
    expect(await events(t.txnId)).toEqual(['quoted', 'srcintent', 'srccreated', 'completed'])
    await h.expectBooksBalanced()
  })

  it('receive: waits for ONCHAIN_CONFIRMATIONS; a short payment is credited as it is', async () => {
    const t = await receive(alice, '0.001')
    const before = (await btc(alice)).amount
    await pay(t.sourceReq.reqDetails.address, '0.0004')
    await work()
    expect((await get(alice, t.txnId)).txnState).toBe('srccreated')
    await mine()
    await work()
    const done = await get(alice, t.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.sourceReq.amtRequested).toBe(0.001)
    expect(done.sourceReq.amtSettled).toBe(0.0004)
    expect(done.destReq.amtSettled).toBe(0.0004)
    expect((await btc(alice)).amount).toBeCloseTo(before + 0.0004, 8)
    await h.expectBooksBalanced()
  })

  it('receive: a short or over payment completes with msg underpaid or overpaid, on the API and its event', async () => {
    const msgs = async (txnId: string) =>
      (
        await h.c.db.query<{ txn_state: string; msg: string }>(
          'SELECT txn_state, msg FROM events WHERE txn_id = $1 ORDER BY id',
          [txnId],
        )
      ).rows.map((r) => [r.txn_state, r.msg])
    const short = await receive(alice, '0.001')
    const over = await receive(alice, '0.0002')
    const exact = await receive(alice, '0.0003')
    await pay(short.sourceReq.reqDetails.address, '0.0004')
    await pay(over.sourceReq.reqDetails.address, '0.00025')
    await pay(exact.sourceReq.reqDetails.address, '0.0003')
    await work()
    await mine()
    await work()
    for (const [t, settled, msg] of [
      [short, 0.0004, 'underpaid'],
      [over, 0.00025, 'overpaid'],
      [exact, 0.0003, ''],
    ] as const) {
      const done = await get(alice, t.txnId)
      expect([done.txnState, done.msg, done.sourceReq.amtSettled]).toEqual(['completed', msg, settled])
      expect((await msgs(t.txnId)).at(-1)).toEqual(['completed', msg])
    }
    await h.expectBooksBalanced()
  })

  it('a second payment to a used address becomes a deposit transaction of its own', async () => {
    const t = await receive(alice, '0.0002')
    const address = t.sourceReq.reqDetails.address
    const before = (await btc(alice)).amount
    const known = await depositsOf(alice)
    await pay(address, '0.0002')
    await work()
    await mine()
    await work()
    expect((await get(alice, t.txnId)).txnState).toBe('completed')
    const txid2 = await pay(address, '0.00015')
    await work()
    const fresh = (await depositsOf(alice)).filter((id) => !known.includes(id))
    expect(fresh).toHaveLength(1)
    const dep = await get(alice, fresh[0]!)
    expect(dep.txnState).toBe('srccreated')
    expect(dep.sourceReq).toMatchObject({ method: 'on-chain', amtRequested: 0.00015, amtSettled: null })
    expect(dep.sourceReq.reqDetails).toMatchObject({ address, txid: txid2, forTxnId: t.txnId })
    expect(dep.destReq).toMatchObject({ method: 'svcpay', amtRequested: 0.00015 })
    await mine()
    await work()
    const done = await get(alice, fresh[0]!)
    expect(done.txnState).toBe('completed')
    expect(done.destReq.amtSettled).toBe(0.00015)
    expect((await btc(alice)).amount).toBeCloseTo(before + 0.00035, 8)
    expect(await events(fresh[0]!)).toEqual(['srccreated', 'completed'])
    // The first receive was settled by the first payment only.
    expect((await get(alice, t.txnId)).destReq.amtSettled).toBe(0.0002)
    const listed = await h.api(
      'GET',
      '/api/v2/transaction?srcMethods=on-chain&txnStatuses=completed',
      alice.token,
    )
    expect(listed.body.data.map((x: any) => x.txnId)).toContain(fresh[0])
    await h.expectBooksBalanced()
  })

  it('receive: unpaid at expiry -> expired; a late payment is still credited, through a new transaction', async () => {
    const t = await receive(alice, '0.0003')
    await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = $2 WHERE id = $1', [
      t.txnId,
      Date.now() - 1,
    ])
    await work()
    const expired = await get(alice, t.txnId)
    expect(expired.txnState).toBe('expired')
    expect(expired.msg).toBe('address_expired')
    expect(await events(t.txnId)).toEqual(['quoted', 'srcintent', 'expired'])
    const before = (await btc(alice)).amount
    const known = await depositsOf(alice)
    await pay(t.sourceReq.reqDetails.address, '0.0003')
    await mine()
    await work()
    await work()
    const fresh = (await depositsOf(alice)).filter((id) => !known.includes(id))
    expect(fresh).toHaveLength(1)
    expect((await get(alice, fresh[0]!)).txnState).toBe('completed')
    expect((await get(alice, t.txnId)).txnState).toBe('expired')
    expect((await btc(alice)).amount).toBeCloseTo(before + 0.0003, 8)
    await h.expectBooksBalanced()
  })

  it('receive: a payment seen when the address is due to expire settles it instead of expiring it', async () => {
    const t = await receive(alice, '0.0001')
    await pay(t.sourceReq.reqDetails.address, '0.0001')
    // The worker reaches the expiry before the watcher has swept the address.
    await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = $2 WHERE id = $1', [
      t.txnId,
      Date.now() - 1,
    ])
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    expect((await get(alice, t.txnId)).txnState).toBe('srccreated')
    await mine()
    await work()
    expect((await get(alice, t.txnId)).txnState).toBe('completed')
    await h.expectBooksBalanced()
  })

  it('static address: one permanent address per account; every deposit to it is a transaction that completes', async () => {
    const a1 = await h.api('GET', '/api/v2/account/onchain-address', alice.token)
    expect(a1.status).toBe(200)
    const address = a1.body.staticOnchainAddress
    expect(btcAddress.toOutputScript(address, networks.regtest).length).toBe(22)
    expect(
      (await h.api('GET', '/api/v2/account/onchain-address', alice.token)).body.staticOnchainAddress,
    ).toBe(address)
    const other = (await h.api('GET', '/api/v2/account/onchain-address', bob.token)).body.staticOnchainAddress
    expect(other).not.toBe(address)
    expect((await h.api('GET', '/api/v2/account/onchain-address', undefined)).status).toBe(401)

    const before = (await btc(alice)).amount
    const known = await depositsOf(alice)
    await pay(address, '0.0007')
    await pay(address, '0.00003')
    await work()
    const fresh = (await depositsOf(alice)).filter((id) => !known.includes(id))
    expect(fresh).toHaveLength(2)
    for (const id of fresh) {
      const dep = await get(alice, id)
      expect(dep.txnState).toBe('srccreated')
      expect(dep.sourceReq.reqDetails).toMatchObject({ address, staticAddress: true })
    }
    await mine()
    await work()
    for (const id of fresh) {
      expect((await get(alice, id)).txnState).toBe('completed')
      expect(await events(id)).toEqual(['srccreated', 'completed'])
    }
    expect((await btc(alice)).amount).toBeCloseTo(before + 0.00073, 8)
    await h.expectBooksBalanced()
  })

  it('hands out a fresh address for every receive, never reusing a derivation index', async () => {
    const addresses = []
    for (let i = 0; i < 5; i++) addresses.push((await receive(bob, '0.0001')).sourceReq.reqDetails.address)
    expect(new Set(addresses).size).toBe(5)
    const { rows } = await h.c.db.query<{ n: bigint; distinct: bigint }>(
      'SELECT count(*)::int8 AS n, count(DISTINCT derivation_index)::int8 AS distinct FROM onchain_addresses',
    )
    expect(rows[0]!.n).toBe(rows[0]!.distinct)
    for (const a of addresses) expect(() => btcAddress.toOutputScript(a, networks.regtest)).not.toThrow()
  })

  it('send: accepts all address types, prices the network fee by type, then srccreated -> destsent -> completed', async () => {
    for (const [type, address] of Object.entries(ADDRESSES)) {
      const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(address, '0.001'))
      expect(q.status, `${type} ${JSON.stringify(q.body)}`).toBe(200)
      expect(q.body.sourceReq.networkFees).toBeCloseTo((RATE * VSIZE[type as keyof typeof VSIZE]) / 1e8, 8)
      expect(q.body.sourceReq.svcpayFees).toBe(0.000001)
      expect(q.body.destReq.reqDetails.address).toBe(address)
      expect(q.body.destReq.amtRequested).toBe(0.001)
      expect(
        (await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, bob.token)).body.txnState,
      ).toBe('usercanceled')
    }

    const before = await btc(bob)
    const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(ADDRESSES.p2tr, '0.002'))
    const total = 0.002 + 0.000002 + (RATE * VSIZE.p2tr) / 1e8
    expect((await btc(bob)).availableBalance).toBeCloseTo(before.availableBalance - total, 8)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    expect(c.body.txnState).toBe('srccreated')
    expect((await btc(bob)).amount).toBe(before.amount)
    await work()
    const sent = await get(bob, q.body.txnId)
    expect(sent.txnState).toBe('destsent')
    expect(sent.sourceReq.reqStatus).toBe('2')
    expect(sent.destReq.reqStatus).toBe('1')
    const txid = sent.destReq.reqDetails.txid
    expect(txid).toMatch(/^[0-9a-f]{64}$/)
    // Broadcast, not yet confirmed: the funds stay held (as for payouts) until the chain confirms.
    expect((await btc(bob)).amount).toBe(before.amount)
    expect((await btc(bob)).availableBalance).toBeCloseTo(before.availableBalance - total, 8)
    // The send is on the chain, to that address, for that amount.
    const outs = await h.c.bitcoin.rails.onchain.listOutputs(ADDRESSES.p2tr)
    expect(outs.find((o) => o.txid === txid)).toMatchObject({ amountSats: 200_000n, confirmations: 0 })
    await work()
    expect((await get(bob, q.body.txnId)).txnState).toBe('destsent')
    await mine()
    await work()
    const done = await get(bob, q.body.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.destReq.amtSettled).toBe(0.002)
    expect(done.destReq.reqDetails.txid).toBe(txid)
    expect((await btc(bob)).amount).toBeCloseTo(before.amount - total, 8)
    expect((await btc(bob)).availableBalance).toBeCloseTo(before.availableBalance - total, 8)
    expect(await events(q.body.txnId)).toEqual(['quoted', 'srccreated', 'destsent', 'completed'])
    await h.expectBooksBalanced()
  })

  it('send: refuses bad checksums, other networks and junk (invalid_address), and amounts below 0.00001 BTC', async () => {
    const good = ADDRESSES.p2wpkh
    const flipped = good.slice(0, -1) + (good.endsWith('q') ? 'p' : 'q')
    const mainnet = p2wpkh(pub).address!
    const testnet = p2wpkh(pub, { bech32: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }).address!
    const mainnetLegacy = p2pkh(pub).address!
    for (const address of [flipped, mainnet, testnet, mainnetLegacy, 'not-an-address', '']) {
      const r = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(address, '0.001'))
      expect([r.status, r.body.error, r.body.details?.[0]?.field], address).toEqual([
        400,
        'invalid_address',
        'destReq.reqDetails.address',
      ])
    }
    const low = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(good, '0.00000999'))
    expect([low.status, low.body.error]).toEqual([400, 'amount_below_minimum'])
    const edge = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(good, '0.00001'))
    expect(edge.status).toBe(200)
    await h.api('PUT', `/api/v2/transaction/${edge.body.txnId}/cancel`, bob.token)
  })

  it('send: deductNetworkFeesFromDest takes the fees out of the amount sent', async () => {
    const before = await btc(bob)
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      bob.token,
      sendBody(ADDRESSES.p2wpkh, '0.001', { deductNetworkFeesFromDest: true }),
    )
    expect(q.status).toBe(200)
    // 100,000 sats less 100 (service fee) and 12 x 141 = 1,692 (network fee) = 98,208 sats.
    expect(q.body.sourceReq.amtRequested).toBe(0.001)
    expect(q.body.sourceReq.networkFees).toBe(0.00001692)
    expect(q.body.destReq.amtRequested).toBe(0.00098208)
    expect((await btc(bob)).availableBalance).toBeCloseTo(before.availableBalance - 0.001, 8)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    await work()
    const sent = await get(bob, q.body.txnId)
    const outs = await h.c.bitcoin.rails.onchain.listOutputs(ADDRESSES.p2wpkh)
    expect(outs.find((o) => o.txid === sent.destReq.reqDetails.txid)?.amountSats).toBe(98_208n)
    expect((await btc(bob)).availableBalance).toBeCloseTo(before.availableBalance - 0.001, 8)
    const tooSmall = await h.api(
      'POST',
      '/api/v2/transaction',
      bob.token,
      sendBody(ADDRESSES.p2wpkh, '0.00001', { deductNetworkFeesFromDest: true }),
    )
    expect(tooSmall.status).toBe(400)
    await mine()
    await work()
    await h.expectBooksBalanced()
  })

  it("send to another account of ours goes over the chain and arrives as that account's deposit", async () => {
    const address = (await h.api('GET', '/api/v2/account/onchain-address', alice.token)).body
      .staticOnchainAddress
    const aliceBefore = (await btc(alice)).amount
    const known = await depositsOf(alice)
    const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(address, '0.0004'))
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    await work()
    await work()
    await mine()
    await work()
    expect((await get(bob, q.body.txnId)).txnState).toBe('completed')
    const fresh = (await depositsOf(alice)).filter((id) => !known.includes(id))
    expect(fresh).toHaveLength(1)
    expect((await get(alice, fresh[0]!)).txnState).toBe('completed')
    expect((await btc(alice)).amount).toBeCloseTo(aliceBefore + 0.0004, 8)
    await h.expectBooksBalanced()
  })

  it('send: an operator fee bump replaces the sandbox transaction; the send completes on the replacement', async () => {
    const before = await btc(bob)
    const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(ADDRESSES.p2wpkh, '0.0005'))
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    await work()
    const first = (await get(bob, q.body.txnId)).destReq.reqDetails.txid
    const bump = await h.app.inject({
      method: 'POST',
      url: `/admin/onchain/sends/${q.body.txnId}/bumpfee`,
      headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      payload: { feeRate: 30 },
    })
    expect(bump.statusCode, bump.body).toBe(200)
    const replacement = bump.json().txid
    expect(replacement).not.toBe(first)
    const outs = await h.c.bitcoin.rails.onchain.listOutputs(ADDRESSES.p2wpkh)
    expect(outs.some((o) => o.txid === first)).toBe(false)
    expect(outs.find((o) => o.txid === replacement)?.amountSats).toBe(50_000n)
    await mine()
    await work()
    const done = await get(bob, q.body.txnId)
    expect([done.txnState, done.destReq.reqDetails.txid]).toEqual(['completed', replacement])
    const total = 0.0005 + 0.0000005 + (RATE * VSIZE.p2wpkh) / 1e8
    expect((await btc(bob)).amount).toBeCloseTo(before.amount - total, 8)
    await h.expectBooksBalanced()
  })
})
