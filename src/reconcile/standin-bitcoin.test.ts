/**
 * Reconciliation on the real Bitcoin adapters (LND, Bitcoin Core, Esplora) against the stand-in
 * nodes (test/standins), whose balances and histories come from what they did: invoices paid,
 * payments made, outputs on the stand-in chain. The nodes start empty and are funded only by
 * receives through the service, so a clean service reconciles to zero; drift made on a node (a
 * payment by hand, money leaving the wallet) or in the books (a deposit credited twice) is found in
 * `svcpay reconcile --json`, GET /admin/reconciliation and the gauges.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startLndStandIn, type LndStandIn } from '../../test/standins/lnd.js'
import { startBitcoindStandin, type BitcoindStandin } from '../../test/standins/bitcoind.js'
import { startEsploraStandin, type EsploraStandin } from '../../test/standins/esplora.js'
import { Chain, payFromOutside } from '../../test/standins/chain.js'
import { pointCliAt, runCli } from '../../test/helpers/cli.js'
import { postEntry } from '../ledger/ledger.js'
import type { Queryable } from '../db/db.js'
import { runDueTransactions } from '../transactions/worker.js'
import { runDueAddresses } from '../onchain/deposits.js'
import type { ReconciliationReport } from './reconcile.js'

const PAYEE = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
const ELSEWHERE = 'bcrt1q3zxmh4ue370cp48c9d8eeek43qhnzzhvquj2zm'

/** The service's helpers over a harness: the API, the worker, the command line, the gauges. */
function driver(get: () => Harness) {
  const h = () => get()
  return {
    // A run that counts towards the brake (POST); GET /admin/reconciliation only reads.
    async report(): Promise<ReconciliationReport> {
      const r = await h().api('POST', '/admin/reconciliation/run', h().adminToken, {})
      expect(r.status).toBe(200)
      return r.body
    },
    rail: (r: ReconciliationReport, name: string) => r.rails.find((e) => e.rail === name)!,
    orphans: (r: ReconciliationReport, name: string) => r.orphans.filter((o) => o.rail === name),
    cli: runCli,
    async gauge(name: string, labels: string) {
      const text = (await h().app.inject({ method: 'GET', url: '/metrics' })).body
      const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`))
      return line === undefined ? undefined : Number(line.split(' ').pop())
    },
    /** Everything due, now: the address sweep and the worker, as if their time had come. */
    async work(rounds = 1) {
      for (let i = 0; i < rounds; i++) {
        await h().c.db.query(
          `UPDATE transactions SET next_check_at = 0 WHERE next_check_at IS NOT NULL AND state NOT IN ('completed','failed','expired','usercanceled','rejected','error')`,
        )
        await h().c.db.query('UPDATE onchain_addresses SET next_check_at = 0')
        await runDueAddresses({ ...h().c.bitcoin, log: { error: () => {}, warn: () => {} } })
        await runDueTransactions({ db: h().c.db, transactions: h().c.transactions, log: console })
      }
    },
    async create(a: TestAccount, body: unknown) {
      const q = await h().api('POST', '/api/v2/transaction', a.token, body)
      expect(q.status, JSON.stringify(q.body)).toBe(200)
      const c = await h().api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      return { ...c.body, txnId: q.body.txnId as string }
    },
    async state(a: TestAccount, txnId: string) {
      return (await h().api('GET', `/api/v2/transaction/${txnId}`, a.token)).body.txnState as string
    },
  }
}

const receive = (method: string, amt: string) => ({
  sourceReq: { ccy: 'BTC', method, reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})
const lnSend = (paymentRequest: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
})
const onchainSend = (address: string, amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: amt, reqDetails: { address } },
})

/**
 * A bug crediting a deposit twice: the receive's entry is posted again, naming no transaction, by
 * the ledger's own postEntry (the books still balance; only the rail can tell).
 */
async function creditTwice(db: { tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> }, txnId: string) {
  await db.tx(async (q) => {
    const { rows } = await q.query<{ ledger_account_id: string; ccy: string; amount: unknown }>(
      `SELECT ledger_account_id, ccy, amount FROM postings WHERE entry_id =
         (SELECT e.id FROM journal_entries e WHERE e.txn_id = $1 ORDER BY e.id LIMIT 1)`,
      [txnId],
    )
    expect(rows.length).toBeGreaterThan(0)
    await postEntry(q, {
      txnId: null,
      kind: 'sandbox_duplicate_deposit',
      now: Date.now(),
      postings: rows.map((r) => ({
        accountId: r.ledger_account_id,
        ccy: r.ccy,
        amount: BigInt(r.amount as bigint),
      })),
    })
  })
}

describe('reconciliation on LND and Bitcoin Core (stand-ins)', () => {
  let h: Harness
  let ln: LndStandIn
  let core: BitcoindStandin
  let alice: TestAccount
  let bob: TestAccount
  const d = driver(() => h)
  let restoreCli: () => void
  /** What the tests below did to the books and the nodes, to know the exact expected figures. */
  let depositTxn = ''
  let onchainLeft = 0n

  beforeAll(async () => {
    ln = await startLndStandIn()
    // The node holds nothing but what the service's receives bring in.
    ln.localBalanceMsat = 0n
    core = await startBitcoindStandin({ chain: new Chain() })
    core.createWallet('svcpay-hot', { privateKeys: true })
    core.feeRateSatPerVb = 11n
    h = await createHarness({
      LIGHTNING: 'lnd',
      LND_REST_URL: ln.url,
      LND_MACAROON_HEX: ln.macaroonHex,
      LND_TLS_CERT_PATH: ln.certPath,
      LND_TIMEOUT_MS: '5000',
      ONCHAIN: 'bitcoind',
      BITCOIND_RPC_URL: core.url,
      BITCOIND_RPC_USER: core.user,
      BITCOIND_RPC_PASSWORD: core.password,
      BITCOIND_WALLET: 'svcpay-hot',
      ONCHAIN_CONFIRMATIONS: '2',
      RAILS_CHECK_TIMEOUT_MS: '2000',
      RECONCILE_HALT_SENDS: 'true',
      RECONCILE_HALT_AFTER: '1',
    })
    alice = await h.createAccount({ name: 'Alice' })
    bob = await h.createAccount({ name: 'Bob' })
    // Alice's money comes from the sandbox's funding account, from no rail: it is spent through the
    // nodes only out of what Bob's receives brought in.
    await h.fund(alice.accountId, 'BTC', '0.01')
    restoreCli = await pointCliAt(h)
  }, 120_000)
  afterAll(async () => {
    restoreCli?.()
    await h?.close()
    await ln?.close()
    await core?.close()
  })

  it('after a receive paid and a send made on each rail, both reconcile to zero, every payment matched', async () => {
    // Lightning: Bob's invoice paid by an outside payer, then Alice pays an outside invoice.
    const r = await d.create(bob, receive('lightning', '0.002'))
    const pr = r.sourceReq.reqDetails.paymentRequest as string
    const invoice = [...ln.invoices.values()].find((i) => i.paymentRequest === pr)!
    ln.payInvoice(invoice.hash)
    await d.work()
    expect(await d.state(bob, r.txnId)).toBe('completed')
    const outside = ln.outsideInvoice({ amountMsat: 50_000_000n })
    const s = await d.create(alice, lnSend(outside.paymentRequest))
    await d.work()
    expect(await d.state(alice, s.txnId)).toBe('completed')

    // On-chain: Bob's address paid and confirmed; the operator moves the deposit into the hot
    // wallet (mined at no fee); Alice sends from it.
    const o = await d.create(bob, receive('on-chain', '0.01'))
    const paid = payFromOutside(core.chain, o.sourceReq.reqDetails.address as string, 1_000_000n)
    core.chain.mine(2)
    await d.work(2)
    expect(await d.state(bob, o.txnId)).toBe('completed')
    depositTxn = o.txnId
    const sweep = core.chain.makeTx({
      inputs: [{ txid: paid.txid, vout: 0 }],
      outputs: [{ address: core.newAddress('svcpay-hot'), value: 1_000_000n }],
      feeSats: 0n,
    })
    core.chain.mine(1, [sweep])
    const os = await d.create(alice, onchainSend(PAYEE, '0.002'))
    await d.work()
    expect(await d.state(alice, os.txnId)).toBe('destsent')
    core.chain.mine(2)
    await d.work()
    expect(await d.state(alice, os.txnId)).toBe('completed')
    const sentTx = core.chain.txs.get(
      (
        await h.c.db.query<{ txid: string }>(
          `SELECT dest_details->>'txid' AS txid FROM transactions WHERE id = $1`,
          [os.txnId],
        )
      ).rows[0]!.txid,
    )!
    // The wallet paid the fee the service charged: 11 sat/vB for 141 vB.
    expect(sentTx.feeSats).toBe(11n * 141n)
    onchainLeft = 1_000_000n - 200_000n - 11n * 141n

    const report = await d.report()
    // LND: 200,000 sat in, 50,000 out plus a 1 sat routing fee.
    expect(d.rail(report, 'lightning')).toMatchObject({
      adapter: 'lnd',
      source: 'reserves',
      status: 'ok',
      ledger: '0.00149999',
      reported: '0.00149999',
      incoming: '0',
      delta: '0',
    })
    expect(d.rail(report, 'onchain')).toMatchObject({
      adapter: 'bitcoind',
      source: 'reserves',
      status: 'ok',
      ledger: `0.00${onchainLeft.toString().padStart(6, '0')}`,
      delta: '0',
    })
    expect(d.orphans(report, 'lightning')).toEqual([])
    expect(d.orphans(report, 'onchain')).toEqual([])
    expect(report.unmatched.map((u) => u.rail)).not.toContain('lightning')
    expect(report.unmatched.map((u) => u.rail)).not.toContain('onchain')
    expect(await d.gauge('svcpay_reserve_delta', 'rail="lightning",ccy="BTC"')).toBe(0)
    expect(await d.gauge('svcpay_reconciliation_orphans', 'rail="onchain"')).toBe(0)
    // LND was asked with its own units and pages: creation dates in seconds, int64 as strings.
    expect(
      ln.seen.some((x) =>
        /^\/v1\/payments\?creation_date_start=\d+&index_offset=0&max_payments=500$/.test(x.path),
      ),
    ).toBe(true)
    const cli = await d.cli('reconcile', '--json')
    expect(cli.code).toBe(0)
  }, 60_000)

  it('a deposit arrived but not yet confirmed enough is incoming, not a surplus', async () => {
    const o = await d.create(bob, receive('on-chain', '0.0005'))
    payFromOutside(core.chain, o.sourceReq.reqDetails.address as string, 50_000n)
    await d.work()
    let onchain = d.rail(await d.report(), 'onchain')
    expect(onchain).toMatchObject({ incoming: '0.0005', delta: '0', status: 'ok' })
    core.chain.mine(1)
    onchain = d.rail(await d.report(), 'onchain')
    expect(onchain).toMatchObject({ incoming: '0.0005', delta: '0', status: 'ok' })
    core.chain.mine(1)
    await d.work(2)
    expect(await d.state(bob, o.txnId)).toBe('completed')
    onchainLeft += 50_000n
    const report = await d.report()
    expect(d.rail(report, 'onchain')).toMatchObject({ incoming: '0', delta: '0', status: 'ok' })
    expect(d.orphans(report, 'onchain')).toEqual([])

    // A deposit to Bob's static address: the watcher makes its transaction, matched by its txid.
    const statics = (await h.api('GET', '/api/v2/account/onchain-address', bob.token)).body
      .staticOnchainAddress as string
    const dep = payFromOutside(core.chain, statics, 30_000n)
    core.chain.mine(2)
    await d.work(2)
    const { rows } = await h.c.db.query<{ state: string }>(
      `SELECT t.state FROM onchain_deposits d JOIN transactions t ON t.id = d.txn_id WHERE d.txid = $1`,
      [dep.txid],
    )
    expect(rows.map((r) => r.state)).toEqual(['completed'])
    onchainLeft += 30_000n
    const withStatic = await d.report()
    expect(d.rail(withStatic, 'onchain')).toMatchObject({ delta: '0', status: 'ok' })
    expect(d.orphans(withStatic, 'onchain')).toEqual([])
  }, 60_000)

  it('a node that stalls is unknown within the time limit, pauses nothing, and its sends go on', async () => {
    // Both balance reads and the payments listing never answer; Bitcoin Core's wallets neither.
    ln.fault('stall', { path: /^\/v1\/(balance|payments|invoices)/, times: 3 })
    core.faults.push({
      match: (r) => r.rpcMethod === 'getbalances' || r.rpcMethod === 'listtransactions',
      fault: { kind: 'stall' },
      times: Infinity,
    })
    const started = Date.now()
    const report = await d.report()
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(d.rail(report, 'lightning')).toMatchObject({
      status: 'unknown',
      reported: null,
      delta: null,
      note: 'no answer within 2000 ms',
    })
    expect(report.unmatched).toEqual(
      expect.arrayContaining([{ rail: 'lightning', note: 'no answer within 2000 ms' }]),
    )
    expect(await d.gauge('svcpay_reserve_delta', 'rail="lightning",ccy="BTC"')).toBeNaN()
    expect(await d.gauge('svcpay_reconciliation_orphans', 'rail="lightning"')).toBeNaN()
    expect(d.rail(report, 'onchain')).toMatchObject({ status: 'unknown', delta: null })
    expect(await d.gauge('svcpay_reserve_delta', 'rail="onchain",ccy="BTC"')).toBeNaN()
    core.faults.splice(0)
    // RECONCILE_HALT_AFTER=1, yet an unknown reading is no deficit: nothing is paused.
    expect(report.pausedRails ?? []).toEqual([])
    expect(report.ok).toBe(true)
    expect(report.incomplete).toBe(true)
    const outside = ln.outsideInvoice({ amountMsat: 5_000_000n })
    const s = await d.create(alice, lnSend(outside.paymentRequest))
    await d.work()
    expect(await d.state(alice, s.txnId)).toBe('completed')
    // The node answers again: still zero, the new payment matched.
    const after = await d.report()
    expect(d.rail(after, 'lightning')).toMatchObject({ status: 'ok', delta: '0' })
    expect(d.orphans(after, 'lightning')).toEqual([])
    expect(d.rail(after, 'onchain')).toMatchObject({ status: 'ok', delta: '0' })
  }, 60_000)

  it("a payment the node made by hand is a deficit and an orphan on the rail's side", async () => {
    const outside = ln.outsideInvoice({ amountMsat: 10_000_000n })
    const p = ln.payByHand(outside.paymentRequest)
    expect(p.status).toBe('SUCCEEDED')
    const report = await d.report()
    expect(d.rail(report, 'lightning')).toMatchObject({ status: 'deficit', delta: '-0.00010001' })
    expect(d.orphans(report, 'lightning')).toEqual([
      expect.objectContaining({
        side: 'rail',
        reason: 'not_in_ledger',
        ref: outside.hash,
        amount: '-0.00010001',
      }),
    ])
    expect(await d.gauge('svcpay_reserve_delta', 'rail="lightning",ccy="BTC"')).toBe(-10_001)
    expect(await d.gauge('svcpay_reconciliation_orphans', 'rail="lightning"')).toBe(1)
    const cli = await d.cli('reconcile', '--json')
    expect(cli.code).not.toBe(0)
    expect(JSON.parse(cli.out).orphans).toEqual([
      expect.objectContaining({ rail: 'lightning', ref: outside.hash }),
    ])
  }, 30_000)

  it("money leaving the node's wallet and a deposit credited twice are found on the on-chain rail", async () => {
    // The operator (or a thief) spends from the hot wallet with Bitcoin Core's own sendtoaddress.
    const rpc = await fetch(`${core.url}/wallet/svcpay-hot`, {
      method: 'POST',
      headers: {
        authorization: 'Basic ' + Buffer.from(`${core.user}:${core.password}`).toString('base64'),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        jsonrpc: '1.0',
        id: 1,
        method: 'sendtoaddress',
        params: { address: ELSEWHERE, amount: '0.001' },
      }),
    })
    const txid = ((await rpc.json()) as { result: string }).result
    const fee = core.chain.txs.get(txid)!.feeSats
    // Unconfirmed, it has already left the balance; it is listed once it has the confirmations.
    let report = await d.report()
    expect(d.rail(report, 'onchain')).toMatchObject({
      status: 'deficit',
      delta: `-0.00${(100_000n + fee).toString().padStart(6, '0')}`,
    })
    core.chain.mine(2)
    report = await d.report()
    expect(d.orphans(report, 'onchain')).toEqual([
      expect.objectContaining({
        side: 'rail',
        reason: 'not_in_ledger',
        ref: txid,
        amount: `-0.00${(100_000n + fee).toString().padStart(6, '0')}`,
      }),
    ])
    // The first on-chain deposit (0.01) credited a second time: the books now claim 0.01 more.
    await creditTwice(h.c.db, depositTxn)
    report = await d.report()
    const missing = 100_000n + fee + 1_000_000n
    expect(d.rail(report, 'onchain')).toMatchObject({
      status: 'deficit',
      delta: `-0.0${missing.toString().padStart(7, '0')}`,
    })
    expect(d.orphans(report, 'onchain')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ side: 'ledger', reason: 'entry_without_transaction', amount: '0.01' }),
      ]),
    )
    expect(await d.gauge('svcpay_reserve_delta', 'rail="onchain",ccy="BTC"')).toBe(-Number(missing))
    expect(await d.gauge('svcpay_reconciliation_orphans', 'rail="onchain"')).toBe(2)
    // RECONCILE_HALT_AFTER=1: a deficit pauses the rail's sends.
    expect(report.pausedRails).toEqual(expect.arrayContaining(['lightning', 'onchain']))
  }, 30_000)
})

describe('reconciliation on Esplora (stand-in)', () => {
  let h: Harness
  let esplora: EsploraStandin
  let bob: TestAccount
  const d = driver(() => h)

  beforeAll(async () => {
    esplora = await startEsploraStandin()
    h = await createHarness({
      ONCHAIN: 'esplora',
      ESPLORA_URL: esplora.url,
      ONCHAIN_CONFIRMATIONS: '1',
      RAILS_CHECK_TIMEOUT_MS: '2000',
    })
    bob = await h.createAccount({ name: 'Bob' })
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await esplora?.close()
  })

  it("sums the handed-out addresses' outputs: zero after a receive, a deficit when money leaves one, an orphan for a double credit", async () => {
    const o = await d.create(bob, receive('on-chain', '0.003'))
    const address = o.sourceReq.reqDetails.address as string
    const paid = payFromOutside(esplora.chain, address, 300_000n)
    let onchain = d.rail(await d.report(), 'onchain')
    expect(onchain).toMatchObject({ adapter: 'esplora', reported: '0.003', incoming: '0.003', delta: '0' })
    esplora.chain.mine(1)
    await d.work(2)
    expect(await d.state(bob, o.txnId)).toBe('completed')
    let report = await d.report()
    expect(d.rail(report, 'onchain')).toMatchObject({
      ledger: '0.003',
      reported: '0.003',
      incoming: '0',
      delta: '0',
      status: 'ok',
    })
    expect(d.orphans(report, 'onchain')).toEqual([])
    expect(report.unmatched.map((u) => u.rail)).not.toContain('onchain')

    // The address's coin is spent elsewhere (a key that should not exist, or a sweep the books do not know).
    const spend = esplora.chain.makeTx({
      inputs: [{ txid: paid.txid, vout: 0 }],
      outputs: [{ address: ELSEWHERE, value: 299_000n }],
    })
    expect(esplora.chain.accept(spend)).toBeNull()
    onchain = d.rail(await d.report(), 'onchain')
    expect(onchain).toMatchObject({ reported: '0', delta: '-0.003', status: 'deficit' })

    await creditTwice(h.c.db, o.txnId)
    report = await d.report()
    expect(d.rail(report, 'onchain')).toMatchObject({ delta: '-0.006' })
    expect(d.orphans(report, 'onchain')).toEqual([
      expect.objectContaining({ side: 'ledger', reason: 'entry_without_transaction', amount: '0.003' }),
    ])
  }, 60_000)
})
