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
} from '../http-json.js'
import type { Network } from '../network.js'
import { RailFailure, type OnchainOutput, type OnchainRail } from '../rail.js'

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
  /** Sending through Esplora: a signer builds the transaction, Esplora broadcasts it. */
  broadcast?: { sign: OnchainSigner }
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
    const text = `esplora ${path.split('/').slice(0, 2).join('/')}: HTTP ${res.status} ${res.text.slice(0, 200)}`
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

  return {
    name: 'esplora',
    network: options.network,

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
        const confirmations = confirmationsOf(asObject(tx.status ?? {}, 'tx status'), tip)
        asArray(tx.vout, 'vout').forEach((rawOut, vout) => {
          const out = asObject(rawOut, 'vout entry')
          if (out.scriptpubkey_address !== address) return
          const value = out.value
          if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
            throw new RailFailure(TRANSPORT_CODES.badResponse, 'vout value is not whole satoshis', true)
          }
          // A transaction can move from the mempool into a block between our two reads; keep it once.
          outputs.set(`${txid}:${vout}`, { txid, vout, amountSats: BigInt(value), confirmations })
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
      // Broadcasting the same signed transaction twice is harmless; Esplora then refuses it as known.
      try {
        const answer = await request('/tx', rawTxHex)
        if (answer !== null && answer.trim() !== txid) {
          throw new RailFailure(TRANSPORT_CODES.badResponse, 'esplora answered another txid', true)
        }
      } catch (err) {
        if (!(err instanceof RailFailure) || err.retryable) throw err
        // Refused: already in the mempool or a block counts as sent; anything else is a real refusal.
        if ((await request(`/tx/${txid}/status`)) === null) throw err
      }
      return { txid }
    },

    async getTransaction(txid) {
      checkTxid(txid)
      const text = await request(`/tx/${txid}/status`)
      if (text === null) return null
      const status = asObject(parseJsonText(text, 'esplora tx status'), 'tx status')
      if (status.confirmed !== true) return { confirmations: 0 }
      return { confirmations: confirmationsOf(status, await tipHeight()) }
    },
  }
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
