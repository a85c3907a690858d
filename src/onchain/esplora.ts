/**
 * The on-chain rail watching through an Esplora REST API (Blockstream's electrs, mempool.space, or
 * one's own instance). Esplora indexes every address, so nothing needs importing, but it holds no
 * keys: sending needs a signer of the operator's (`broadcast.sign`), and this rail then only
 * broadcasts the signed transaction. Without one, `send` refuses with `not_supported`.
 *
 * Esplora amounts are integer satoshis; fee estimates are sat/vB floats keyed by target blocks.
 */
import { hex } from '@scure/base'
import { Transaction } from '@scure/btc-signer'

import {
  asArray,
  asObject,
  checkAddressText,
  checkTxid,
  httpRequest,
  NODE_TIMEOUT_MS_DEFAULT,
  parseJsonText,
  TRANSPORT_CODES,
} from '../rails/http-json.js'
import type { Network } from '../rails/network.js'
import { RailFailure, type OnchainOutput, type OnchainRail, type RailCheckReport } from '../rails/rail.js'
import { canonicalAddress } from './address.js'
import { esploraPayments, esploraReserves, type EsploraReconcileDeps } from './esplora-reconcile.js'

/** Signs a send with the operator's keys; must return the same transaction for the same `requestId`. */
export type OnchainSigner = (input: {
  address: string
  amountSats: bigint
  feeRateSatPerVb: bigint
  requestId: string
}) => Promise<{ rawTxHex: string }>

export interface EsploraRailOptions {
  /** The API root, e.g. `https://blockstream.info/api` or `http://127.0.0.1:3002`. */
  url: string
  network: Network
  timeoutMs?: number
  /**
   * Sending through Esplora: a signer builds the transaction, Esplora broadcasts it. `addresses`,
   * where the signer tells them, are the ones its coins and change sit on (for reconciliation).
   */
  broadcast?: { sign: OnchainSigner; addresses?: () => Promise<string[]> }
  /**
   * The receive addresses the service has handed out: with them the rail can report what they hold
   * and what they received (reconciliation). Without them it cannot.
   */
  receiveAddresses?: () => Promise<string[]>
  /** ONCHAIN_CONFIRMATIONS: fewer confirmations are still arriving, not yet in the books. Default 1. */
  creditConfirmations?: number
}

/** A bound on the confirmed-history pages read for one address (Esplora serves 25 per page). */
const CHAIN_PAGES_MAX = 40

export function createEsploraRail(options: EsploraRailOptions): OnchainRail {
  const base = options.url.replace(/\/+$/, '')
  const timeoutMs = options.timeoutMs ?? NODE_TIMEOUT_MS_DEFAULT

  /** One GET or POST; the body text of a 2xx answer, null for a 404, a failure for the rest. */
  async function request(path: string, body?: string): Promise<string | null> {
    const res = await httpRequest({
      url: base + path,
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? {} : { 'content-type': 'text/plain' },
      body,
      timeoutMs,
    })
    if (res.status >= 200 && res.status < 300) return res.text
    if (res.status === 404) return null
    const text = `esplora ${path.split('/').slice(0, 2).join('/')}: HTTP ${res.status} ${res.text.slice(0, 1000)}`
    // 429 is a public instance's rate limit: it passes. Other 4xx say the request itself is wrong.
    const retryable = res.status === 429 || res.status >= 500
    throw new RailFailure(res.status === 400 ? 'rejected' : 'node_error', text, retryable)
  }

  async function getJson(path: string): Promise<unknown> {
    const text = await request(path)
    if (text === null) throw new RailFailure('node_error', `esplora ${path}: not found`, false)
    return parseJsonText(text, `esplora ${path}`)
  }

  async function tipHeight(): Promise<number> {
    const text = (await request('/blocks/tip/height')) ?? ''
    if (!/^\d+$/.test(text.trim()))
      throw new RailFailure(TRANSPORT_CODES.badResponse, 'esplora tip height', true)
    return Number(text.trim())
  }

  function confirmationsOf(status: Record<string, unknown>, tip: number): number {
    if (status.confirmed !== true) return 0
    const height = Number(status.block_height)
    if (!Number.isSafeInteger(height))
      throw new RailFailure(TRANSPORT_CODES.badResponse, 'block_height', true)
    // A block above the tip we read a moment ago is a race with a new block: count it once.
    return Math.max(1, tip - height + 1)
  }

  const receiveAddresses = options.receiveAddresses
  const reconcileDeps: EsploraReconcileDeps | null = receiveAddresses
    ? {
        getJson,
        tipHeight,
        receiveAddresses,
        walletAddresses: options.broadcast?.addresses ?? (async () => []),
        creditConfirmations: options.creditConfirmations ?? 1,
      }
    : null

  return {
    name: 'esplora',
    network: options.network,
    ...(reconcileDeps
      ? {
          reserves: () => esploraReserves(reconcileDeps),
          payments: (sinceMs: number) => esploraPayments(reconcileDeps, sinceMs),
        }
      : {}),
    // The signer returns the same signed transaction for the same request id (its contract).
    resendsSameTransaction: true,

    async watchAddress(address) {
      // Esplora indexes every address; there is nothing to import.
      checkAddressText(address)
    },

    async listOutputs(address): Promise<OnchainOutput[]> {
      checkAddressText(address)
      const path = `/address/${address}/txs`
      const txs = asArray(await getJson(`${path}/mempool`), 'mempool txs')
      let page = asArray(await getJson(`${path}/chain`), 'chain txs')
      for (let pages = 1; page.length > 0; pages++) {
        txs.push(...page)
        if (pages >= CHAIN_PAGES_MAX) break
        const last = String(asObject(page[page.length - 1], 'tx').txid)
        checkTxid(last)
        page = asArray(await getJson(`${path}/chain/${last}`), 'chain txs')
      }
      const tip = await tipHeight()
      const outputs = new Map<string, OnchainOutput>()
      for (const rawTx of txs) {
        const tx = asObject(rawTx, 'tx')
        const txid = String(tx.txid)
        const status = asObject(tx.status ?? {}, 'tx status')
        const confirmations = confirmationsOf(status, tip)
        asArray(tx.vout, 'vout').forEach((rawOut, vout) => {
          const out = asObject(rawOut, 'vout entry')
          // electrs writes scriptpubkey_address from the script, so bech32 in lower case; compare
          // canonical spellings so that an address given in upper case still finds its outputs.
          if (typeof out.scriptpubkey_address !== 'string') return
          if (canonicalAddress(out.scriptpubkey_address) !== canonicalAddress(address)) return
          const value = out.value
          if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
            throw new RailFailure(TRANSPORT_CODES.badResponse, 'vout value is not whole satoshis', true)
          }
          // A transaction can move from the mempool into a block between our two reads; keep it once.
          const blockHash = typeof status.block_hash === 'string' ? status.block_hash : undefined
          outputs.set(`${txid}:${vout}`, {
            txid,
            vout,
            amountSats: BigInt(value),
            confirmations,
            ...(blockHash && confirmations > 0 ? { blockHash } : {}),
          })
        })
      }
      return [...outputs.values()]
    },

    async estimateFeeRate(targetBlocks) {
      const estimates = asObject(await getJson('/fee-estimates'), 'fee-estimates')
      // Keys are targets in blocks (1-25, 144, 504, 1008). The largest target not above ours is the
      // cheapest rate still expected to confirm in time.
      let best: { target: number; rate: number } | null = null
      let fastest: { target: number; rate: number } | null = null
      for (const [key, value] of Object.entries(estimates)) {
        const target = Number(key)
        if (!Number.isSafeInteger(target) || typeof value !== 'number' || !Number.isFinite(value)) continue
        if (target <= targetBlocks && (!best || target > best.target)) best = { target, rate: value }
        if (!fastest || target < fastest.target) fastest = { target, rate: value }
      }
      const chosen = best ?? fastest
      if (!chosen) {
        if (options.network === 'regtest') return 1n
        throw new RailFailure('fee_estimate_unavailable', 'esplora has no fee estimates', true)
      }
      // A rate, not an amount: rounding the float up to whole sat/vB is the whole computation.
      const satsPerVb = BigInt(Math.ceil(chosen.rate))
      return satsPerVb < 1n ? 1n : satsPerVb
    },

    async send(input) {
      checkAddressText(input.address)
      if (!options.broadcast) {
        throw new RailFailure(
          'not_supported',
          'esplora holds no keys: configure a signer or use bitcoind',
          false,
        )
      }
      const { rawTxHex } = await options.broadcast.sign(input)
      const txid = txidOf(rawTxHex)
      await broadcast(rawTxHex, txid)
      return { txid }
    },

    async getTransaction(txid) {
      checkTxid(txid)
      // `/tx/:txid/status` cannot tell: electrs answers {"confirmed":false} for any txid it does not
      // have (src/rest.rs, get_tx_status reads only the chain). `/tx/:txid` looks in the chain and the
      // mempool and is the one that answers 404 for a transaction it does not know.
      const text = await request(`/tx/${txid}`)
      if (text === null) return null
      const tx = asObject(parseJsonText(text, 'esplora tx'), 'tx')
      const status = asObject(tx.status ?? {}, 'tx status')
      if (status.confirmed !== true) return { confirmations: 0, inMempool: true }
      return { confirmations: confirmationsOf(status, await tipHeight()) }
    },

    async check() {
      return checkEsplora(request, options.network)
    },
  }

  /**
   * POST /tx. electrs answers every failed broadcast with HTTP 400 and text: the node's refusal as
   * `sendrawtransaction RPC error: {"code":..,"message":..}`, or `Connection error` when electrs could
   * not reach its node (src/rest.rs, the POST /tx arm; src/daemon.rs, parse_jsonrpc_reply). A refusal
   * of a transaction the index already holds (a rebroadcast) counts as sent; a refusal of one it does
   * not hold is final; anything else is retried.
   */
  async function broadcast(rawTxHex: string, txid: string): Promise<void> {
    let answer: string | null
    try {
      answer = await request('/tx', rawTxHex)
    } catch (err) {
      if (!(err instanceof RailFailure) || err.retryable) throw err
      const refusal = parseBroadcastRefusal(err.message)
      if (!refusal) throw new RailFailure('node_unavailable', err.message, true)
      if ((await request(`/tx/${txid}`)) !== null) return
      throw new RailFailure(
        'rejected',
        `esplora refused the transaction: ${refusal.message} (${refusal.code})`,
        false,
      )
    }
    if (answer === null) throw new RailFailure('node_error', 'esplora POST /tx: not found', false)
    if (answer.trim() !== txid) {
      throw new RailFailure(TRANSPORT_CODES.badResponse, 'esplora answered another txid', true)
    }
  }
}

/** The node's refusal inside electrs' broadcast error text, or null when the text is not one. */
export function parseBroadcastRefusal(text: string): { code: number; message: string } | null {
  const at = text.indexOf('sendrawtransaction RPC error: ')
  if (at < 0) return null
  try {
    const error = JSON.parse(text.slice(at + 'sendrawtransaction RPC error: '.length)) as {
      code?: unknown
      message?: unknown
    }
    if (typeof error.code !== 'number') return null
    return { code: error.code, message: String(error.message ?? '') }
  } catch {
    return null
  }
}

/** The hash of block 0 of each network: Esplora tells no network name, its genesis block does. */
export const GENESIS_HASHES: Record<Network, string[]> = {
  mainnet: ['000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f'],
  // testnet3 and testnet4.
  testnet: [
    '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943',
    '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043',
  ],
  signet: ['00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6'],
  regtest: ['0f9188f13cb7b2e71f2a335e3a4fc328bf5beb436012afef4cd4f1f3c7a4f9a2'],
}

/** How old Esplora's tip may be before the index counts as behind: blocks come every ten minutes or so. */
const TIP_AGE_MAX_S = 2 * 3600

async function checkEsplora(
  request: (path: string) => Promise<string | null>,
  network: Network,
): Promise<RailCheckReport> {
  const report: RailCheckReport = { rail: 'onchain', adapter: 'esplora', reachable: false, problems: [] }
  try {
    const genesis = (await request('/block-height/0'))?.trim()
    report.reachable = true
    const known = Object.entries(GENESIS_HASHES).find(([, hashes]) => hashes.includes(genesis ?? ''))
    if (known) report.network = known[0]
    if (known?.[0] !== network)
      report.problems.push(
        `esplora serves ${known ? known[0] : `an unknown chain (genesis ${genesis})`}, the service is configured for ${network}`,
      )
    const tipHash = (await request('/blocks/tip/hash'))?.trim() ?? ''
    const tip = asObject(
      parseJsonText((await request(`/block/${tipHash}`)) ?? '', 'esplora tip block'),
      'block',
    )
    const ageS = Math.floor(Date.now() / 1000) - Number(tip.timestamp)
    // Regtest makes blocks only when asked; an old tip there says nothing.
    report.synced = network === 'regtest' || ageS <= TIP_AGE_MAX_S
    if (!report.synced)
      report.problems.push(
        `esplora's tip (height ${String(tip.height)}) is ${Math.round(ageS / 60)} minutes old`,
      )
    // Esplora has no version endpoint, and no wallet: there is no version or balance to report.
  } catch (err) {
    report.problems.push(`esplora: ${(err as Error).message}`)
  }
  return report
}

/** The txid of a signed raw transaction: checked here so a signer's mistake is caught before broadcast. */
function txidOf(rawTxHex: string): string {
  try {
    return Transaction.fromRaw(hex.decode(rawTxHex.toLowerCase()), {
      allowUnknownInputs: true,
      allowUnknownOutputs: true,
      disableScriptCheck: true,
    }).id
  } catch (err) {
    throw new RailFailure(
      'invalid_transaction',
      `signer returned an unparseable transaction: ${(err as Error).message}`,
      false,
    )
  }
}
