import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { createBase58check } from '@scure/base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import {
  finishCase,
  historyProblems,
  moneyProblems,
  stuckTransactions,
} from '../../test/helpers/invariants.js'
import { tronHexOfKey, TronGridStandIn, TRANSFER_ENERGY_TO_NEW_HOLDER } from '../../test/standins/trongrid.js'
import { runDueTransactions } from '../transactions/worker.js'

/**
 * USDT payouts through the real TRON adapter (TRON=trongrid) against the TronGrid stand-in, which
 * runs Tether's contract as mainnet does (a successful transfer returns 32 zero bytes). Only the
 * node is simulated: each payout goes through our HTTP API, the worker, the adapter and a socket,
 * through the node's faults, and every case ends with the books, the invariants and the exact
 * balances the chain implies.
 */
const base58check = createBase58check(sha256)
const HOT_KEY = sha256(utf8ToBytes('svcpay tron payout flow hot wallet'))
const HOT_HEX = tronHexOfKey(HOT_KEY)
const TRX = 1_000_000n
const USDT = 1_000_000n
const HOT_USDT = 1_000n * USDT
const HOT_TRX = 200n * TRX

/** A fresh valid TRON address (hex and base58) per name. */
function recipient(name: string): { hex: string; address: string } {
  const hex = '41' + bytesToHex(sha256(utf8ToBytes(`recipient ${name}`))).slice(0, 40)
  return { hex, address: base58check.encode(hexToBytes(hex)) }
}

describe('USDT payouts through the TronGrid adapter, against a truthful node', () => {
  let h: Harness
  let a: TestAccount
  let node: TronGridStandIn
  let clock = Date.now()

  beforeAll(async () => {
    node = new TronGridStandIn()
    node.produceBlocks(30)
    node.account(HOT_HEX).balance = HOT_TRX
    node.usdt.set(HOT_HEX, HOT_USDT)
    await node.start()
    h = await createHarness({
      TRON: 'trongrid',
      TRONGRID_URL: node.url,
      TRONGRID_API_KEY: 'flow-test-key',
      TRON_HOT_WALLET_PRIVATE_KEY: bytesToHex(HOT_KEY),
    })
    a = await h.createAccount({ name: 'TRON payer' })
    await h.fund(a.accountId, 'USDT', '5000')
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await node?.stop()
  })

  // A real node is asked again after 15 s; each pass of the worker runs a minute later than the last.
  const work = () => {
    clock += 60_000
    return runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console, now: () => clock })
  }
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const wallet = async () =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (w: any) => w.ccy === 'USDT',
    )

  async function payout(to: string, amount: number): Promise<string> {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'USDT', method: 'tron', amtRequested: amount, reqDetails: { address: to } },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    return q.body.txnId as string
  }

  /** The sum, in sun, of the TRX fees the payouts recorded. */
  async function recordedTrxSun(): Promise<bigint> {
    const { rows } = await h.c.db.query<{ fee: string | null }>(
      `SELECT dest_details->'chainFeeTrx'->>'$dec' AS fee FROM transactions WHERE kind = 'tron_payout'`,
    )
    let total = 0n
    for (const { fee } of rows) {
      if (fee === null) continue
      const [whole, frac = ''] = fee.split('.')
      total += BigInt(whole!) * TRX + BigInt(frac.padEnd(6, '0'))
    }
    return total
  }

  async function invariants(name: string, ops: number) {
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
    expect(await stuckTransactions(h.c.db)).toEqual([])
    await finishCase(name, h.c.db, { ops })
  }

  /**
   * Every transaction the chain holds from the hot wallet is exactly one payout's txHash, and the
   * chain agrees with each payout's outcome: a completed payout's recipient holds its amount, and
   * nothing else left the hot wallet.
   */
  async function chainExplained() {
    const { rows } = await h.c.db.query<{
      id: string
      state: string
      rail_ref: string | null
      dest_amount: bigint
    }>(`SELECT id, state, rail_ref, dest_amount FROM transactions WHERE kind = 'tron_payout'`)
    const byHash = new Map(rows.filter((r) => r.rail_ref).map((r) => [r.rail_ref!, r]))
    let paid = 0n
    for (const [txId, { blockNumber }] of node.txs) {
      const txn = byHash.get(txId)
      expect(txn, `chain transaction ${txId} (block ${blockNumber}) belongs to no payout`).toBeDefined()
      const result = (node.infos.get(txId)!.receipt as { result: string }).result
      expect([txn!.id, txn!.state]).toEqual([txn!.id, result === 'SUCCESS' ? 'completed' : 'failed'])
      if (result === 'SUCCESS') paid += BigInt(txn!.dest_amount)
    }
    for (const txn of rows)
      if (txn.state === 'completed')
        expect(node.txs.has(txn.rail_ref!), `${txn.id} completed off-chain`).toBe(true)
    expect(node.usdt.get(HOT_HEX)).toBe(HOT_USDT - paid)
    expect(node.account(HOT_HEX).balance).toBe(HOT_TRX - (await recordedTrxSun()))
  }

  it('svcpay rails check finds the node ready; one held to another network is not', async () => {
    // What `svcpay rails check` and GET /admin/rails report.
    const tron = (await h.c.checkRails()).rails.find((r) => r.rail === 'tron')
    expect(tron).toMatchObject({
      adapter: 'trongrid',
      verdict: 'ok',
      problems: [],
      report: {
        reachable: true,
        version: '4.8.0',
        network: 'mainnet',
        synced: true,
        balances: { TRX: '200', USDT: '1000' },
      },
    })

    const nile = await createHarness(
      {
        TRON: 'trongrid',
        TRONGRID_URL: node.url,
        TRONGRID_API_KEY: 'flow-test-key',
        TRON_HOT_WALLET_PRIVATE_KEY: bytesToHex(HOT_KEY),
        TRON_NETWORK: 'nile',
        TRON_USDT_CONTRACT: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      },
      { shareDbWith: h },
    )
    try {
      const wrong = (await nile.c.checkRails()).rails.find((r) => r.rail === 'tron')
      expect(wrong).toMatchObject({
        verdict: 'problem',
        problems: ['the node is on mainnet, TRON_NETWORK is nile'],
      })
    } finally {
      await nile.close()
    }
  })

  it('completes a transfer Tether executed (its transfer() returns 32 zero bytes) once solidified, paid once', async () => {
    const r1 = recipient('one')
    const before = await wallet()
    const txnId = await payout(r1.address, 100)
    await work()
    const sent = await get(txnId)
    expect(sent.txnState).toBe('destsent')
    const txHash = sent.destReq.reqDetails.txHash
    expect(node.pool.has(txHash)).toBe(true)

    node.produceBlocks(1)
    await work()
    // In a block, not yet solidified: the payout waits.
    expect((await get(txnId)).txnState).toBe('destsent')
    expect(node.infos.get(txHash)!.contractResult).toEqual(['0'.repeat(64)])

    node.solidify()
    await work()
    const done = await get(txnId)
    expect([done.txnState, done.msg]).toEqual(['completed', ''])
    // 100 USDT, 0.2% service fee and the quoted 1 USDT network fee left the wallet, once.
    expect([done.sourceReq.amtSettled, done.sourceReq.svcpayFees, done.sourceReq.networkFees]).toEqual([
      100, 0.2, 1,
    ])
    const after = await wallet()
    expect(after.amount).toBe(Number((before.amount - 101.2).toFixed(6)))
    expect(after.availableBalance).toBe(after.amount)
    // What the chain charged the hot wallet in TRX is recorded with the payout, as information.
    expect(done.destReq.reqDetails).toMatchObject({
      address: r1.address,
      txHash,
      chainFeeTrx: 13.0285,
      chainEnergyFeeTrx: 13.0285,
      chainBandwidthFeeTrx: 0,
      chainEnergyUsed: Number(TRANSFER_ENERGY_TO_NEW_HOLDER),
      chainBandwidthUsed: 345,
    })
    expect(node.usdt.get(r1.hex)).toBe(100n * USDT)
    await chainExplained()
    await invariants('TRON payout completed on Tether’s zero return value', 1)
  })

  it('refuses a payout the hot wallet cannot fund: failed, funds released, nothing broadcast or burned', async () => {
    const r = recipient('unfunded')
    const before = await wallet()
    const trx = node.account(HOT_HEX).balance
    node.account(HOT_HEX).balance = 3n * TRX
    try {
      const txnId = await payout(r.address, 50)
      await work()
      const t = await get(txnId)
      expect([t.txnState, t.msg]).toEqual(['failed', 'hot_wallet_insufficient_trx'])
      expect(t.destReq.reqDetails.txHash).toBeUndefined()
      expect(node.account(HOT_HEX).balance).toBe(3n * TRX)

      node.account(HOT_HEX).balance = trx
      const tooMuch = await payout(r.address, 1_000)
      await work()
      expect([(await get(tooMuch)).txnState, (await get(tooMuch)).msg]).toEqual([
        'failed',
        'hot_wallet_insufficient_usdt',
      ])
    } finally {
      node.account(HOT_HEX).balance = trx
    }
    expect(node.pool.size).toBe(0)
    const after = await wallet()
    expect([after.amount, after.availableBalance]).toEqual([before.amount, before.availableBalance])
    await chainExplained()
    await invariants('TRON payouts the hot wallet cannot fund', 2)
  })

  it('survives 5xx, a stalled broadcast, a node restart, an expired transfer, a revert and a lagging solidity view', async () => {
    const [r2, r3, r4, r5] = ['two', 'three', 'four', 'five'].map(recipient) as ReturnType<typeof recipient>[]
    const before = await wallet()
    const mark = node.requests.length

    // A gateway 503 on the first broadcast: retried with the same signed transaction.
    node.fault('/wallet/broadcasttransaction', { kind: 'status', status: 503 })
    const p2 = await payout(r2!.address, 50)
    await work()
    expect((await get(p2)).txnState).toBe('srccreated')
    await work()
    expect((await get(p2)).txnState).toBe('destsent')

    // The node takes the next broadcast and the answer never comes (a 10 s time-out).
    // (p2's own look at the chain re-broadcasts p2, which the node already holds: not that one.)
    node.fault('/wallet/broadcasttransaction', {
      kind: 'work-then-stall',
      match: (body) => !node.pool.has(String(body.txID)),
    })
    const p3 = await payout(r3!.address, 20)
    await work()
    expect((await get(p3)).txnState).toBe('srccreated')
    await work()
    expect((await get(p3)).txnState).toBe('destsent')
    expect(node.pool.size).toBe(2)

    // The node restarts and forgets both; the next look hands each the same transaction again.
    await node.restart()
    await work()
    expect(node.pool.size).toBe(2)
    node.produceBlocks(1)
    const minedAt = node.head.number

    // Meanwhile the token refuses the hot wallet for one block: that transfer reverts and burns TRX.
    const p5 = await payout(r5!.address, 5)
    await work()
    node.blacklisted.add(HOT_HEX)
    node.produceBlocks(1)
    node.blacklisted.delete(HOT_HEX)

    // A transfer a restarted node lost, seen again only after it expired: nothing was paid.
    const p4 = await payout(r4!.address, 30)
    await work()
    expect((await get(p4)).txnState).toBe('destsent')
    await node.restart()

    // The solidity view stalls while the full node moves on; then answers 500 once.
    node.solidFrozen = minedAt - 1
    node.produceBlocks(45)
    node.fault('/walletsolidity/gettransactioninfobyid', { kind: 'status', status: 500 })
    await work()
    expect([(await get(p2)).txnState, (await get(p3)).txnState, (await get(p5)).txnState]).toEqual([
      'destsent',
      'destsent',
      'destsent',
    ])
    const expired = await get(p4)
    expect([expired.txnState, expired.msg]).toEqual(['failed', 'transaction_expired'])

    node.solidFrozen = undefined
    node.solidify()
    await work()
    const [t2, t3, t5] = [await get(p2), await get(p3), await get(p5)]
    expect([t2.txnState, t3.txnState]).toEqual(['completed', 'completed'])
    expect([t5.txnState, t5.msg]).toEqual(['failed', 'transfer_reverted'])
    expect(t5.destReq.reqDetails.chainFeeTrx).toBeGreaterThan(0)

    // The customer paid for p2 and p3 only; the chain moved exactly those.
    const after = await wallet()
    expect(after.amount).toBe(Number((before.amount - 50.1 - 1 - 20.04 - 1).toFixed(6)))
    expect(after.availableBalance).toBe(after.amount)
    expect([
      node.usdt.get(r2!.hex),
      node.usdt.get(r3!.hex),
      node.usdt.get(r4!.hex),
      node.usdt.get(r5!.hex),
    ]).toEqual([50n * USDT, 20n * USDT, undefined, undefined])
    // Four transfers built and signed, one per payout, whatever was retried.
    expect(
      node
        .paths()
        .slice(mark)
        .filter((path) => path === '/wallet/triggersmartcontract'),
    ).toHaveLength(4)
    await chainExplained()
    await invariants('TRON payouts through node faults', 4)
  }, 60_000)

  it('a SUCCESS that is not this payout’s Transfer (Tether’s fee switched on) waits for a person, funds held', async () => {
    const r6 = recipient('six')
    const before = await wallet()
    node.basisPointsRate = 10n // 0.1%, paid to Tether out of the amount
    node.maximumFee = 50n * USDT
    try {
      const txnId = await payout(r6.address, 10)
      await work()
      node.produceBlocks(1)
      node.solidify()
      await work()
      const t = await get(txnId)
      expect([t.txnState, t.msg]).toEqual(['error', 'transfer_unverified'])
      // Money left the hot wallet, but not as the payout said: neither completed nor refunded.
      expect([node.usdt.get(r6.hex), node.usdt.get(node.tetherOwner)]).toEqual([9_990_000n, 10_000n])
      const after = await wallet()
      expect(after.amount).toBe(before.amount)
      expect(after.availableBalance).toBe(Number((before.availableBalance - 10.02 - 1).toFixed(6)))
      // The one open hold is this payout's, which an operator settles.
      expect(await moneyProblems(h.c.db)).toEqual([`${txnId} (tron_payout) is error with an open hold`])
      expect(await historyProblems(h.c.db)).toEqual([])
      await finishCase('TRON payout whose Transfer is not the payout’s', h.c.db, { ops: 1 })
    } finally {
      node.basisPointsRate = 0n
      node.maximumFee = 0n
    }
  })
})
