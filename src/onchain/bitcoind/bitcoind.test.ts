/**
 * The bitcoind adapter against a local HTTP server that answers as Bitcoin Core's JSON-RPC 1.0
 * does: `{ result, error, id }`, HTTP 500 with the error object for RPC errors, a bare 401 for bad
 * credentials, and amounts as BTC numbers with eight decimals.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

import { RailFailure } from '../../rails/rail.js'
import { btcToSats, createBitcoindRail, descriptorChecksum, satsToBtcText } from './bitcoind.js'
import { deriveAccountXpub, deriveReceiveAddress, newMasterKey } from '../../bitcoin/bip84.js'
import { payFromOutside } from '../../../test/standins/chain.js'
import { startBitcoindStandin, type BitcoindStandin } from '../../../test/standins/bitcoind.js'

interface Call {
  path: string
  authorization: string | undefined
  jsonrpc: string
  id: string
  method: string
  params: unknown
}

/** What the fake node answers: a result, an RPC error, raw text, or nothing at all. */
type Answer =
  | { result: unknown }
  | { error: { code: number; message: string } }
  | { raw: string; status: number }
  | { hang: true }

const servers: http.Server[] = []
const stands: BitcoindStandin[] = []

afterEach(async () => {
  for (const stand of stands.splice(0)) await stand.close()
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

async function fakeBitcoind(
  answer: (call: Call) => Answer | Promise<Answer>,
): Promise<{ url: string; calls: Call[] }> {
  const calls: Call[] = []
  const server = http.createServer((req, res) => {
    let text = ''
    req.on('data', (c: Buffer) => (text += c.toString()))
    req.on('end', async () => {
      const body = JSON.parse(text) as { jsonrpc: string; id: string; method: string; params: unknown }
      const call = { path: req.url!, authorization: req.headers.authorization, ...body }
      calls.push(call)
      const a = await answer(call)
      if ('hang' in a) return
      if ('raw' in a) return res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.raw)
      // JSON-RPC 1.0: an RPC error travels with HTTP 500 (404 for an unknown method).
      const status = 'error' in a ? (a.error.code === -32601 ? 404 : 500) : 200
      const out =
        'error' in a
          ? { result: null, error: a.error, id: body.id }
          : { result: a.result, error: null, id: body.id }
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(out) + '\n')
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls }
}

function rail(url: string, timeoutMs = 2000, network: 'regtest' | 'mainnet' = 'regtest') {
  return createBitcoindRail({
    url,
    user: 'svcpay',
    password: 's3cret:with:colons',
    wallet: 'svcpay-hot',
    watchWallet: 'svcpay-watch',
    network,
    timeoutMs,
  })
}

async function failureOf(promise: Promise<unknown>): Promise<RailFailure> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(RailFailure)
  return err as RailFailure
}

const ADDRESS = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080'
const OTHER = 'bcrt1q9vza2e8x573nczrlzms0wvx3gsqjx7vaxwd45v'
/** Valid regtest addresses of outside parties. */
const PAYEE = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
const PAYEE2 = 'bcrt1q3zxmh4ue370cp48c9d8eeek43qhnzzhvquj2zm'
const TXID_A = 'a'.repeat(64)
const TXID_B = 'b'.repeat(64)
const TXID_C = 'c'.repeat(64)

describe('descriptorChecksum (BIP 380)', () => {
  it('matches the BIP 380 example and Bitcoin Core descriptor_tests vectors', () => {
    expect(descriptorChecksum('raw(deadbeef)')).toBe('89f8spxm')
    const prv =
      "sh(multi(2,[00000000/111'/222]xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc,xprv9uPDJpEQgRQfDcW7BkF7eTya6RPxXeJCqCJGHuCJ4GiRVLzkTXBAJMu2qaMWPrS7AANYqdq6vcBcBUdJCVVFceUvJFjaPdGZ2y9WACViL4L/0))"
    const pub =
      "sh(multi(2,[00000000/111'/222]xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL,xpub68NZiKmJWnxxS6aaHmn81bvJeTESw724CRDs6HbuccFQN9Ku14VQrADWgqbhhTHBaohPX4CjNLf9fq9MYo6oDaPPLPxSb7gwQN3ih19Zm4Y/0))"
    expect(descriptorChecksum(prv)).toBe('ggrsrxfy')
    expect(descriptorChecksum(pub)).toBe('tjg09x5t')
  })

  it('refuses characters outside the descriptor alphabet', () => {
    expect(() => descriptorChecksum('raw(Ü)')).toThrow(RailFailure)
  })
})

describe('BTC amounts', () => {
  it('converts exactly in both directions, including values a float cannot hold', () => {
    expect(btcToSats('0.00150000')).toBe(150_000n)
    expect(btcToSats('20999999.99999999')).toBe(2_099_999_999_999_999n)
    expect(btcToSats('-0.00000141')).toBe(-141n)
    expect(btcToSats('1e-05')).toBe(1_000n)
    expect(() => btcToSats('0.000000001')).toThrow(RailFailure)
    expect(satsToBtcText(150_000n)).toBe('0.00150000')
    expect(satsToBtcText(2_099_999_999_999_999n)).toBe('20999999.99999999')
  })
})

describe('createBitcoindRail', () => {
  it('lists receipts to an address, mempool included, with exact amounts', async () => {
    const raw = `{"result":[
      {"involvesWatchonly":true,"address":"${ADDRESS}","parent_descs":["addr(${ADDRESS})#xxxxxxxx"],"category":"receive","amount":0.00150000,"label":"${ADDRESS}","vout":1,"confirmations":0,"trusted":false,"txid":"${TXID_A}","wtxid":"${TXID_A}","walletconflicts":[],"time":1700000000,"timereceived":1700000000,"bip125-replaceable":"yes"},
      {"involvesWatchonly":true,"address":"${ADDRESS}","category":"receive","amount":20999999.99999999,"label":"${ADDRESS}","vout":0,"confirmations":3,"blockhash":"${'0'.repeat(64)}","blockheight":120,"blockindex":1,"blocktime":1700000600,"txid":"${TXID_B}","time":1700000500,"timereceived":1700000500,"bip125-replaceable":"no"},
      {"involvesWatchonly":true,"address":"${ADDRESS}","category":"receive","amount":0.5,"label":"${ADDRESS}","vout":0,"confirmations":-2,"trusted":false,"txid":"${TXID_C}","walletconflicts":["${TXID_B}"],"time":1700000400,"timereceived":1700000400},
      {"involvesWatchonly":true,"address":"${OTHER}","category":"receive","amount":0.1,"label":"${ADDRESS}","vout":2,"confirmations":1,"txid":"${TXID_C}","time":1700000400,"timereceived":1700000400}
    ],"error":null,"id":"svcpay-1"}`
    const node = await fakeBitcoind(() => ({ raw, status: 200 }))
    const outputs = await rail(node.url).listOutputs(ADDRESS)
    expect(outputs).toEqual([
      { txid: TXID_A, vout: 1, amountSats: 150_000n, confirmations: 0 },
      {
        txid: TXID_B,
        vout: 0,
        amountSats: 2_099_999_999_999_999n,
        confirmations: 3,
        blockHash: '0'.repeat(64),
      },
    ])
    expect(node.calls[0]).toMatchObject({
      path: '/wallet/svcpay-watch',
      method: 'listtransactions',
      params: { label: ADDRESS, count: 500, skip: 0, include_watchonly: true },
    })
  })

  it('names who paid from getrawtransaction verbosity 2 prevouts, none when the node has no such transaction', async () => {
    // The shape of src/rpc/rawtransaction.cpp getrawtransaction, TxToJSON SHOW_DETAILS_AND_PREVOUT.
    const raw = `{"result":{"txid":"${TXID_A}","vin":[
      {"txid":"${TXID_B}","vout":0,"prevout":{"generated":false,"height":101,"value":0.002,"scriptPubKey":{"asm":"","desc":"","hex":"","address":"${OTHER}","type":"witness_v0_keyhash"}}},
      {"txid":"${TXID_C}","vout":1,"prevout":{"generated":false,"height":99,"value":0.1,"scriptPubKey":{"asm":"","hex":"6a","type":"nulldata"}}}
    ],"vout":[]},"error":null,"id":"svcpay-1"}`
    const node = await fakeBitcoind(() => ({ raw, status: 200 }))
    expect(await rail(node.url).payersOf!(TXID_A, 'f'.repeat(64))).toEqual([OTHER])
    expect(node.calls[0]).toMatchObject({
      path: '/',
      method: 'getrawtransaction',
      params: { txid: TXID_A, verbosity: 2, blockhash: 'f'.repeat(64) },
    })
    const missing = await fakeBitcoind(() => ({
      raw: '{"result":null,"error":{"code":-5,"message":"No such mempool transaction. Use -txindex or provide a block hash to enable blockchain transaction queries. Use gettransaction for wallet transactions."},"id":"svcpay-1"}',
      status: 500,
    }))
    expect(await rail(missing.url).payersOf!(TXID_A)).toEqual([])
  })

  it('converts estimatesmartfee BTC/kvB to whole sat/vB, rounding up, at least 1', async () => {
    let feerate = '0.00012345'
    const node = await fakeBitcoind(() => ({
      raw: `{"result":{"feerate":${feerate},"blocks":6},"error":null,"id":"x"}`,
      status: 200,
    }))
    const onchain = rail(node.url)
    expect(await onchain.estimateFeeRate(6)).toBe(13n)
    feerate = '0.00001000'
    expect(await onchain.estimateFeeRate(6)).toBe(1n)
    feerate = '0.00000500'
    expect(await onchain.estimateFeeRate(6)).toBe(1n)
    await onchain.estimateFeeRate(5000)
    await onchain.estimateFeeRate(0)
    expect(node.calls.map((c) => c.params)).toEqual([[6], [6], [6], [1008], [1]])
    expect(node.calls[0]!.method).toBe('estimatesmartfee')
  })

  it('without an estimate: 1 sat/vB on regtest, a retryable failure elsewhere', async () => {
    const node = await fakeBitcoind(() => ({
      result: { errors: ['Insufficient data or no feerate found'], blocks: 0 },
    }))
    expect(await rail(node.url).estimateFeeRate(3)).toBe(1n)
    const failure = await failureOf(rail(node.url, 2000, 'mainnet').estimateFeeRate(3))
    expect([failure.code, failure.retryable]).toEqual(['fee_estimate_unavailable', true])
  })
})

describe('createBitcoindRail: errors', () => {
  it('maps RPC errors to short codes and retryability', async () => {
    let error = { code: -6, message: 'Insufficient funds' }
    const node = await fakeBitcoind((call) =>
      call.method === 'listtransactions' ? { result: [] } : { error },
    )
    const onchain = rail(node.url)
    const send = () =>
      onchain.send({ address: OTHER, amountSats: 1_000n, feeRateSatPerVb: 1n, requestId: 'r' })
    const cases: [{ code: number; message: string }, string, boolean][] = [
      [{ code: -6, message: 'Insufficient funds' }, 'insufficient_funds', false],
      [{ code: -6, message: 'Transaction amount too small' }, 'amount_too_small', false],
      [
        { code: -6, message: 'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)' },
        'fee_too_high',
        false,
      ],
      [{ code: -5, message: 'Invalid address' }, 'invalid_address', false],
      [{ code: -3, message: 'Invalid amount' }, 'invalid_amount', false],
      [
        { code: -13, message: 'Error: Please enter the wallet passphrase with walletpassphrase first.' },
        'wallet_locked',
        true,
      ],
      [{ code: -18, message: 'Requested wallet does not exist or is not loaded' }, 'wallet_not_loaded', true],
      [{ code: -28, message: 'Loading block index…' }, 'node_unavailable', true],
      [{ code: -1, message: 'something unexpected' }, 'node_error', false],
    ]
    for (const [rpcError, code, retryable] of cases) {
      error = rpcError
      const failure = await failureOf(send())
      expect([failure.code, failure.retryable]).toEqual([code, retryable])
    }
  })

  it('refuses bad credentials without retrying', async () => {
    const node = await fakeBitcoind(() => ({ raw: '', status: 401 }))
    const failure = await failureOf(rail(node.url).estimateFeeRate(2))
    expect([failure.code, failure.retryable]).toEqual(['unauthorized', false])
  })
})

describe('createBitcoindRail: time-outs', () => {
  it('times out on a node that never answers, retryably and within the deadline', async () => {
    const node = await fakeBitcoind(() => ({ hang: true }))
    const started = Date.now()
    const failure = await failureOf(rail(node.url, 250).getTransaction(TXID_A))
    expect([failure.code, failure.retryable]).toEqual(['node_timeout', true])
    expect(Date.now() - started).toBeLessThan(1000)
  })
})

/** A Bitcoin Core stand-in with a funded hot wallet, and the rail on it with the service's xpub. */
async function node(opts: { watchWallet?: string; hotSats?: bigint } = {}) {
  const standin = await startBitcoindStandin({ user: 'svcpay', password: 's3cret:with:colons' })
  stands.push(standin)
  standin.createWallet('svcpay-hot', { privateKeys: true })
  standin.fundWallet('svcpay-hot', opts.hotSats ?? 100_000_000n)
  const master = newMasterKey('regtest')
  const xpub = deriveAccountXpub(master, 'regtest')
  const onchain = createBitcoindRail({
    url: standin.url,
    user: 'svcpay',
    password: 's3cret:with:colons',
    wallet: 'svcpay-hot',
    ...(opts.watchWallet ? { watchWallet: opts.watchWallet } : {}),
    accountXpub: xpub,
    // A short gap keeps the stand-in's own derivation of the range quick.
    descriptorRangeAhead: 20,
    network: 'regtest',
    timeoutMs: 2000,
  })
  return { standin, onchain, xpub, address: (i: number) => deriveReceiveAddress(master, i, 'regtest') }
}

describe('createBitcoindRail on the Bitcoin Core stand-in: watching', () => {
  it('creates a key-less watch wallet and imports ONE ranged descriptor, widened as indexes grow', async () => {
    const { standin, onchain, xpub, address } = await node()
    await onchain.watchAddress(address(0), 0)
    await onchain.watchAddress(address(7), 7)
    const watch = standin.wallets.get('svcpay-hot-watch')!
    expect(watch.privateKeys).toBe(false)
    expect(watch.descriptors.map((d) => [d.desc, d.rangeEnd])).toEqual([[`wpkh(${xpub}/0/*)`, 20]])
    await onchain.watchAddress(address(150), 150)
    expect(watch.descriptors.map((d) => d.rangeEnd)).toEqual([170])
    const imports = standin.seen.filter((r) => r.rpcMethod === 'importdescriptors')
    expect(imports).toHaveLength(2)
    // A payment to a watched address is listed, mempool first, then with its block.
    const paid = payFromOutside(standin.chain, address(7), 150_000n)
    expect(await onchain.listOutputs(address(7))).toEqual([
      { txid: paid.txid, vout: 0, amountSats: 150_000n, confirmations: 0 },
    ])
    standin.chain.mine(2)
    expect(await onchain.listOutputs(address(7))).toEqual([
      {
        txid: paid.txid,
        vout: 0,
        amountSats: 150_000n,
        confirmations: 2,
        blockHash: standin.chain.blockOf(paid.txid)!.hash,
      },
    ])
  })

  it('finds payments to an address of the descriptor that was never labelled (handed out by an older version)', async () => {
    const { standin, onchain, address } = await node()
    await onchain.watchAddress(address(0), 0)
    const paid = payFromOutside(standin.chain, address(5), 42_000n)
    expect(await onchain.listOutputs(address(5))).toEqual([
      { txid: paid.txid, vout: 0, amountSats: 42_000n, confirmations: 0 },
    ])
    expect(standin.seen.filter((r) => r.rpcMethod === 'setlabel')).toHaveLength(2)
    await onchain.listOutputs(address(5))
    expect(standin.seen.filter((r) => r.rpcMethod === 'setlabel')).toHaveLength(2)
  })

  it('refuses the hot wallet as the watch wallet (Bitcoin Core would answer -4 to the import)', async () => {
    const { standin, onchain, address } = await node({ watchWallet: 'svcpay-hot' })
    const failure = await failureOf(onchain.watchAddress(address(0), 0))
    expect([failure.code, failure.retryable]).toEqual(['watch_wallet_has_keys', false])
    expect(standin.seen.some((r) => r.rpcMethod === 'importdescriptors')).toBe(false)
  })

  it('an address not of the imported key is refused, not silently never seen', async () => {
    const { onchain } = await node()
    const failure = await failureOf(onchain.watchAddress(PAYEE, 3))
    expect([failure.code, failure.retryable]).toEqual(['address_not_watched', false])
  })

  it('a node warming up after a restart is retried (-28)', async () => {
    const { standin, onchain, address } = await node()
    standin.warmingUp = true
    const failure = await failureOf(onchain.watchAddress(address(0), 0))
    expect([failure.code, failure.retryable]).toEqual(['node_unavailable', true])
    standin.warmingUp = false
    await onchain.watchAddress(address(0), 0)
  })
})

describe('createBitcoindRail on the Bitcoin Core stand-in: sending', () => {
  const send = (requestId: string, address = PAYEE) => ({
    address,
    amountSats: 150_000n,
    feeRateSatPerVb: 5n,
    requestId,
  })

  it('sends once per request id and checks the mempool holds the transaction', async () => {
    const { standin, onchain } = await node()
    const { txid } = await onchain.send(send('txn_1'))
    expect(standin.chain.mempool.has(txid)).toBe(true)
    expect(await onchain.send(send('txn_1'))).toEqual({ txid })
    expect(standin.seen.filter((r) => r.rpcMethod === 'sendtoaddress')).toHaveLength(1)
    expect(standin.seen.some((r) => r.rpcMethod === 'getmempoolentry')).toBe(true)
    const body = JSON.parse(standin.seen.find((r) => r.rpcMethod === 'sendtoaddress')!.body)
    expect(body.params).toMatchObject({
      address: PAYEE,
      amount: '0.00150000',
      comment: 'txn_1',
      fee_rate: '5',
      replaceable: true,
    })
    expect(await onchain.getTransaction(txid)).toEqual({ confirmations: 0, inMempool: true })
    standin.chain.mine(2)
    expect(await onchain.getTransaction(txid)).toEqual({ confirmations: 2 })
  })

  it('a send the mempool refused is not sent: sendtoaddress still answers a txid; the rail abandons it and says rejected', async () => {
    const { standin, onchain } = await node()
    standin.chain.policy = (tx) =>
      tx.outputs.some((o) => o.address === PAYEE) ? { code: -26, message: 'scriptpubkey' } : null
    const failure = await failureOf(onchain.send(send('txn_2')))
    expect([failure.code, failure.retryable]).toEqual(['rejected', false])
    expect(failure.message).toContain('scriptpubkey')
    const hot = standin.wallets.get('svcpay-hot')!
    const wtx = [...hot.txs.values()].find((t) => t.comment === 'txn_2')!
    expect(wtx.abandoned).toBe(true)
    expect(standin.chain.mempool.size).toBe(0)
    // Its coins are free again: the next send spends them.
    standin.chain.policy = null
    const { txid } = await onchain.send(send('txn_3', PAYEE2))
    expect(standin.chain.mempool.has(txid)).toBe(true)
  })

  it('a send the mempool dropped and now refuses for its fee is not abandoned: it may still be out there', async () => {
    const { standin, onchain } = await node()
    const { txid } = await onchain.send(send('txn_6'))
    standin.chain.evict(txid)
    standin.chain.policy = () => ({ code: -26, message: 'mempool min fee not met, 890 < 2000' })
    expect(await onchain.getTransaction(txid)).toEqual({ confirmations: 0, inMempool: false })
    const failure = await failureOf(onchain.send(send('txn_6')))
    expect([failure.code, failure.retryable]).toEqual(['not_relayed', true])
    const wtx = [...standin.wallets.get('svcpay-hot')!.txs.values()].find((t) => t.txid === txid)!
    expect(wtx.abandoned).toBe(false)
    standin.chain.policy = null
    expect(await onchain.send(send('txn_6'))).toEqual({ txid })
    expect(standin.chain.mempool.has(txid)).toBe(true)
  })

  it('a send whose answer never came (the wallet committed it) is found by its comment, never sent twice', async () => {
    const { standin, onchain } = await node()
    standin.faults.push({
      match: (r) => r.rpcMethod === 'sendtoaddress',
      fault: { kind: 'work-then-stall' },
      times: 1,
    })
    const failure = await failureOf(onchain.send(send('txn_7')))
    expect([failure.code, failure.retryable]).toEqual(['node_timeout', true])
    const { txid } = await onchain.send(send('txn_7'))
    expect(standin.chain.mempool.has(txid)).toBe(true)
    expect(standin.seen.filter((r) => r.rpcMethod === 'sendtoaddress')).toHaveLength(1)
    expect(
      [...standin.wallets.get('svcpay-hot')!.txs.values()].filter((t) => t.comment === 'txn_7'),
    ).toHaveLength(1)
  })

  it('follows a fee bump to its replacement, and reports a send double-spent by the chain as conflicted', async () => {
    const { standin, onchain } = await node()
    const { txid } = await onchain.send(send('txn_4'))
    const bumped = await onchain.bumpFee!(txid, 20n)
    expect(bumped.txid).not.toBe(txid)
    // One P2WPKH input, the payee and the change: 141 vB (the stand-in sizes as coin selection does).
    expect(bumped.feeSats).toBe(20n * 141n)
    expect(await onchain.getTransaction(txid)).toEqual({ confirmations: 0, replacedBy: bumped.txid })
    expect(await onchain.send(send('txn_4'))).toEqual({ txid: bumped.txid })
    standin.chain.mine(1)
    expect(await onchain.getTransaction(bumped.txid)).toEqual({ confirmations: 1 })
    const mined = await failureOf(onchain.bumpFee!(bumped.txid, 30n))
    expect(mined.code).toBe('wallet_error')

    const second = await onchain.send(send('txn_5'))
    const tx = standin.chain.txs.get(second.txid)!
    standin.chain.mine(2, [
      standin.chain.makeTx({ inputs: tx.inputs, outputs: [{ address: PAYEE2, value: 1_000n }] }),
    ])
    expect(await onchain.getTransaction(second.txid)).toEqual({ confirmations: 0, conflictedDepth: 2 })
  })

  it('a send whose parent left the mempool (-25 missing inputs) is kept while the wallet sees no conflict; a conflict in the chain ends it', async () => {
    const { standin, onchain } = await node()
    const parent = await onchain.send(send('txn_p'))
    // The only coin left is the parent's unconfirmed change: the child spends it.
    const child = await onchain.send(send('txn_c', PAYEE2))
    const childTx = standin.chain.txs.get(child.txid)!
    expect(childTx.inputs.some((i) => i.txid === parent.txid)).toBe(true)
    // The parent is evicted (a full mempool's minimum fee rose): the child goes with it.
    standin.chain.evict(parent.txid)
    expect(standin.chain.mempool.has(child.txid)).toBe(false)
    expect(await onchain.getTransaction(child.txid)).toEqual({ confirmations: 0, inMempool: false })
    // Other nodes may still hold both and a miner include them: not final, not abandoned.
    const failure = await failureOf(onchain.send(send('txn_c', PAYEE2)))
    expect([failure.code, failure.retryable]).toEqual(['not_relayed', true])
    expect(failure.message).toContain('missing-inputs')
    const wtx = standin.wallets.get('svcpay-hot')!.txs.get(child.txid)!
    expect(wtx.abandoned).toBe(false)
    // The parent's coin is spent by another transaction in a block: the wallet marks the parent and
    // its child conflicted (negative confirmations), and only now can the child never confirm.
    const parentTx = standin.chain.txs.get(parent.txid)!
    standin.chain.mine(1, [
      standin.chain.makeTx({ inputs: parentTx.inputs, outputs: [{ address: PAYEE, value: 1_000n }] }),
    ])
    expect(await onchain.getTransaction(child.txid)).toEqual({ confirmations: 0, conflictedDepth: 1 })
    const conflicted = await failureOf(onchain.send(send('txn_c', PAYEE2)))
    expect([conflicted.code, conflicted.retryable]).toEqual(['conflicted', false])
  })

  it('a wallet that does not know the transaction answers null', async () => {
    const { onchain } = await node()
    expect(await onchain.getTransaction(TXID_C)).toBeNull()
  })
})

describe('createBitcoindRail on the Bitcoin Core stand-in: check()', () => {
  it('reports version, chain, sync, a hot wallet with keys and its balance, a key-less watch wallet', async () => {
    const { onchain, address } = await node()
    await onchain.watchAddress(address(0), 0)
    const report = await onchain.check!()
    expect(report).toMatchObject({
      rail: 'onchain',
      adapter: 'bitcoind',
      reachable: true,
      version: '/Satoshi:27.1.0/ (270100)',
      network: 'regtest',
      synced: true,
      balances: { BTC: '1.00000000' },
      problems: [],
    })
  })

  it('names each misconfiguration: another chain, a node still syncing, the hot wallet as watch wallet', async () => {
    const { standin, onchain } = await node({ watchWallet: 'svcpay-hot' })
    standin.chainName = 'main'
    standin.initialBlockDownload = true
    const report = await onchain.check!()
    expect(report.reachable).toBe(true)
    expect(report.network).toBe('mainnet')
    expect(report.synced).toBe(false)
    const text = report.problems.join('\n')
    expect(text).toContain('bitcoind is on main, the service is configured for regtest')
    expect(text).toContain('not synced')
    expect(text).toContain('the watch wallet is the hot wallet')
    expect(text).toContain('has private keys')
  })

  it('reports bad credentials and an unreachable node as problems, never throws', async () => {
    const { standin } = await node()
    const wrong = createBitcoindRail({
      url: standin.url,
      user: 'svcpay',
      password: 'nope',
      wallet: 'svcpay-hot',
      network: 'regtest',
    })
    const report = await wrong.check!()
    expect(report.reachable).toBe(false)
    expect(report.problems[0]).toContain('HTTP 401')
    await standin.close()
    const down = await rail(standin.url, 300).check!()
    expect(down.reachable).toBe(false)
  })
})
