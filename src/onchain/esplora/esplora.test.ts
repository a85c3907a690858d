/**
 * The Esplora adapter against a local HTTP server that answers as Blockstream's and mempool.space's
 * Esplora REST API does: transactions with `vout[].scriptpubkey_address` and `value` in satoshis,
 * `status.block_height`, the tip height as plain text, fee estimates keyed by target blocks, and
 * plain-text errors.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

import { RailFailure } from '../../rails/rail.js'
import { createEsploraRail, GENESIS_HASHES, type OnchainSigner } from './esplora.js'
import { Chain, payFromOutside } from '../../../test/standins/chain.js'
import { startEsploraStandin, type EsploraStandin } from '../../../test/standins/esplora.js'
import { testSigner } from '../../../test/standins/signer.js'

interface Seen {
  method: string
  path: string
  contentType: string | undefined
  body: string
}

type Answer = { status?: number; json?: unknown; text?: string } | 'hang'

const servers: http.Server[] = []
const stands: EsploraStandin[] = []

afterEach(async () => {
  for (const stand of stands.splice(0)) await stand.close()
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
const ADDRESS_RT = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
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
      {
        txid: txid(103),
        vout: 1,
        amountSats: 2_099_999_999_999_999n,
        confirmations: 1,
        blockHash: '0'.repeat(64),
      },
      { txid: txid(200), vout: 0, amountSats: 546n, confirmations: 100, blockHash: '0'.repeat(64) },
      { txid: txid(200), vout: 1, amountSats: 1_000n, confirmations: 100, blockHash: '0'.repeat(64) },
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

  it('reads a transaction from GET /tx/:txid: confirmations, mempool, and null when unknown (never /status)', async () => {
    // electrs answers /tx/:txid/status with {"confirmed":false} for any txid, known or not; a rail
    // that read it would wait for ever on a transaction nobody has.
    const node = await startEsploraStandin()
    stands.push(node)
    const onchain = createEsploraRail({ url: node.url, network: 'regtest' })
    const paid = payFromOutside(node.chain, ADDRESS_RT, 50_000n)
    expect(await onchain.getTransaction(paid.txid)).toEqual({ confirmations: 0, inMempool: true })
    node.chain.mine(3)
    expect(await onchain.getTransaction(paid.txid)).toEqual({ confirmations: 3 })
    const unknown = txid(77)
    const status = await fetch(`${node.url}/tx/${unknown}/status`)
    expect([status.status, await status.json()]).toEqual([200, { confirmed: false }])
    expect(await onchain.getTransaction(unknown)).toBeNull()
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

  it("broadcasts the signer's transaction; a rebroadcast of one in the mempool or a block counts as sent", async () => {
    const node = await startEsploraStandin()
    stands.push(node)
    const signer = testSigner(node.chain)
    const onchain = createEsploraRail({ url: node.url, network: 'regtest', broadcast: { sign: signer.sign } })
    const input = { address: ADDRESS_RT, amountSats: 150_000n, feeRateSatPerVb: 3n, requestId: 'txn_9' }
    const { txid: sent } = await onchain.send(input)
    expect(node.chain.mempool.has(sent)).toBe(true)
    expect(await onchain.send(input)).toEqual({ txid: sent })
    node.chain.mine(1)
    // Bitcoin Core refuses a confirmed transaction with -27; Esplora holds it, so it was sent.
    expect(await onchain.send(input)).toEqual({ txid: sent })
    expect(node.seen.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/tx', '/tx', '/tx'])
  })

  it('a rebroadcast the node answers -27 (already in utxo set) counts as sent while the index has not caught up (404)', async () => {
    const node = await startEsploraStandin()
    stands.push(node)
    const signer = testSigner(node.chain)
    const onchain = createEsploraRail({ url: node.url, network: 'regtest', broadcast: { sign: signer.sign } })
    const input = { address: ADDRESS_RT, amountSats: 150_000n, feeRateSatPerVb: 3n, requestId: 'txn_lag' }
    const { txid } = await onchain.send(input)
    node.chain.mine(1)
    node.indexLag = 1
    expect(await onchain.getTransaction(txid)).toBeNull()
    expect(await onchain.send(input)).toEqual({ txid })
    node.indexLag = 0
    expect(await onchain.getTransaction(txid)).toEqual({ confirmations: 1 })
  })

  it('a send whose block left the chain is not reported in the mempool once the mempool lacks it (electrs keeps the transaction)', async () => {
    const node = await startEsploraStandin()
    stands.push(node)
    const signer = testSigner(node.chain)
    const onchain = createEsploraRail({ url: node.url, network: 'regtest', broadcast: { sign: signer.sign } })
    const input = { address: ADDRESS_RT, amountSats: 150_000n, feeRateSatPerVb: 3n, requestId: 'txn_orphan' }
    const { txid } = await onchain.send(input)
    node.chain.mine(1)
    // The block is orphaned and the new branch does not carry the send, nor does any mempool.
    node.chain.reorg(1, [txid])
    node.chain.mine(2)
    expect(await onchain.getTransaction(txid)).toEqual({ confirmations: 0, inMempool: false })
    // Offered again (the same signed transaction), it is back in the mempool.
    expect(await onchain.send(input)).toEqual({ txid })
    expect(await onchain.getTransaction(txid)).toEqual({ confirmations: 0, inMempool: true })
  })

  it('reports a broadcast the node refuses and Esplora does not hold as a final rejection (never as sent)', async () => {
    const node = await startEsploraStandin()
    stands.push(node)
    const signer = testSigner(node.chain)
    const onchain = createEsploraRail({ url: node.url, network: 'regtest', broadcast: { sign: signer.sign } })
    node.chain.refuseNext = { code: -26, message: 'mempool min fee not met, 141 < 2820' }
    const failure = await failureOf(
      onchain.send({ address: ADDRESS_RT, amountSats: 5_000n, feeRateSatPerVb: 1n, requestId: 'r' }),
    )
    expect([failure.code, failure.retryable]).toEqual(['rejected', false])
    expect(failure.message).toContain('mempool min fee not met')
    expect(node.chain.mempool.size).toBe(0)
  })

  it('refuses a double spend: inputs already spent in a block (-25) is final', async () => {
    const node = await startEsploraStandin()
    stands.push(node)
    const signer = testSigner(node.chain)
    const onchain = createEsploraRail({ url: node.url, network: 'regtest', broadcast: { sign: signer.sign } })
    const input = { address: ADDRESS_RT, amountSats: 5_000n, feeRateSatPerVb: 2n, requestId: 'r2' }
    await signer.sign(input)
    const coin = signer.coinOf('r2')!
    node.chain.mine(1, [
      node.chain.makeTx({
        inputs: [{ txid: coin.txid, vout: 0 }],
        outputs: [{ address: ADDRESS_RT, value: 1_000n }],
      }),
    ])
    const failure = await failureOf(onchain.send(input))
    expect([failure.code, failure.retryable]).toEqual(['rejected', false])
    expect(failure.message).toContain('bad-txns-inputs-missingorspent')
  })

  it("retries when electrs cannot reach its node (400 'Connection error'), a 5xx, a stall or a restart", async () => {
    const node = await startEsploraStandin()
    stands.push(node)
    const signer = testSigner(node.chain)
    const onchain = createEsploraRail({
      url: node.url,
      network: 'regtest',
      timeoutMs: 300,
      broadcast: { sign: signer.sign },
    })
    const input = { address: ADDRESS_RT, amountSats: 5_000n, feeRateSatPerVb: 2n, requestId: 'r3' }
    node.nodeDown = true
    let failure = await failureOf(onchain.send(input))
    expect([failure.code, failure.retryable]).toEqual(['node_unavailable', true])
    node.nodeDown = false
    node.faults.push({
      match: (r) => r.method === 'POST',
      fault: { kind: 'status', status: 502, body: 'Bad Gateway' },
      times: 1,
    })
    expect((await failureOf(onchain.send(input))).retryable).toBe(true)
    node.faults.push({ match: (r) => r.method === 'POST', fault: { kind: 'stall' }, times: 1 })
    failure = await failureOf(onchain.send(input))
    expect([failure.code, failure.retryable]).toEqual(['node_timeout', true])
    await node.stop()
    expect((await failureOf(onchain.send(input))).retryable).toBe(true)
    await node.restart()
    const { txid: sent } = await onchain.send(input)
    expect(node.chain.mempool.has(sent)).toBe(true)
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

describe('createEsploraRail: check()', () => {
  it('reports a reachable, synced index on the configured chain, and says it has no version', async () => {
    const node = await startEsploraStandin()
    stands.push(node)
    const report = await createEsploraRail({ url: node.url, network: 'regtest' }).check!()
    expect(report).toMatchObject({
      rail: 'onchain',
      adapter: 'esplora',
      reachable: true,
      network: 'regtest',
      synced: true,
      problems: [],
    })
    expect(report.version).toBeUndefined()
  })

  it('finds the wrong chain by its genesis block, and a stale tip', async () => {
    const node = await startEsploraStandin(new Chain(GENESIS_HASHES.mainnet[0]))
    stands.push(node)
    node.chain.now = () => Math.floor(Date.now() / 1000) - 5 * 3600
    node.chain.mine(1)
    const wrong = await createEsploraRail({ url: node.url, network: 'testnet' }).check!()
    expect(wrong.network).toBe('mainnet')
    expect(wrong.problems.join(' ')).toContain('configured for testnet')
    const stale = await createEsploraRail({ url: node.url, network: 'mainnet' }).check!()
    expect(stale.synced).toBe(false)
    expect(stale.problems.join(' ')).toMatch(/tip .* minutes old/)
  })

  it('reports an unreachable index', async () => {
    const node = await startEsploraStandin()
    await node.close()
    const report = await createEsploraRail({ url: node.url, network: 'regtest', timeoutMs: 300 }).check!()
    expect(report.reachable).toBe(false)
    expect(report.problems).toHaveLength(1)
  })
})
