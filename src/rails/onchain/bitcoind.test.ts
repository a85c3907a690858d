/**
 * The bitcoind adapter against a local HTTP server that answers as Bitcoin Core's JSON-RPC 1.0
 * does: `{ result, error, id }`, HTTP 500 with the error object for RPC errors, a bare 401 for bad
 * credentials, and amounts as BTC numbers with eight decimals.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

import { RailFailure } from '../rail.js'
import { btcToSats, createBitcoindRail, descriptorChecksum, satsToBtcText } from './bitcoind.js'

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

afterEach(async () => {
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
const TXID_A = 'a'.repeat(64)
const TXID_B = 'b'.repeat(64)
const TXID_C = 'c'.repeat(64)
const BASIC = 'Basic ' + Buffer.from('svcpay:s3cret:with:colons').toString('base64')

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
  it('imports a watched address as an addr() descriptor into the watch wallet', async () => {
    const node = await fakeBitcoind(() => ({ result: [{ success: true }] }))
    await rail(node.url).watchAddress(ADDRESS)
    const [call] = node.calls
    expect(call).toMatchObject({
      path: '/wallet/svcpay-watch',
      authorization: BASIC,
      jsonrpc: '1.0',
      method: 'importdescriptors',
    })
    const desc = `addr(${ADDRESS})`
    expect(call!.params).toEqual([
      [{ desc: `${desc}#${descriptorChecksum(desc)}`, timestamp: 'now', label: ADDRESS }],
    ])
  })

  it('reports a refused import with its mapped code', async () => {
    const node = await fakeBitcoind(() => ({
      result: [
        {
          success: false,
          error: {
            code: -4,
            message: 'Cannot import descriptor without private keys to a wallet with private keys enabled',
          },
        },
      ],
    }))
    const failure = await failureOf(rail(node.url).watchAddress(ADDRESS))
    expect([failure.code, failure.retryable]).toEqual(['wallet_error', false])
  })

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
      { txid: TXID_B, vout: 0, amountSats: 2_099_999_999_999_999n, confirmations: 3 },
    ])
    expect(node.calls[0]).toMatchObject({
      path: '/wallet/svcpay-watch',
      method: 'listtransactions',
      params: { label: ADDRESS, count: 500, skip: 0, include_watchonly: true },
    })
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

/**
 * A hot wallet in miniature: `listtransactions` pages over its entries, newest last, as Bitcoin
 * Core's count/skip do; `sendtoaddress` commits a send carrying the comment.
 */
function hotWallet(options: { delaySendMs?: number; olderEntries?: number } = {}) {
  const entries: Record<string, unknown>[] = []
  for (let i = 0; i < (options.olderEntries ?? 0); i++) {
    entries.push({
      address: OTHER,
      category: 'send',
      amount: -0.0001,
      vout: 0,
      confirmations: 10,
      txid: i.toString(16).padStart(64, '0'),
    })
  }
  let sends = 0
  const answer = async (call: Call): Promise<Answer> => {
    if (call.method === 'listtransactions') {
      const { count, skip } = call.params as { count: number; skip: number }
      const end = Math.max(entries.length - skip, 0)
      return { result: entries.slice(Math.max(end - count, 0), end) }
    }
    if (call.method === 'sendtoaddress') {
      sends++
      const p = call.params as { address: string; amount: string; comment: string }
      const txid = (sends + 0xf0).toString(16).padStart(64, 'e')
      entries.push({
        address: p.address,
        category: 'send',
        amount: -Number(p.amount),
        vout: 0,
        fee: -0.00000141,
        confirmations: 0,
        trusted: true,
        txid,
        comment: p.comment,
        abandoned: false,
      })
      if (options.delaySendMs) await new Promise((r) => setTimeout(r, options.delaySendMs))
      return { result: txid }
    }
    return { error: { code: -32601, message: 'Method not found' } }
  }
  return { answer, sendCount: () => sends, entries }
}

describe('createBitcoindRail: send', () => {
  it('sends with the amount in BTC text, fee_rate in sat/vB and the request id as comment', async () => {
    const wallet = hotWallet()
    const node = await fakeBitcoind(wallet.answer)
    const { txid } = await rail(node.url).send({
      address: OTHER,
      amountSats: 150_000n,
      feeRateSatPerVb: 7n,
      requestId: 'txn_01',
    })
    expect(txid).toMatch(/^[0-9a-f]{64}$/)
    expect(node.calls.map((c) => [c.path, c.method])).toEqual([
      ['/wallet/svcpay-hot', 'listtransactions'],
      ['/wallet/svcpay-hot', 'sendtoaddress'],
    ])
    expect(node.calls[0]!.params).toEqual({ label: '*', count: 500, skip: 0, include_watchonly: false })
    expect(node.calls[1]!.params).toEqual({
      address: OTHER,
      amount: '0.00150000',
      comment: 'txn_01',
      fee_rate: '7',
    })
    expect(node.calls[1]!.authorization).toBe(BASIC)
  })

  it('is idempotent by request id: a second send returns the first txid without sending', async () => {
    const wallet = hotWallet({ olderEntries: 700 })
    const node = await fakeBitcoind(wallet.answer)
    const onchain = rail(node.url)
    const input = { address: OTHER, amountSats: 5_000n, feeRateSatPerVb: 2n, requestId: 'txn_02' }
    const first = await onchain.send(input)
    // Bury the send under newer wallet activity so that finding it needs a second page.
    for (let i = 0; i < 600; i++)
      wallet.entries.push({ category: 'receive', amount: 0.001, vout: 0, confirmations: 0, txid: TXID_C })
    const second = await onchain.send(input)
    expect(second).toEqual(first)
    expect(wallet.sendCount()).toBe(1)
    const scans = node.calls
      .filter((c) => c.method === 'listtransactions')
      .map((c) => (c.params as { skip: number }).skip)
    expect(scans).toEqual([0, 500, 0, 500])
  })

  it('after a send that timed out, finds the committed transaction instead of sending again', async () => {
    const wallet = hotWallet({ delaySendMs: 600 })
    const node = await fakeBitcoind(wallet.answer)
    const onchain = rail(node.url, 250)
    const input = { address: OTHER, amountSats: 5_000n, feeRateSatPerVb: 2n, requestId: 'txn_03' }
    const started = Date.now()
    const failure = await failureOf(onchain.send(input))
    expect([failure.code, failure.retryable]).toEqual(['node_timeout', true])
    expect(Date.now() - started).toBeLessThan(1000)
    const { txid } = await onchain.send(input)
    expect(txid).toBe(wallet.entries.at(-1)!.txid)
    expect(wallet.sendCount()).toBe(1)
  })

  it('shares one send between concurrent calls with the same request id', async () => {
    const wallet = hotWallet({ delaySendMs: 50 })
    const node = await fakeBitcoind(wallet.answer)
    const onchain = rail(node.url)
    const input = { address: OTHER, amountSats: 5_000n, feeRateSatPerVb: 2n, requestId: 'txn_04' }
    const [a, b] = await Promise.all([onchain.send(input), onchain.send(input)])
    expect(a).toEqual(b)
    expect(wallet.sendCount()).toBe(1)
  })

  it('prefers the replacement when a fee bump copied the comment', async () => {
    const node = await fakeBitcoind(() => ({
      result: [
        {
          category: 'send',
          amount: -0.001,
          vout: 0,
          confirmations: -1,
          txid: TXID_A,
          comment: 'txn_05',
          replaced_by_txid: TXID_B,
        },
        {
          category: 'send',
          amount: -0.001,
          vout: 0,
          confirmations: 0,
          txid: TXID_B,
          comment: 'txn_05',
          replaces_txid: TXID_A,
        },
      ],
    }))
    const { txid } = await rail(node.url).send({
      address: OTHER,
      amountSats: 100_000n,
      feeRateSatPerVb: 2n,
      requestId: 'txn_05',
    })
    expect(txid).toBe(TXID_B)
    expect(node.calls.map((c) => c.method)).toEqual(['listtransactions'])
  })

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

describe('createBitcoindRail: transactions and time-outs', () => {
  it('reads confirmations, null for a transaction the wallet does not know', async () => {
    const node = await fakeBitcoind((call) => {
      const { txid } = call.params as { txid: string }
      if (txid === TXID_A)
        return {
          result: {
            amount: -0.001,
            fee: -0.00000141,
            confirmations: 4,
            txid: TXID_A,
            details: [],
            hex: '00',
          },
        }
      if (txid === TXID_B)
        return { result: { amount: -0.001, confirmations: -1, txid: TXID_B, walletconflicts: [TXID_C] } }
      return { error: { code: -5, message: 'Invalid or non-wallet transaction id' } }
    })
    const onchain = rail(node.url)
    expect(await onchain.getTransaction(TXID_A)).toEqual({ confirmations: 4 })
    expect(await onchain.getTransaction(TXID_B)).toEqual({ confirmations: 0 })
    expect(await onchain.getTransaction(TXID_C)).toBeNull()
    expect(node.calls[0]).toMatchObject({
      path: '/wallet/svcpay-hot',
      method: 'gettransaction',
      params: { txid: TXID_A, include_watchonly: true },
    })
  })

  it('times out on a node that never answers, retryably and within the deadline', async () => {
    const node = await fakeBitcoind(() => ({ hang: true }))
    const started = Date.now()
    const failure = await failureOf(rail(node.url, 250).getTransaction(TXID_A))
    expect([failure.code, failure.retryable]).toEqual(['node_timeout', true])
    expect(Date.now() - started).toBeLessThan(1000)
  })
})
