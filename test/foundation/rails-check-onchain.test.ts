import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../helpers/harness.js'
import { startBitcoindStandin, type BitcoindStandin } from '../standins/bitcoind.js'
import { startEsploraStandin, type EsploraStandin } from '../standins/esplora.js'
import { Chain } from '../standins/chain.js'
import { GENESIS_HASHES } from '../../src/onchain/esplora/esplora.js'

/**
 * `GET /admin/rails` (what `svcpay rails check` prints) for the on-chain rail on the Bitcoin Core
 * and Esplora stand-ins: ready when the node is right, and each misconfiguration named (another
 * chain, the hot wallet used as the watch wallet, a node still syncing).
 */
const rails = async (h: Harness) => {
  const r = await h.app.inject({
    method: 'GET',
    url: '/admin/rails',
    headers: { authorization: `Bearer ${h.adminToken}` },
  })
  expect(r.statusCode, r.body).toBe(200)
  return r.json().rails.find((e: { rail: string }) => e.rail === 'onchain')
}

describe('rails check: the on-chain rail on Bitcoin Core', () => {
  let node: BitcoindStandin
  const harnesses: Harness[] = []
  const bitcoindEnv = (watchWallet?: string) => ({
    ONCHAIN: 'bitcoind',
    BITCOIND_RPC_URL: node.url,
    BITCOIND_RPC_USER: node.user,
    BITCOIND_RPC_PASSWORD: node.password,
    BITCOIND_WALLET: 'svcpay-hot',
    ...(watchWallet ? { BITCOIND_WATCH_WALLET: watchWallet } : {}),
    RAILS_CHECK_TIMEOUT_MS: '5000',
  })
  beforeAll(async () => {
    node = await startBitcoindStandin()
    node.createWallet('svcpay-hot', { privateKeys: true })
    node.createWallet('svcpay-hot-watch', { privateKeys: false })
    node.fundWallet('svcpay-hot', 12_345_678n)
  })
  afterAll(async () => {
    for (const h of harnesses) await h.close()
    await node.close()
  })

  it('ready: version, regtest, synced, the hot balance; a key-less watch wallet', async () => {
    const h = await createHarness(bitcoindEnv())
    harnesses.push(h)
    const entry = await rails(h)
    expect([entry.verdict, entry.problems]).toEqual(['ok', []])
    expect(entry.report).toMatchObject({
      adapter: 'bitcoind',
      reachable: true,
      version: '/Satoshi:27.1.0/ (270100)',
      network: 'regtest',
      synced: true,
      balances: { BTC: '0.12345678' },
    })
  }, 60_000)

  it('not ready: the hot wallet as watch wallet, another chain, a node still syncing', async () => {
    const h = await createHarness(bitcoindEnv('svcpay-hot'))
    harnesses.push(h)
    node.chainName = 'test'
    node.initialBlockDownload = true
    try {
      const entry = await rails(h)
      expect(entry.verdict).toBe('problem')
      const text = entry.problems.join('\n')
      expect(text).toContain('the watch wallet is the hot wallet svcpay-hot')
      expect(text).toContain('bitcoind is on test, the service is configured for regtest')
      expect(text).toContain('bitcoind is not synced')
      expect(JSON.stringify(entry)).not.toContain(node.password)
    } finally {
      node.chainName = 'regtest'
      node.initialBlockDownload = false
    }
  }, 60_000)
})

describe('rails check: the on-chain rail on Esplora', () => {
  const stands: EsploraStandin[] = []
  const harnesses: Harness[] = []
  afterAll(async () => {
    for (const h of harnesses) await h.close()
    for (const s of stands) await s.close()
  })

  it('ready on the right chain; a problem on another chain (told by its genesis block)', async () => {
    const good = await startEsploraStandin()
    const mainnet = await startEsploraStandin(new Chain(GENESIS_HASHES.mainnet[0]))
    stands.push(good, mainnet)
    const ok = await createHarness({ ONCHAIN: 'esplora', ESPLORA_URL: good.url })
    const wrong = await createHarness({ ONCHAIN: 'esplora', ESPLORA_URL: mainnet.url })
    harnesses.push(ok, wrong)
    const okEntry = await rails(ok)
    expect([okEntry.verdict, okEntry.problems]).toEqual(['ok', []])
    expect(okEntry.report).toMatchObject({
      adapter: 'esplora',
      reachable: true,
      network: 'regtest',
      synced: true,
    })
    const wrongEntry = await rails(wrong)
    expect(wrongEntry.verdict).toBe('problem')
    expect(wrongEntry.problems.join(' ')).toContain(
      'esplora serves mainnet, the service is configured for regtest',
    )
  }, 60_000)
})
