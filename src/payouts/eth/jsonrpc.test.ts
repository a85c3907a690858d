import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDb } from '../../../test/helpers/harness.js'
import { GethStandIn, GWEI, USDT_MAINNET } from '../../../test/standins/geth.js'
import { createPostgresDb, type Db } from '../../db/db.js'
import { migrate } from '../../db/migrate.js'
import { sql } from '../../db/sql.js'
import { RailFailure } from '../../rails/rail.js'
import { createEthJsonRpcRail, type EthJsonRpcOptions } from './jsonrpc.js'
import { addressOfPrivateKey, signEip1559, transferCallData } from './jsonrpc-tx.js'

const KEY = sha256(utf8ToBytes('svcpay eth jsonrpc test hot wallet'))
const HOT = addressOfPrivateKey(KEY)
const ETHER = 10n ** 18n
const TO = '0x' + '5a'.repeat(20)
const USDT = 1_000_000n
/** A cap well above what a transfer costs at 10 gwei (about 80,000 gas × 21 gwei). */
const CAP = 100_000n * 40n * GWEI

let db: Db
/** On PostgreSQL, the second worker's own connection pool to the same database. */
let db2: Db
let drop: () => Promise<void>
let node: GethStandIn
let clock: number

beforeAll(async () => {
  let url: string | undefined
  ;({ db, url, drop } = await createTestDb())
  await migrate(db)
  db2 = url ? createPostgresDb(url, { poolMax: 5 }) : db
})
afterAll(async () => {
  if (db2 !== db) await db2.close()
  await db.close()
  await drop()
})
beforeEach(async () => {
  await db.query(sql`DELETE FROM eth_send_txs`)
  await db.query(sql`DELETE FROM eth_sends`)
  await db.query(sql`DELETE FROM eth_nonces`)
  node = new GethStandIn()
  node.fund(HOT, 1n * ETHER, 10_000n * USDT)
  await node.start()
  clock = 1_700_000_000_000
})
afterEach(async () => {
  await node.stop()
})

function rail(overrides: Partial<EthJsonRpcOptions> = {}) {
  return createEthJsonRpcRail({
    db,
    url: node.url,
    privateKeyHex: bytesToHex(KEY),
    usdtContract: USDT_MAINNET,
    chainId: 1,
    confirmations: 3,
    replaceAfterMs: 60_000,
    timeoutMs: 500,
    now: () => clock,
    ...overrides,
  })
}

async function failure(promise: Promise<unknown>): Promise<RailFailure> {
  try {
    await promise
  } catch (err) {
    expect(err).toBeInstanceOf(RailFailure)
    return err as RailFailure
  }
  throw new Error('expected a RailFailure')
}

/** Mines the pool, builds `confirmations` on it and finalizes. */
function settle(): void {
  node.mine(3)
  node.finalize()
}

const sends = () => node.rawSent.length

describe.sequential('Ethereum JSON-RPC rail against the geth stand-in', () => {
  it('pays once: the receipt and the Transfer log make it complete, with the exact balances', async () => {
    const eth = rail()
    const { txHash } = await eth.sendUsdt({
      to: TO,
      amountMinor: 25n * USDT,
      requestId: 'r1',
      maxFeeWei: CAP,
    })
    expect(await eth.getTransfer('r1', { to: TO, amountMinor: 25n * USDT })).toEqual({
      status: 'pending',
      txHash,
    })
    node.mine(1)
    // Mined but neither finalized nor deep enough.
    expect((await eth.getTransfer('r1', { to: TO, amountMinor: 25n * USDT })).status).toBe('pending')
    settle()
    const state = await eth.getTransfer('r1', { to: TO, amountMinor: 25n * USDT })
    expect(state.status).toBe('completed')
    const s = node.state()
    expect(s.usdt.get(TO)).toBe(25n * USDT)
    expect(s.usdt.get(HOT)).toBe(10_000n * USDT - 25n * USDT)
    expect(s.eth.get(HOT)).toBe(ETHER - state.feeWei!)
    // The fee is what the receipt says: gas used × (base fee + tip).
    expect(state.feeWei).toBe((21_000n + gasOfData()) * 11n * GWEI)
    // A second call for the same request sends nothing new.
    expect(await eth.sendUsdt({ to: TO, amountMinor: 25n * USDT, requestId: 'r1', maxFeeWei: CAP })).toEqual({
      txHash,
    })
    expect(new Set(node.rawSent).size).toBe(1)
    const report = await eth.check!()
    expect(report.problems).toEqual([])
    expect(report.balances).toEqual({ ETH: expect.any(String), USDT: '9975' })
    expect(await eth.reserves!()).toEqual({
      balances: { USDT: 9_975n * USDT, ETH: ETHER - state.feeWei! },
      incoming: { USDT: 0n },
    })
    expect(await eth.payments!(0)).toEqual([
      { ref: txHash, direction: 'out', amountMinor: 25n * USDT, at: clock },
    ])
  })

  it('completes once when the answer to the broadcast was lost after the node took it', async () => {
    const eth = rail()
    node.server.faults.push({
      match: (r) => r.rpcMethod === 'eth_sendRawTransaction',
      fault: { kind: 'work-then-stall' },
      times: 1,
    })
    const lost = await failure(
      eth.sendUsdt({ to: TO, amountMinor: 7n * USDT, requestId: 'r2', maxFeeWei: CAP }),
    )
    expect([lost.code, lost.retryable]).toEqual(['eth_timeout', true])
    // The worker tries again: the same bytes, which the node already has.
    const { txHash } = await eth.sendUsdt({ to: TO, amountMinor: 7n * USDT, requestId: 'r2', maxFeeWei: CAP })
    expect(node.rawSent).toHaveLength(2)
    expect(node.rawSent[0]).toBe(node.rawSent[1])
    settle()
    expect((await eth.getTransfer('r2', { to: TO, amountMinor: 7n * USDT })).status).toBe('completed')
    expect(node.state().usdt.get(TO)).toBe(7n * USDT)
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/)
  })

  it('replaces a transaction the pool dropped with the same nonce and higher fees, and completes once', async () => {
    const eth = rail()
    const first = await eth.sendUsdt({ to: TO, amountMinor: 3n * USDT, requestId: 'r3', maxFeeWei: CAP })
    node.drop(first.txHash)
    // Before replaceAfterMs: the very same bytes go out again.
    expect(await eth.getTransfer('r3', { to: TO, amountMinor: 3n * USDT })).toEqual({
      status: 'pending',
      txHash: first.txHash,
    })
    expect(node.rawSent).toEqual([node.rawSent[0], node.rawSent[0]])
    node.drop(first.txHash)
    clock += 60_000
    const replaced = await eth.getTransfer('r3', { to: TO, amountMinor: 3n * USDT })
    expect(replaced.status).toBe('pending')
    expect(replaced.txHash).not.toBe(first.txHash)
    const pooled = node.pooled(replaced.txHash!)!
    expect(pooled.nonce).toBe(0n)
    // geth's 10% bump on both fields, from 21 gwei / 1 gwei.
    expect(pooled.maxFeePerGas).toBeGreaterThanOrEqual((21n * GWEI * 110n) / 100n)
    expect(pooled.maxPriorityFeePerGas).toBeGreaterThanOrEqual((1n * GWEI * 110n) / 100n)
    settle()
    const done = await eth.getTransfer('r3', { to: TO, amountMinor: 3n * USDT })
    expect(done).toMatchObject({ status: 'completed', txHash: replaced.txHash })
    expect(node.state().usdt.get(TO)).toBe(3n * USDT)
    // The payout keeps its first hash as its reference: asked again, and in what reconciliation reads.
    expect(await eth.sendUsdt({ to: TO, amountMinor: 3n * USDT, requestId: 'r3', maxFeeWei: CAP })).toEqual({
      txHash: first.txHash,
    })
    expect((await eth.payments!(0)).map((p) => p.ref)).toContain(first.txHash)
  })

  it('reports stuck, never over the cap, when the cap leaves no room for the bump', async () => {
    const eth = rail()
    // A cap that fits the first bid (21 gwei × gas limit) and not 10% more.
    const gasLimit = ((21_000n + 68n * 16n + 20_000n) * 12n) / 10n
    const tight = gasLimit * 22n * GWEI
    const first = await eth.sendUsdt({ to: TO, amountMinor: USDT, requestId: 'r4', maxFeeWei: tight })
    node.baseFee = 30n * GWEI
    clock += 60_000
    const state = await eth.getTransfer('r4', { to: TO, amountMinor: USDT })
    expect(state).toMatchObject({ status: 'pending', txHash: first.txHash })
    expect(state.stuck).toMatch(/fee cap/)
    for (const raw of node.rawSent) {
      const tx = [...node.pool.values()].flatMap((m) => [...m.values()]).find((t) => t.raw === raw)
      if (tx) expect(tx.maxFeePerGas * tx.gasLimit).toBeLessThanOrEqual(tight)
    }
  })

  it('bumps as long as the cap allows, then reports stuck; a stalled node is only retried', async () => {
    const eth = rail()
    const estimate = 21_000n + gasOfData(1n)
    const gasLimit = (estimate * 12n + 9n) / 10n
    // Room for one bump from 21 gwei (to at least 23.1), not for a second (25.41).
    const cap = gasLimit * 24n * GWEI
    const first = await eth.sendUsdt({ to: TO, amountMinor: 1n, requestId: 'c1', maxFeeWei: cap })
    node.baseFee = 40n * GWEI
    clock += 60_000
    const once = await eth.getTransfer('c1', { to: TO, amountMinor: 1n })
    expect(once.txHash).not.toBe(first.txHash)
    expect(once.stuck).toBeUndefined()
    const bumpedTx = node.pooled(once.txHash!)!
    expect([bumpedTx.nonce, bumpedTx.maxFeePerGas * bumpedTx.gasLimit <= cap]).toEqual([0n, true])
    // A stall: no answer in time, retryable, nothing changed.
    node.server.faults.push({ match: () => true, fault: { kind: 'stall' }, times: 1 })
    const stalled = await failure(eth.getTransfer('c1', { to: TO, amountMinor: 1n }))
    expect([stalled.code, stalled.retryable]).toEqual(['eth_timeout', true])
    clock += 60_000
    const sent = sends()
    const twice = await eth.getTransfer('c1', { to: TO, amountMinor: 1n })
    expect(twice).toMatchObject({
      status: 'pending',
      txHash: once.txHash,
      stuck: expect.stringMatching(/fee cap/),
    })
    expect(sends()).toBe(sent)
  })

  it('fails a transfer the chain reverted only once final, and never sends it again', async () => {
    const eth = rail()
    await eth.sendUsdt({ to: TO, amountMinor: 2n * USDT, requestId: 'r5', maxFeeWei: CAP })
    // Tether blacklists the hot wallet between the pre-flight and the block: the transfer reverts.
    node.blacklist.add(HOT)
    node.mine(1)
    expect((await eth.getTransfer('r5', { to: TO, amountMinor: 2n * USDT })).status).toBe('pending')
    settle()
    const state = await eth.getTransfer('r5', { to: TO, amountMinor: 2n * USDT })
    expect(state).toMatchObject({ status: 'failed', reason: 'transfer_reverted' })
    expect(state.feeWei).toBeGreaterThan(0n)
    const before = sends()
    clock += 600_000
    expect((await eth.getTransfer('r5', { to: TO, amountMinor: 2n * USDT })).status).toBe('failed')
    expect(sends()).toBe(before)
    expect(node.state().usdt.get(TO)).toBeUndefined()
  })

  it('refuses before signing: blacklisted recipient, paused token, short USDT or ETH, a reverting estimate', async () => {
    const eth = rail()
    node.blacklist.add(TO)
    const blacklisted = await failure(
      eth.sendUsdt({ to: TO, amountMinor: USDT, requestId: 'b1', maxFeeWei: CAP }),
    )
    expect([blacklisted.code, blacklisted.retryable]).toEqual(['recipient_blacklisted', false])
    node.blacklist.clear()
    node.paused = true
    expect(
      (await failure(eth.sendUsdt({ to: TO, amountMinor: USDT, requestId: 'b2', maxFeeWei: CAP }))).code,
    ).toBe('token_paused')
    node.paused = false
    expect(
      (await failure(eth.sendUsdt({ to: TO, amountMinor: 20_000n * USDT, requestId: 'b3', maxFeeWei: CAP })))
        .code,
    ).toBe('insufficient_hot_wallet_usdt')
    expect(
      (await failure(eth.sendUsdt({ to: TO, amountMinor: USDT, requestId: 'b4', maxFeeWei: 1_000n }))).code,
    ).toBe('fee_above_cap')
    node.fund(HOT, 1_000n, 10_000n * USDT)
    expect(
      (await failure(eth.sendUsdt({ to: TO, amountMinor: USDT, requestId: 'b5', maxFeeWei: CAP }))).code,
    ).toBe('insufficient_hot_wallet_eth')
    expect(node.rawSent).toEqual([])
    expect((await db.query(sql`SELECT 1 FROM eth_sends`)).rowCount).toBe(0)
    // No nonce was taken by the refusals: the next send has nonce 0.
    node.fund(HOT, ETHER, 10_000n * USDT)
    const { txHash } = await eth.sendUsdt({ to: TO, amountMinor: USDT, requestId: 'b6', maxFeeWei: CAP })
    expect(node.pooled(txHash)!.nonce).toBe(0n)
  })

  it('returns a reorged payout to pending and follows it to its new block', async () => {
    const eth = rail()
    const { txHash } = await eth.sendUsdt({ to: TO, amountMinor: 4n * USDT, requestId: 'r6', maxFeeWei: CAP })
    node.mine(3)
    expect((await eth.getTransfer('r6', { to: TO, amountMinor: 4n * USDT })).status).toBe('pending')
    // The three blocks are replaced by others without our transaction, which goes back to the pool.
    node.reorg(3)
    node.mine(3, { exclude: [txHash] })
    node.finalize()
    expect(await eth.getTransfer('r6', { to: TO, amountMinor: 4n * USDT })).toEqual({
      status: 'pending',
      txHash,
    })
    // A provider's lagging backend still serves the receipt from the block that is gone: not trusted.
    node.staleReceipts = true
    expect(await eth.getTransfer('r6', { to: TO, amountMinor: 4n * USDT })).toEqual({
      status: 'pending',
      txHash,
    })
    expect(node.state().usdt.get(TO)).toBeUndefined()
    settle()
    expect((await eth.getTransfer('r6', { to: TO, amountMinor: 4n * USDT })).status).toBe('completed')
    expect(node.state().usdt.get(TO)).toBe(4n * USDT)
    expect(new Set(node.rawSent).size).toBe(1)
  })

  it('gives parallel sends on two workers distinct, gap-free nonces', async () => {
    const workers = [rail(), rail({ db: db2 })]
    const count = 12
    const results = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        workers[i % 2]!.sendUsdt({ to: TO, amountMinor: BigInt(i + 1), requestId: `p${i}`, maxFeeWei: CAP }),
      ),
    )
    const { rows } = await db.query<{ nonce: bigint }>(sql`SELECT nonce FROM eth_sends ORDER BY nonce`)
    expect(rows.map((r) => Number(r.nonce))).toEqual(Array.from({ length: count }, (_, i) => i))
    settle()
    for (let i = 0; i < count; i++)
      expect(
        (await workers[(i + 1) % 2]!.getTransfer(`p${i}`, { to: TO, amountMinor: BigInt(i + 1) })).status,
      ).toBe('completed')
    expect(new Set(results.map((r) => r.txHash)).size).toBe(count)
    expect(node.state().usdt.get(TO)).toBe(BigInt((count * (count + 1)) / 2))
  })

  it('takes `nonce too low` for success when our transaction is the one mined, and refuses the wrong chain', async () => {
    const eth = rail()
    node.server.faults.push({
      match: (r) => r.rpcMethod === 'eth_sendRawTransaction',
      fault: { kind: 'work-then-stall' },
      times: 1,
    })
    await failure(eth.sendUsdt({ to: TO, amountMinor: 5n, requestId: 'n1', maxFeeWei: CAP }))
    node.mine(1)
    // The retry's broadcast meets `nonce too low`: ours is mined, so the send stands.
    const { txHash } = await eth.sendUsdt({ to: TO, amountMinor: 5n, requestId: 'n1', maxFeeWei: CAP })
    expect(node.rawSent).toHaveLength(2)
    settle()
    expect(await eth.getTransfer('n1', { to: TO, amountMinor: 5n })).toMatchObject({
      status: 'completed',
      txHash,
    })
    // Another amount under the same request is refused, never sent.
    expect(
      (await failure(eth.sendUsdt({ to: TO, amountMinor: 6n, requestId: 'n1', maxFeeWei: CAP }))).code,
    ).toBe('request_conflict')
    const wrong = await failure(
      rail({ chainId: 11155111 }).sendUsdt({ to: TO, amountMinor: 5n, requestId: 'n2', maxFeeWei: CAP }),
    )
    expect([wrong.code, wrong.retryable]).toEqual(['wrong_chain', false])
    expect(node.rawSent).toHaveLength(2)
  })

  it('check() names what keeps the rail from paying: chain, sync, finality, funds, Tether', async () => {
    node.chainId = 5n
    node.syncing = { currentBlock: 10n, highestBlock: 900n }
    node.paused = true
    node.fund(HOT, 0n)
    node.genesis.usdt.delete(HOT)
    const report = await rail().check!()
    expect(report).toMatchObject({
      rail: 'ethereum',
      adapter: 'jsonrpc',
      reachable: true,
      network: 'chain 5',
      synced: false,
    })
    expect(report.version).toMatch(/^Geth\//)
    expect(report.balances).toEqual({ ETH: '0', USDT: '0' })
    expect(report.problems).toEqual([
      'the node is on chain 5, the rail is configured for 1',
      'the node is syncing (block 10 of 900)',
      'the node has no finalized block: payouts cannot become final',
      expect.stringMatching(
        /^the hot wallet 0x[0-9a-fA-F]{40} holds 0 ETH, less than one transfer may cost now/,
      ),
      expect.stringMatching(/holds no USDT$/),
      'Tether has paused USDT transfers',
    ])
    await node.stop()
    const down = await rail().check!()
    expect([down.reachable, down.problems.length]).toEqual([false, 1])
    await node.start()
  })

  it('reports stuck, sending nothing more, when a transaction not ours took the nonce', async () => {
    const eth = rail()
    const ours = await eth.sendUsdt({ to: TO, amountMinor: 9n, requestId: 'f1', maxFeeWei: CAP })
    node.drop(ours.txHash)
    // The same key used elsewhere: another transfer with nonce 0, mined.
    const foreign = signEip1559(
      {
        chainId: 1n,
        nonce: 0n,
        maxPriorityFeePerGas: 2n * GWEI,
        maxFeePerGas: 30n * GWEI,
        gasLimit: 100_000n,
        to: USDT_MAINNET,
        data: transferCallData('0x' + '77'.repeat(20), 1n),
      },
      KEY,
    )
    await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_sendRawTransaction',
        params: [foreign.raw],
      }),
    })
    settle()
    const before = sends()
    clock += 600_000
    const state = await eth.getTransfer('f1', { to: TO, amountMinor: 9n })
    expect(state).toMatchObject({ status: 'pending', txHash: ours.txHash })
    expect(state.stuck).toMatch(/nonce 0 .* none of this payout's/)
    expect(sends()).toBe(before)
    const { rows } = await db.query<{ stuck: string }>(
      sql`SELECT stuck FROM eth_sends WHERE request_id = 'f1'`,
    )
    expect(rows[0]!.stuck).toBe(state.stuck)
  })

  it('fills a gap: a lower nonce the node lost is broadcast again so the higher one can be mined', async () => {
    const eth = rail()
    const a = await eth.sendUsdt({ to: TO, amountMinor: 1n, requestId: 'g0', maxFeeWei: CAP })
    const b = await eth.sendUsdt({ to: TO, amountMinor: 2n, requestId: 'g1', maxFeeWei: CAP })
    await node.restart()
    // A connection kept alive across the restart may be reset: a retryable failure, asked again.
    await eth.getTransfer('g1', { to: TO, amountMinor: 2n }).catch((err: RailFailure) => {
      expect(err.retryable).toBe(true)
    })
    // Only the higher one's poll: it finds the gap below it and fills it with our stored nonce-0 transaction.
    await eth.getTransfer('g1', { to: TO, amountMinor: 2n })
    expect(node.pooled(a.txHash)).toBeDefined()
    expect(node.pooled(b.txHash)).toBeDefined()
    settle()
    expect((await eth.getTransfer('g0', { to: TO, amountMinor: 1n })).status).toBe('completed')
    expect((await eth.getTransfer('g1', { to: TO, amountMinor: 2n })).status).toBe('completed')
  })
})

/** The execution gas of a transfer to a new holder in the stand-in, given the tx (for the fee check). */
function gasOfData(amount = 25n * USDT): bigint {
  // calldata: selector (4 non-zero) + address word (12 zero, 20 non-zero 0x5a) + amount word.
  const amountHex = amount.toString(16).padStart(64, '0')
  let data = 4n * 16n + 12n * 4n + 20n * 16n
  for (let i = 0; i < 64; i += 2) data += amountHex.slice(i, i + 2) === '00' ? 4n : 16n
  return data + 37_400n
}
