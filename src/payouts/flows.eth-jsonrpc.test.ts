import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { finishCase, historyProblems, moneyProblems } from '../../test/helpers/invariants.js'
import { GethStandIn } from '../../test/standins/geth.js'
import { runDueTransactions } from '../transactions/worker.js'
import { addressOfPrivateKey } from './eth/jsonrpc-tx.js'

/**
 * USDT payouts over Ethereum through the real adapter (ETH=jsonrpc) against the geth stand-in:
 * each payout goes through the HTTP API, the quote's fee from the node, the hold, the worker, the
 * adapter and a socket, and ends with the books and the exact balances the chain implies.
 */
const KEY = sha256(utf8ToBytes('svcpay eth payout flow hot wallet'))
const HOT = addressOfPrivateKey(KEY)
const ETHER = 10n ** 18n
const USDT = 1_000_000n
const HOT_USDT = 10_000n * USDT

describe(`payouts: USDT over Ethereum through the JSON-RPC adapter (${ENGINE})`, () => {
  let h: Harness
  let a: TestAccount
  let node: GethStandIn
  let clock = Date.now()

  beforeAll(async () => {
    node = new GethStandIn()
    node.fund(HOT, ETHER, HOT_USDT)
    await node.start()
    h = await createHarness({
      ETH: 'jsonrpc',
      ETH_RPC_URL: node.url,
      ETH_HOT_WALLET_PRIVATE_KEY: bytesToHex(KEY),
      ETH_CONFIRMATIONS: '3',
    })
    a = await h.createAccount({ name: 'Ethereum payer' })
    await h.fund(a.accountId, 'USDT', '1000')
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await node?.stop()
  })

  // Each pass of the worker runs a minute later than the last (a real node is asked again later).
  const work = () => {
    clock += 60_000
    return runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console, now: () => clock })
  }
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const settle = () => {
    node.mine(3)
    node.finalize()
  }

  async function payout(to: string, amount: number): Promise<string> {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'USDT', method: 'eth', amtRequested: amount, reqDetails: { address: to } },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    // The network fee is quoted from the node's fees, in USDT.
    expect(q.body.sourceReq.networkFees).toBeGreaterThan(0)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    return q.body.txnId as string
  }

  async function invariants(name: string, ops: number) {
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
    await finishCase(name, h.c.db, { ops })
  }

  it('pays once, completes when final, with the exact balances the chain implies', async () => {
    const to = '0x' + '5b'.repeat(20)
    const txnId = await payout(to, 25)
    await work()
    const sent = await get(txnId)
    expect(sent.txnState).toBe('destsent')
    expect(node.rawSent).toHaveLength(1)
    // Mined but not final: still in flight.
    node.mine(1)
    await work()
    expect((await get(txnId)).txnState).toBe('destsent')
    settle()
    await work()
    const done = await get(txnId)
    expect(done.txnState).toBe('completed')
    expect(done.destReq.reqDetails.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const chain = node.state()
    expect(chain.usdt.get(to)).toBe(25n * USDT)
    expect(chain.usdt.get(HOT)).toBe(HOT_USDT - 25n * USDT)
    await work()
    expect(node.rawSent).toHaveLength(1)
    await invariants('eth payout through jsonrpc', 1)
  }, 60_000)

  it('completes once when the answer to the broadcast was lost after the node took it', async () => {
    const to = '0x' + '5c'.repeat(20)
    const before = node.state().usdt.get(HOT)!
    const sentBefore = node.rawSent.length
    node.server.faults.push({
      match: (r) => r.rpcMethod === 'eth_sendRawTransaction',
      fault: { kind: 'work-then-stall' },
      times: 1,
    })
    const txnId = await payout(to, 7)
    await work()
    expect((await get(txnId)).txnState).toBe('srccreated')
    await work()
    expect((await get(txnId)).txnState).toBe('destsent')
    // The very same signed bytes twice: one transaction on the chain.
    const raws = node.rawSent.slice(sentBefore)
    expect(raws).toHaveLength(2)
    expect(raws[0]).toBe(raws[1])
    settle()
    await work()
    expect((await get(txnId)).txnState).toBe('completed')
    expect(node.state().usdt.get(to)).toBe(7n * USDT)
    expect(node.state().usdt.get(HOT)).toBe(before - 7n * USDT)
    await invariants('eth payout whose broadcast answer was lost', 1)
  }, 60_000)
})
