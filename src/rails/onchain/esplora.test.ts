/**
 * The Esplora adapter against a local HTTP server that answers as Blockstream's and mempool.space's
 * Esplora REST API does: transactions with `vout[].scriptpubkey_address` and `value` in satoshis,
 * `status.block_height`, the tip height as plain text, fee estimates keyed by target blocks, and
 * plain-text errors.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

import { RailFailure } from '../rail.js'
import { createEsploraRail, type OnchainSigner } from './esplora.js'

interface Seen {
  method: string
  path: string
  contentType: string | undefined
  body: string
}

type Answer = { status?: number; json?: unknown; text?: string } | 'hang'

const servers: http.Server[] = []

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

async function fakeEsplora(answer: (req: Seen) => Answer): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const entry = { method: req.method!, path: req.url!, contentType: req.headers['content-type'], body }
      seen.push(entry)
      const a = answer(entry)
      if (a === 'hang') return
      if (a.json !== undefined) {
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(a.json))
      } else {
        res.writeHead(a.status ?? 200, { 'content-type': 'text/plain' }).end(a.text ?? '')
      }
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, seen }
}

async function failureOf(promise: Promise<unknown>): Promise<RailFailure> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(RailFailure)
  return err as RailFailure
}

const ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'
const OTHER = 'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh'
const TIP = 850_000

function txid(n: number): string {
  return n.toString(16).padStart(64, '0')
}

/** A transaction as Esplora prints it, paying `outputs` in order. */
function tx(n: number, outputs: [string, number][], blockHeight: number | null) {
  return {
    txid: txid(n),
    version: 2,
    locktime: 0,
    vin: [
      {
        txid: txid(9999),
        vout: 0,
        prevout: null,
        scriptsig: '',
        witness: [],
        is_coinbase: false,
        sequence: 4294967293,
      },
    ],
    vout: outputs.map(([address, value]) => ({
      scriptpubkey: '0014e8df018c7e326cc253faac7e46cdc51e68542c42',
      scriptpubkey_asm: 'OP_0 OP_PUSHBYTES_20 e8df018c7e326cc253faac7e46cdc51e68542c42',
      scriptpubkey_type: 'v0_p2wpkh',
      scriptpubkey_address: address,
      value,
    })),
    size: 222,
    weight: 561,
    fee: 1410,
    status:
      blockHeight === null
        ? { confirmed: false }
        : {
            confirmed: true,
            block_height: blockHeight,
            block_hash: '0'.repeat(64),
            block_time: 1_700_000_000,
          },
  }
}

describe('createEsploraRail: watching', () => {
  it('lists outputs to an address from the mempool and every page of confirmed history', async () => {
    // Page one holds Esplora's 25 confirmed transactions; the address's own outputs are among them.
    const page1 = Array.from({ length: 25 }, (_, i) => tx(100 + i, [[OTHER, 1_000 + i]], TIP - 10 - i))
    page1[3] = tx(
      103,
      [
        [OTHER, 5],
        [ADDRESS, 2_099_999_999_999_999],
      ],
      TIP,
    )
    const page2 = [
      tx(
        200,
        [
          [ADDRESS, 546],
          [ADDRESS, 1_000],
        ],
        TIP - 99,
      ),
    ]
    const esplora = await fakeEsplora((req) => {
      const base = `/api/address/${ADDRESS}/txs`
      if (req.path === `${base}/mempool`) return { json: [tx(1, [[ADDRESS, 150_000]], null)] }
      if (req.path === `${base}/chain`) return { json: page1 }
      if (req.path === `${base}/chain/${txid(124)}`) return { json: page2 }
      if (req.path === `${base}/chain/${txid(200)}`) return { json: [] }
      if (req.path === '/api/blocks/tip/height') return { text: String(TIP) }
      return { status: 404, text: 'Not Found' }
    })
    const outputs = await createEsploraRail({ url: esplora.url, network: 'mainnet' }).listOutputs(ADDRESS)
    expect(outputs).toEqual([
      { txid: txid(1), vout: 0, amountSats: 150_000n, confirmations: 0 },
      { txid: txid(103), vout: 1, amountSats: 2_099_999_999_999_999n, confirmations: 1 },
      { txid: txid(200), vout: 0, amountSats: 546n, confirmations: 100 },
      { txid: txid(200), vout: 1, amountSats: 1_000n, confirmations: 100 },
    ])
    expect(esplora.seen.every((s) => s.method === 'GET')).toBe(true)
  })

  it('does nothing to watch an address, and refuses text that is not one before building a URL', async () => {
    const esplora = await fakeEsplora(() => ({ json: [] }))
    const onchain = createEsploraRail({ url: esplora.url, network: 'mainnet' })
    await onchain.watchAddress(ADDRESS)
    const failure = await failureOf(onchain.listOutputs('../../blocks/tip'))
    expect([failure.code, failure.retryable]).toEqual(['invalid_address', false])
    expect(esplora.seen).toHaveLength(0)
  })

  it('reads transaction confirmations from its status and the tip, null when unknown', async () => {
    const esplora = await fakeEsplora((req) => {
      if (req.path === `/api/tx/${txid(1)}/status`)
        return { json: { confirmed: true, block_height: TIP - 2, block_hash: '0'.repeat(64), block_time: 1 } }
      if (req.path === `/api/tx/${txid(2)}/status`) return { json: { confirmed: false } }
      if (req.path === '/api/blocks/tip/height') return { text: String(TIP) }
      return { status: 404, text: 'Transaction not found' }
    })
    const onchain = createEsploraRail({ url: esplora.url, network: 'mainnet' })
    expect(await onchain.getTransaction(txid(1))).toEqual({ confirmations: 3 })
    expect(await onchain.getTransaction(txid(2))).toEqual({ confirmations: 0 })
    expect(await onchain.getTransaction(txid(3))).toBeNull()
  })
})

describe('createEsploraRail: fee estimates', () => {
  const estimates = {
    '1': 87.882,
    '2': 87.882,
    '3': 87.882,
    '4': 87.882,
    '5': 81.129,
    '6': 68.285,
    '7': 68.285,
    '8': 68.285,
    '9': 68.285,
    '10': 68.285,
    '11': 68.285,
    '12': 68.285,
    '13': 68.285,
    '14': 68.285,
    '15': 68.285,
    '16': 68.285,
    '17': 68.285,
    '18': 68.285,
    '19': 68.285,
    '20': 68.285,
    '21': 68.285,
    '22': 68.285,
    '23': 68.285,
    '24': 68.285,
    '25': 20.01,
    '144': 1.027,
    '504': 1.027,
    '1008': 1.027,
  }

  it('takes the largest target not above ours and rounds the rate up to whole sat/vB', async () => {
    const esplora = await fakeEsplora(() => ({ json: estimates }))
    const onchain = createEsploraRail({ url: esplora.url, network: 'mainnet' })
    expect(await onchain.estimateFeeRate(6)).toBe(69n)
    expect(await onchain.estimateFeeRate(30)).toBe(21n)
    expect(await onchain.estimateFeeRate(200)).toBe(2n)
    expect(await onchain.estimateFeeRate(0)).toBe(88n)
    expect(esplora.seen[0]!.path).toBe('/api/fee-estimates')
  })

  it('without estimates: 1 sat/vB on regtest, a retryable failure elsewhere', async () => {
    const esplora = await fakeEsplora(() => ({ json: {} }))
    expect(await createEsploraRail({ url: esplora.url, network: 'regtest' }).estimateFeeRate(2)).toBe(1n)
    const failure = await failureOf(
      createEsploraRail({ url: esplora.url, network: 'mainnet' }).estimateFeeRate(2),
    )
    expect([failure.code, failure.retryable]).toEqual(['fee_estimate_unavailable', true])
  })

  it('retries rate limits and server errors, times out within the deadline', async () => {
    let next: Answer = { status: 429, text: 'Too Many Requests' }
    const esplora = await fakeEsplora(() => next)
    const onchain = createEsploraRail({ url: esplora.url, network: 'mainnet', timeoutMs: 250 })
    expect((await failureOf(onchain.estimateFeeRate(2))).retryable).toBe(true)
    next = { status: 502, text: 'Bad Gateway' }
    expect((await failureOf(onchain.estimateFeeRate(2))).retryable).toBe(true)
    next = 'hang'
    const started = Date.now()
    const failure = await failureOf(onchain.estimateFeeRate(2))
    expect([failure.code, failure.retryable]).toEqual(['node_timeout', true])
    expect(Date.now() - started).toBeLessThan(1000)
  })
})

// Bitcoin's genesis coinbase transaction and its well-known txid: a raw transaction whose id is a
// standard fact, standing in for what an operator's signer would produce.
const GENESIS_TX =
  '01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff4d04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73ffffffff0100f2052a01000000434104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac00000000'
const GENESIS_TXID = '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b'

describe('createEsploraRail: sending', () => {
  it('refuses to send without a signer, as a final not_supported', async () => {
    const esplora = await fakeEsplora(() => ({ text: '' }))
    const onchain = createEsploraRail({ url: esplora.url, network: 'mainnet' })
    const failure = await failureOf(
      onchain.send({ address: OTHER, amountSats: 1_000n, feeRateSatPerVb: 2n, requestId: 'r1' }),
    )
    expect([failure.code, failure.retryable]).toEqual(['not_supported', false])
    expect(esplora.seen).toHaveLength(0)
  })

  it("broadcasts the signer's transaction, and treats a rebroadcast Esplora already knows as sent", async () => {
    let broadcasts = 0
    const esplora = await fakeEsplora((req) => {
      if (req.method === 'POST' && req.path === '/api/tx') {
        broadcasts++
        if (broadcasts === 1) return { text: GENESIS_TXID }
        return {
          status: 400,
          text: 'sendrawtransaction RPC error: {"code":-27,"message":"Transaction already in block chain"}',
        }
      }
      if (req.path === `/api/tx/${GENESIS_TXID}/status`)
        return {
          json: { confirmed: true, block_height: 0, block_hash: '0'.repeat(64), block_time: 1231006505 },
        }
      return { status: 404, text: 'Not Found' }
    })
    const requests: string[] = []
    const sign: OnchainSigner = async (input) => {
      requests.push(input.requestId)
      return { rawTxHex: GENESIS_TX }
    }
    const onchain = createEsploraRail({ url: esplora.url, network: 'mainnet', broadcast: { sign } })
    const input = { address: OTHER, amountSats: 5_000_000_000n, feeRateSatPerVb: 3n, requestId: 'txn_9' }
    expect(await onchain.send(input)).toEqual({ txid: GENESIS_TXID })
    expect(await onchain.send(input)).toEqual({ txid: GENESIS_TXID })
    expect(requests).toEqual(['txn_9', 'txn_9'])
    expect(esplora.seen[0]).toMatchObject({
      method: 'POST',
      path: '/api/tx',
      contentType: 'text/plain',
      body: GENESIS_TX,
    })
  })

  it('reports a broadcast Esplora refuses and does not know as a final rejection', async () => {
    const esplora = await fakeEsplora((req) => {
      if (req.method === 'POST')
        return {
          status: 400,
          text: 'sendrawtransaction RPC error: {"code":-26,"message":"min relay fee not met"}',
        }
      return { status: 404, text: 'Transaction not found' }
    })
    const sign: OnchainSigner = async () => ({ rawTxHex: GENESIS_TX })
    const onchain = createEsploraRail({ url: esplora.url, network: 'mainnet', broadcast: { sign } })
    const failure = await failureOf(
      onchain.send({ address: OTHER, amountSats: 1n, feeRateSatPerVb: 1n, requestId: 'r' }),
    )
    expect([failure.code, failure.retryable]).toEqual(['rejected', false])
    expect(failure.message).toContain('min relay fee not met')
  })

  it('refuses a signer result that is not a transaction before broadcasting it', async () => {
    const esplora = await fakeEsplora(() => ({ text: '' }))
    const sign: OnchainSigner = async () => ({ rawTxHex: 'deadbeef' })
    const onchain = createEsploraRail({ url: esplora.url, network: 'mainnet', broadcast: { sign } })
    const failure = await failureOf(
      onchain.send({ address: OTHER, amountSats: 1n, feeRateSatPerVb: 1n, requestId: 'r' }),
    )
    expect([failure.code, failure.retryable]).toEqual(['invalid_transaction', false])
    expect(esplora.seen).toHaveLength(0)
  })
})
