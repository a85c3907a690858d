/**
 * The on-chain send and receive flows over the real adapters (Esplora with a signer, Bitcoin Core's
 * wallet), against stand-in nodes that answer as electrs and Bitcoin Core do (test/standins), through
 * the faults real nodes have: refusals, forgotten transactions, double spends, 5xx, stalls, restarts,
 * fee spikes, reorganisations. Every case ends with the books check and the exact balances the chain
 * implies.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { historyProblems, moneyProblems } from '../../test/helpers/invariants.js'
import { pointCliAt, runCli } from '../../test/helpers/cli.js'
import { Chain, payFromOutside } from '../../test/standins/chain.js'
import { startEsploraStandin, type EsploraStandin } from '../../test/standins/esplora.js'
import { startBitcoindStandin, type BitcoindStandin } from '../../test/standins/bitcoind.js'
import { testSigner } from '../../test/standins/signer.js'
import { createEsploraRail } from './esplora/esplora.js'
import { createBitcoindRail } from './bitcoind/bitcoind.js'
import type { OnchainRail } from '../rails/rail.js'
import { runDueTransactions } from '../transactions/worker.js'
import { REORG_WATCH_MS, runDueAddresses } from './deposits.js'
import { FEE_WAIT_MAX_MS } from './send-broadcast.js'
import { postEntry } from '../ledger/ledger.js'
import { walletOutPostings } from '../transactions/money.js'
import { txnFromRow } from '../transactions/txn.js'

const PAYEE = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
/** vsize the quote prices a P2WPKH send at (src/onchain/vsize.ts). */
const VSIZE = 141n
/** The service fee of a send (FEE_ONCHAIN_SEND default 0+10 bp). */
const serviceFee = (sats: bigint) => (sats * 10n) / 10_000n

const sendBody = (address: string, amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: amt, reqDetails: { address } },
})
const receiveBody = (amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})

describe('On-chain flows on the real adapters, against stand-in nodes', () => {
  let h: Harness
  let bob: TestAccount
  let sandboxRail: OnchainRail
  const logs: { level: string; msg: string; obj: object }[] = []
  const stands: { close(): Promise<void> }[] = []

  beforeAll(async () => {
    h = await createHarness()
    bob = await h.createAccount({ name: 'Bob' })
    await h.fund(bob.accountId, 'BTC', '1')
    sandboxRail = h.c.bitcoin.rails.onchain
    h.c.bitcoin.log = {
      error: (obj, msg) => logs.push({ level: 'error', msg, obj }),
      warn: (obj, msg) => logs.push({ level: 'warn', msg, obj }),
    }
  })
  afterEach(async () => {
    h.c.bitcoin.rails.onchain = sandboxRail
    for (const s of stands.splice(0)) await s.close()
  })
  afterAll(async () => h?.close())

  /** Wallet balances in satoshis, read from the ledger. */
  const balances = async (accountId: string) => {
    const { rows } = await h.c.db.query<{ posted: bigint; pending: bigint }>(
      `SELECT posted, pending FROM ledger_accounts WHERE account_id = $1 AND ccy = 'BTC' AND kind = 'wallet'`,
      [accountId],
    )
    return { posted: rows[0]!.posted, available: rows[0]!.posted - rows[0]!.pending }
  }
  const txn = async (id: string) =>
    (await h.c.db.query<any>('SELECT * FROM transactions WHERE id = $1', [id])).rows[0]
  const events = async (id: string) =>
    (
      await h.c.db.query<{ txn_state: string }>(
        'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
        [id],
      )
    ).rows.map((r) => r.txn_state)
  /** Everything due, now: the worker's claims and the address sweep, as if their time had come. */
  const work = async (rounds = 1) => {
    for (let i = 0; i < rounds; i++) {
      await h.c.db.query(
        `UPDATE transactions SET next_check_at = 0 WHERE next_check_at IS NOT NULL AND state NOT IN ('completed','failed','expired','usercanceled','rejected','error')`,
      )
      await h.c.db.query('UPDATE onchain_addresses SET next_check_at = 0')
      await runDueAddresses({ ...h.c.bitcoin, log: h.c.bitcoin.log! })
      await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    }
  }
  const send = async (address: string, amt: string) => {
    const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(address, amt))
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    expect(c.body.txnState).toBe('srccreated')
    return q.body.txnId as string
  }
  /** What a send of `sats` at `rateSatPerVb` quoted takes from the wallet. */
  const totalOf = (sats: bigint, rateSatPerVb: bigint) => sats + serviceFee(sats) + rateSatPerVb * VSIZE
  /** Bob's wallet holds exactly `total` less than `before`, nothing of it still held. */
  const expectDebited = async (before: { posted: bigint; available: bigint }, total: bigint) =>
    expect(await balances(bob.accountId)).toEqual({
      posted: before.posted - total,
      available: before.available - total,
    })
  const invariantsHold = async () => {
    await h.expectBooksBalanced()
    expect(await moneyProblems(h.c.db)).toEqual([])
    expect(await historyProblems(h.c.db)).toEqual([])
  }

  async function esplora(): Promise<{ node: EsploraStandin; signer: ReturnType<typeof testSigner> }> {
    const node = await startEsploraStandin()
    stands.push(node)
    const signer = testSigner(node.chain)
    h.c.bitcoin.rails.onchain = createEsploraRail({
      url: node.url,
      network: 'regtest',
      timeoutMs: 500,
      broadcast: { sign: signer.sign },
    })
    return { node, signer }
  }

  it('Esplora without a signer: an on-chain send is refused at quote (400 method_not_available); nothing quoted or held', async () => {
    const node = await startEsploraStandin()
    stands.push(node)
    h.c.bitcoin.rails.onchain = createEsploraRail({ url: node.url, network: 'regtest', timeoutMs: 500 })
    const before = await balances(bob.accountId)
    const { rows: counted } = await h.c.db.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM transactions',
    )
    const q = await h.api('POST', '/api/v2/transaction', bob.token, sendBody(PAYEE, '0.001'))
    expect(q.status).toBe(400)
    expect(q.body.error).toBe('method_not_available')
    expect(q.body.message).toMatch(/signer/)
    const { rows: after } = await h.c.db.query<{ n: string }>('SELECT count(*)::text AS n FROM transactions')
    expect(after[0]!.n).toBe(counted[0]!.n)
    expect(await balances(bob.accountId)).toEqual(before)
    // Receives still work on the same rail.
    const r = await h.api('POST', '/api/v2/transaction', bob.token, receiveBody('0.001'))
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  })

  it('Esplora: a broadcast the node refuses fails the send and releases the hold once (it sat in destsent, debited)', async () => {
    const { node } = await esplora()
    const before = await balances(bob.accountId)
    const id = await send(PAYEE, '0.001')
    node.chain.refuseNext = { code: -26, message: 'mempool min fee not met, 1410 < 2000' }
    await work(3)
    const t = await txn(id)
    expect([t.state, t.msg]).toEqual(['failed', 'rejected'])
    expect(await events(id)).toEqual(['quoted', 'srccreated', 'failed'])
    expect(await balances(bob.accountId)).toEqual(before)
    expect(node.chain.mempool.size).toBe(0)
    await invariantsHold()
  })

  it('Esplora: a transaction the index forgot is broadcast again (the same one) and completes; exact balances', async () => {
    const { node } = await esplora()
    const before = await balances(bob.accountId)
    const id = await send(PAYEE, '0.002')
    await work()
    const sent = await txn(id)
    expect(sent.state).toBe('destsent')
    const txid = sent.dest_details.txid as string
    // 11 sat/vB quoted (10.1 for 3 blocks, rounded up); the network still wants that.
    const total = totalOf(200_000n, 11n)
    expect(await balances(bob.accountId)).toEqual({
      posted: before.posted,
      available: before.available - total,
    })
    // electrs restarts with an empty mempool: GET /tx/:txid now 404s (its /status still says unconfirmed).
    node.chain.forget(txid)
    await node.restart()
    // The first request after the restart may meet a pooled connection the restart closed
    // (ECONNRESET): retried, like any transport failure.
    await work(2)
    expect((await txn(id)).state).toBe('destsent')
    expect(node.chain.mempool.has(txid)).toBe(true)
    node.chain.mine(1)
    await work()
    const done = await txn(id)
    expect([done.state, done.dest_details.txid]).toEqual(['completed', txid])
    await expectDebited(before, total)
    expect(node.chain.txs.get(txid)!.outputs[0]).toEqual({ address: PAYEE, value: 200_000n })
    await invariantsHold()
  })

  it('Esplora: a sent transaction refused on rebroadcast for its fee is not given up (other nodes may mine it)', async () => {
    const { node } = await esplora()
    const before = await balances(bob.accountId)
    const id = await send(PAYEE, '0.001')
    await work()
    const txid = (await txn(id)).dest_details.txid as string
    node.chain.forget(txid)
    node.chain.refuseNext = { code: -26, message: 'mempool min fee not met, 1551 < 4000' }
    await work()
    expect((await txn(id)).state).toBe('destsent')
    expect(logs.some((l) => l.msg.includes('not relayed by the node for now'))).toBe(true)
    await work()
    node.chain.mine(1)
    await work()
    expect((await txn(id)).state).toBe('completed')
    const total = totalOf(100_000n, 11n)
    await expectDebited(before, total)
    await invariantsHold()
  })

  it('Esplora: a sent transaction double-spent in a block fails the send on rebroadcast and releases the hold', async () => {
    const { node, signer } = await esplora()
    const before = await balances(bob.accountId)
    const id = await send(PAYEE, '0.003')
    await work()
    const txid = (await txn(id)).dest_details.txid as string
    // The signer's coin is spent by another transaction that a miner took instead of ours.
    const coin = signer.coinOf(id)!
    node.chain.forget(txid)
    node.chain.mine(1, [
      node.chain.makeTx({
        inputs: [{ txid: coin.txid, vout: 0 }],
        outputs: [{ address: signer.address, value: 9_000_000n }],
      }),
    ])
    await work(2)
    const t = await txn(id)
    expect([t.state, t.msg]).toEqual(['failed', 'broadcast_refused'])
    expect(await events(id)).toEqual(['quoted', 'srccreated', 'destsent', 'failed'])
    expect(await balances(bob.accountId)).toEqual(before)
    expect(logs.some((l) => l.level === 'error' && l.msg.includes('refused on rebroadcast'))).toBe(true)
    await invariantsHold()
  })

  it('Esplora: 5xx, a stall, a cut answer (after the node took it) and a restart during the send are retried; one transaction, completed', async () => {
    const { node, signer } = await esplora()
    const before = await balances(bob.accountId)
    const id = await send(PAYEE, '0.001')
    node.faults.push({
      match: (r) => r.method === 'POST',
      fault: { kind: 'status', status: 503, body: 'Service Unavailable' },
      times: 1,
    })
    await work()
    node.faults.push({ match: (r) => r.method === 'POST', fault: { kind: 'stall' }, times: 1 })
    await work()
    node.faults.push({ match: (r) => r.method === 'POST', fault: { kind: 'cut' }, times: 1 })
    await work()
    await node.stop()
    await work()
    expect((await txn(id)).state).toBe('srccreated')
    await node.restart()
    await work()
    const sent = await txn(id)
    expect(sent.state).toBe('destsent')
    // The stalled broadcast may have reached the node: it is the same transaction, never a second one.
    expect(signer.calls()).toBe(1)
    expect([...node.chain.mempool]).toEqual([sent.dest_details.txid])
    node.chain.mine(1)
    await work()
    expect((await txn(id)).state).toBe('completed')
    const total = totalOf(100_000n, 11n)
    await expectDebited(before, total)
    await invariantsHold()
  })

  it('the fee is estimated again at send time: lower is used, above the quote waits, then fails without overpaying', async () => {
    const { node } = await esplora()
    const before = await balances(bob.accountId)
    const cheap = await send(PAYEE, '0.001')
    node.feeEstimates = { '3': 4.2 }
    await work()
    const sentCheap = await txn(cheap)
    expect(sentCheap.dest_details).toMatchObject({ feeRateSatPerVb: 11, feeRateSentSatPerVb: 5 })
    expect(node.chain.txs.get(sentCheap.dest_details.txid)!.feeSats).toBe(5n * 141n)

    node.feeEstimates = { '3': 10.1 }
    const dear = await send(PAYEE, '0.001')
    node.feeEstimates = { '3': 30 }
    await work()
    expect((await txn(dear)).state).toBe('srccreated')
    expect(logs.some((l) => l.msg.includes('network fee is above the quoted rate'))).toBe(true)
    // Half an hour later the network still wants more than the customer was quoted.
    await h.c.db.query('UPDATE transactions SET created_at = created_at - $2 WHERE id = $1', [
      dear,
      FEE_WAIT_MAX_MS,
    ])
    await work()
    const failed = await txn(dear)
    expect([failed.state, failed.msg]).toEqual(['failed', 'network_fee_above_quote'])
    expect(node.chain.mempool.size).toBe(1)
    node.chain.mine(1)
    await work()
    expect((await txn(cheap)).state).toBe('completed')
    // The customer pays the quote (11 sat/vB) for the cheap send; the failed one costs nothing.
    const total = totalOf(100_000n, 11n)
    await expectDebited(before, total)
    await invariantsHold()
  })

  it('Esplora: receives seen through 5xx, stalls, cut answers and a restart are credited once; a reorganised deposit is surfaced', async () => {
    const { node } = await esplora()
    const carol = await h.createAccount({ name: 'Carol' })
    const q = await h.api('POST', '/api/v2/transaction', carol.token, receiveBody('0.004'))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, carol.token)
    const address = c.body.sourceReq.reqDetails.address as string
    const statics = (await h.api('GET', '/api/v2/account/onchain-address', carol.token)).body
      .staticOnchainAddress as string
    const paid = payFromOutside(node.chain, address, 400_000n)
    const extra = payFromOutside(node.chain, statics, 70_000n)
    node.faults.push({
      match: (r) => r.path.includes('/txs/mempool'),
      fault: { kind: 'status', status: 502, body: 'Bad Gateway' },
      times: 2,
    })
    await work()
    node.faults.push({ match: (r) => r.path.includes('/txs/chain'), fault: { kind: 'stall' }, times: 2 })
    await work()
    node.faults.push({
      match: (r) => r.path.includes('/blocks/tip/height'),
      fault: { kind: 'cut' },
      times: 2,
    })
    await work()
    await node.restart()
    await work(2)
    // A block arrives while Esplora is down; the watcher carries on once it is back.
    node.chain.mine(1)
    await node.stop()
    await work()
    await node.restart()
    await work(3)
    expect((await txn(q.body.txnId)).state).toBe('completed')
    const deposits = await h.c.db.query<{ txid: string; txn_id: string }>(
      'SELECT txid, txn_id FROM onchain_deposits WHERE address = ANY($1) ORDER BY txid',
      [[address, statics]],
    )
    expect(deposits.rows.map((r) => r.txid).sort()).toEqual([paid.txid, extra.txid].sort())
    // The receive fee is 0 by default: the wallet holds exactly what the chain paid it.
    expect(await balances(carol.accountId)).toEqual({ posted: 470_000n, available: 470_000n })
    // A deeper reorganisation drops the static-address payment for good (double-spent on the new branch).
    node.chain.reorg(1, [extra.txid])
    node.chain.mine(2)
    await work()
    const listed = await h.api('GET', '/admin/onchain/reorgs', h.adminToken)
    expect(listed.body.data.map((d: { txid: string }) => d.txid)).toContain(extra.txid)
    expect(await balances(carol.accountId)).toEqual({ posted: 470_000n, available: 470_000n })
    await invariantsHold()
  })

  it('a send posted at destsent by the previous version is not posted again when it confirms', async () => {
    const { node } = await esplora()
    const before = await balances(bob.accountId)
    const id = await send(PAYEE, '0.001')
    await work()
    // What the previous version did at broadcast: post the entry and settle the hold there.
    const t = await txn(id)
    const walletId = await h.c.accounts.walletId(h.c.db, bob.accountId, 'BTC')
    await postEntry(h.c.db, {
      txnId: id,
      kind: 'onchain_send',
      now: Date.now(),
      settleHolds: true,
      postings: walletOutPostings(txnFromRow(t), walletId!, { system: 'onchain' }),
    })
    node.chain.mine(1)
    await work()
    expect((await txn(id)).state).toBe('completed')
    const total = totalOf(100_000n, 11n)
    await expectDebited(before, total)
    await invariantsHold()
  })

  async function bitcoind(): Promise<BitcoindStandin> {
    const node = await startBitcoindStandin({ chain: new Chain() })
    stands.push(node)
    node.createWallet('svcpay-hot', { privateKeys: true })
    node.fundWallet('svcpay-hot', 50_000_000n)
    node.feeRateSatPerVb = 11n
    h.c.bitcoin.rails.onchain = createBitcoindRail({
      url: node.url,
      user: node.user,
      password: node.password,
      wallet: 'svcpay-hot',
      accountXpub: h.c.bitcoin.keys.accountXpub,
      descriptorRangeAhead: 20,
      network: 'regtest',
      timeoutMs: 2000,
    })
    return node
  }

  it('Bitcoin Core: a send the mempool refused (sendtoaddress still gave a txid) fails and releases the hold', async () => {
    const node = await bitcoind()
    const before = await balances(bob.accountId)
    node.chain.policy = (tx) =>
      tx.outputs.some((o) => o.address === PAYEE) ? { code: -26, message: 'tx-size' } : null
    const id = await send(PAYEE, '0.001')
    await work(2)
    const t = await txn(id)
    expect([t.state, t.msg]).toEqual(['failed', 'rejected'])
    expect(await balances(bob.accountId)).toEqual(before)
    const hot = node.wallets.get('svcpay-hot')!
    expect([...hot.txs.values()].find((w) => w.comment === id)?.abandoned).toBe(true)
    await invariantsHold()
  })

  it('Bitcoin Core: a send through a lost answer, a restart and warm-up pays once and completes; exact balances', async () => {
    const node = await bitcoind()
    const before = await balances(bob.accountId)
    const hotBefore = node.wallets.get('svcpay-hot')!.txs.size
    const id = await send(PAYEE, '0.003')
    node.faults.push({
      match: (r) => r.rpcMethod === 'sendtoaddress',
      fault: { kind: 'work-then-stall' },
      times: 1,
    })
    await work()
    expect((await txn(id)).state).toBe('srccreated')
    await node.restart()
    node.warmingUp = true
    await work()
    expect((await txn(id)).state).toBe('srccreated')
    node.warmingUp = false
    await work(2)
    const sent = await txn(id)
    expect(sent.state).toBe('destsent')
    expect(node.seen.filter((r) => r.rpcMethod === 'sendtoaddress')).toHaveLength(1)
    expect(node.wallets.get('svcpay-hot')!.txs.size).toBe(hotBefore + 1)
    node.chain.mine(1)
    await work()
    expect((await txn(id)).state).toBe('completed')
    const total = totalOf(300_000n, 11n)
    await expectDebited(before, total)
    expect(node.chain.txs.get(sent.dest_details.txid)!.outputs[0]).toEqual({
      address: PAYEE,
      value: 300_000n,
    })
    await invariantsHold()
  })

  it('Bitcoin Core: a send whose answer was lost is never failed for a later fee spike: it may be in the network', async () => {
    const node = await bitcoind()
    const before = await balances(bob.accountId)
    const id = await send(PAYEE, '0.001')
    node.faults.push({
      match: (r) => r.rpcMethod === 'sendtoaddress',
      fault: { kind: 'work-then-stall' },
      times: 1,
    })
    await work()
    expect((await txn(id)).state).toBe('srccreated')
    node.feeRateSatPerVb = 80n
    await h.c.db.query('UPDATE transactions SET created_at = created_at - $2 WHERE id = $1', [
      id,
      FEE_WAIT_MAX_MS,
    ])
    await work()
    const sent = await txn(id)
    expect(sent.state).toBe('destsent')
    expect(sent.dest_details.feeRateSentSatPerVb).toBe(11)
    node.chain.mine(1)
    await work()
    expect((await txn(id)).state).toBe('completed')
    const total = totalOf(100_000n, 11n)
    await expectDebited(before, total)
    await invariantsHold()
  })

  it('Bitcoin Core: an operator fee bump (admin API) is followed to completion; a conflicted send fails', async () => {
    const node = await bitcoind()
    const before = await balances(bob.accountId)
    const id = await send(PAYEE, '0.001')
    await work()
    const first = (await txn(id)).dest_details.txid as string
    const bump = await h.api('POST', `/admin/onchain/sends/${id}/bumpfee`, h.adminToken, { feeRate: 40 })
    expect(bump.status, JSON.stringify(bump.body)).toBe(200)
    const bumped = bump.body
    expect(bumped).toMatchObject({ txnId: id, replacedTxid: first, feeRateSatPerVb: 40 })
    expect((await txn(id)).dest_details).toMatchObject({ txid: bumped.txid, replacedTxids: [first] })
    expect(node.chain.mempool.has(bumped.txid) && !node.chain.mempool.has(first)).toBe(true)
    node.chain.mine(1)
    await work()
    expect((await txn(id)).state).toBe('completed')
    const again = await h.api('POST', `/admin/onchain/sends/${id}/bumpfee`, h.adminToken, {})
    expect(again.status).toBe(409)

    const id2 = await send(PAYEE, '0.002')
    await work()
    const txid2 = (await txn(id2)).dest_details.txid as string
    // Another spend of the same coins is mined (say, the same wallet used elsewhere).
    const tx2 = node.chain.txs.get(txid2)!
    node.chain.mine(1, [
      node.chain.makeTx({ inputs: tx2.inputs, outputs: [{ address: PAYEE, value: 1_000n }] }),
    ])
    await work()
    const t2 = await txn(id2)
    expect([t2.state, t2.msg]).toEqual(['failed', 'conflicted'])
    const total = totalOf(100_000n, 11n)
    await expectDebited(before, total)
    await invariantsHold()
  })

  it('Bitcoin Core: a receive through the watch wallet is credited; its block leaving the chain is surfaced, then cleared', async () => {
    const node = await bitcoind()
    const alice = await h.createAccount({ name: 'Alice' })
    const q = await h.api('POST', '/api/v2/transaction', alice.token, receiveBody('0.005'))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    const address = c.body.sourceReq.reqDetails.address as string
    const watch = node.wallets.get('svcpay-hot-watch')!
    expect(watch.privateKeys).toBe(false)
    expect(watch.descriptors).toHaveLength(1)
    const paid = payFromOutside(node.chain, address, 500_000n)
    await work()
    expect((await txn(q.body.txnId)).state).toBe('srccreated')
    node.chain.mine(1)
    await work()
    expect((await txn(q.body.txnId)).state).toBe('completed')
    expect(await balances(alice.accountId)).toEqual({ posted: 500_000n, available: 500_000n })

    // The block leaves the best chain; the payment goes back to the mempool.
    node.chain.reorg(1)
    await work()
    const listed = await h.api('GET', '/admin/onchain/reorgs', h.adminToken)
    expect(listed.body.data.filter((d: { txid: string }) => d.txid === paid.txid)).toEqual([
      expect.objectContaining({ txid: paid.txid, vout: 0, amountSats: '500000', txnId: q.body.txnId }),
    ])
    expect(
      logs.filter(
        (l) => l.msg.includes('left the best chain') && (l.obj as { txid?: string }).txid === paid.txid,
      ),
    ).toHaveLength(1)
    await work()
    expect(
      logs.filter(
        (l) => l.msg.includes('left the best chain') && (l.obj as { txid?: string }).txid === paid.txid,
      ),
    ).toHaveLength(1)
    // The books are as they were: the credit stands until a person decides, and they balance.
    expect(await balances(alice.accountId)).toEqual({ posted: 500_000n, available: 500_000n })
    await invariantsHold()
    node.chain.mine(1)
    await work()
    const cleared = await h.api('GET', '/admin/onchain/reorgs', h.adminToken)
    expect(cleared.body.data.filter((d: { txid: string }) => d.txid === paid.txid)).toEqual([])
    const { rows } = await h.c.db.query<{ reconfirmed_at: bigint | null }>(
      'SELECT reconfirmed_at FROM onchain_deposits WHERE txid = $1',
      [paid.txid],
    )
    expect(rows[0]!.reconfirmed_at).not.toBeNull()
    await invariantsHold()
  })

  /** Make one transaction's re-check due now and run the worker (the window's own schedule aside). */
  const recheck = async (id: string) => {
    await h.c.db.query(
      'UPDATE transactions SET next_check_at = 0 WHERE id = $1 AND next_check_at IS NOT NULL',
      [id],
    )
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  }
  const stuckRows = async (id: string) => {
    const listed = await h.api('GET', '/admin/transactions/stuck?limit=100', h.adminToken)
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    return listed.body.data.filter((s: { txnId: string }) => s.txnId === id)
  }
  const leftLogs = (id: string) =>
    logs.filter(
      (l) =>
        l.msg.includes('completed on-chain send left the best chain') &&
        (l.obj as { txnId?: string }).txnId === id,
    )

  /**
   * A completed send over `node`: its block leaves the chain (back in the mempool), it is marked and
   * listed, once, and cleared when mined again; then it is double-spent in the chain, marked
   * conflicted and listed for operators, never refunded; the watch ends once that is final-deep.
   * A send that simply gets deep ends its watch too. The customer's debit stands throughout.
   */
  async function completedSendReorgedOut(node: { chain: Chain }) {
    const before = await balances(bob.accountId)
    const total = totalOf(100_000n, 11n)
    // A send that only gets deeper: watched until 6 confirmations, then left alone.
    const calm = await send(PAYEE, '0.001')
    await work()
    node.chain.mine(1)
    await work()
    expect((await txn(calm)).state).toBe('completed')
    expect((await txn(calm)).next_check_at).not.toBeNull()
    node.chain.mine(5)
    await recheck(calm)
    expect((await txn(calm)).next_check_at).toBeNull()
    expect((await txn(calm)).dest_details.leftChainAt).toBeUndefined()

    const id = await send(PAYEE, '0.001')
    await work()
    const txid = (await txn(id)).dest_details.txid as string
    node.chain.mine(1)
    await work()
    expect((await txn(id)).state).toBe('completed')
    await expectDebited(before, 2n * total)
    expect(await stuckRows(id)).toEqual([])

    // Its block leaves the best chain: the transaction is back in the mempool, unconfirmed.
    node.chain.reorg(1)
    expect(node.chain.mempool.has(txid)).toBe(true)
    await recheck(id)
    let t = await txn(id)
    expect(t.state).toBe('completed')
    expect(t.dest_details).toMatchObject({ txid, leftChain: 'unconfirmed' })
    expect(typeof t.dest_details.leftChainAt).toBe('number')
    expect(t.next_check_at).not.toBeNull()
    expect(await stuckRows(id)).toEqual([
      expect.objectContaining({ txnId: id, type: 'onchain_send', state: 'completed', reason: 'left_chain' }),
    ])
    expect(leftLogs(id)).toHaveLength(1)
    await recheck(id)
    expect(leftLogs(id)).toHaveLength(1)
    await expectDebited(before, 2n * total)
    await invariantsHold()

    // Mined again: the mark clears, the listing with it; still watched until it is deep.
    node.chain.mine(1)
    await recheck(id)
    t = await txn(id)
    expect([t.state, t.dest_details.leftChainAt, t.dest_details.leftChain]).toEqual([
      'completed',
      undefined,
      undefined,
    ])
    expect(t.next_check_at).not.toBeNull()
    expect(await stuckRows(id)).toEqual([])

    // Out again, and this time its coins are spent by another transaction in the new best chain.
    node.chain.reorg(1)
    const inputs = node.chain.txs.get(txid)!.inputs
    node.chain.mine(1, [node.chain.makeTx({ inputs, outputs: [{ address: PAYEE, value: 1_000n }] })])
    expect(node.chain.mempool.has(txid)).toBe(false)
    await recheck(id)
    t = await txn(id)
    expect(t.state).toBe('completed')
    expect(t.dest_details).toMatchObject({ txid, leftChain: 'conflicted' })
    expect(await stuckRows(id)).toEqual([expect.objectContaining({ txnId: id, reason: 'left_chain' })])
    expect(leftLogs(id).length).toBeGreaterThanOrEqual(2)
    // No state change, no event, no refund: an operator resolves it.
    expect(await events(id)).toEqual(['quoted', 'srccreated', 'destsent', 'completed'])
    await expectDebited(before, 2n * total)
    await invariantsHold()

    // The conflict buried 6 deep is final: the watch ends, the listing stays.
    node.chain.mine(5)
    await recheck(id)
    t = await txn(id)
    expect(t.next_check_at).toBeNull()
    expect(t.dest_details.leftChain).toBe('conflicted')
    expect(await stuckRows(id)).toEqual([expect.objectContaining({ txnId: id, reason: 'left_chain' })])
    await expectDebited(before, 2n * total)
    await invariantsHold()
  }

  it('Esplora: a completed send whose block leaves the chain is re-checked, listed for operators, cleared when mined again; conflicted, never refunded', async () => {
    const { node } = await esplora()
    await completedSendReorgedOut(node)
    // The watch is bounded in time too: one not deep a week after it completed is left alone.
    const id = await send(PAYEE, '0.001')
    await work()
    node.chain.mine(1)
    await work()
    await h.c.db.query('UPDATE transactions SET dest_updated_at = dest_updated_at - $2 WHERE id = $1', [
      id,
      REORG_WATCH_MS + 1,
    ])
    await recheck(id)
    const t = await txn(id)
    expect([t.state, t.next_check_at, t.dest_details.leftChain]).toEqual(['completed', null, undefined])
  })

  it('Bitcoin Core: a completed send whose block leaves the chain is re-checked, listed for operators, cleared when mined again; conflicted, never refunded', async () => {
    const node = await bitcoind()
    await completedSendReorgedOut(node)
  })

  it('svcpay onchain bumpfee and onchain reorgs: the operator command line over the admin API', async () => {
    const node = await bitcoind()
    const id = await send(PAYEE, '0.001')
    await work()
    const first = (await txn(id)).dest_details.txid as string
    const restore = await pointCliAt(h)
    try {
      const bumped = await runCli('onchain', 'bumpfee', id, '--rate', '25')
      const now = (await txn(id)).dest_details.txid as string
      expect(now).not.toBe(first)
      expect(bumped).toEqual({ out: `${id}: ${first} replaced by ${now} at 25 sat/vB`, code: 0 })
      expect(node.chain.mempool.has(now)).toBe(true)
      await expect(runCli('onchain', 'bumpfee', id, '--rate', 'lots')).rejects.toThrow('--rate')
      const listed = await runCli('onchain', 'reorgs', '--json')
      expect(Array.isArray(JSON.parse(listed.out))).toBe(true)
    } finally {
      restore()
    }
    node.chain.mine(1)
    await work()
    expect((await txn(id)).state).toBe('completed')
    await invariantsHold()
  })
})
