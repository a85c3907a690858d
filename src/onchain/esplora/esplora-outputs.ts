/**
 * What the Esplora rail reads of the chain: the outputs paid to an address (mempool and confirmed
 * history), the state of a transaction, and the fee rate a send should pay.
 */
import {
  asArray,
  asObject,
  checkAddressText,
  checkTxid,
  parseJsonText,
  TRANSPORT_CODES,
} from '../../rails/http-json.js'
import { RailFailure, type OnchainOutput, type OnchainTxState } from '../../rails/rail.js'
import { canonicalAddress } from '../../shared/address-spelling.js'
import type { EsploraDeps } from './esplora-deps.js'
import { confirmationsOf, getJson, tipHeight } from './esplora-http.js'

/** A bound on the confirmed-history pages read for one address (Esplora serves 25 per page). */
const CHAIN_PAGES_MAX = 40

/** `OnchainRail.listOutputs`. */
export async function listOutputs(deps: EsploraDeps, address: string): Promise<OnchainOutput[]> {
  const { request } = deps
  checkAddressText(address)
  const path = `/address/${address}/txs`
  const txs = asArray(await getJson(request, `${path}/mempool`), 'mempool txs')
  let page = asArray(await getJson(request, `${path}/chain`), 'chain txs')
  for (let pages = 1; page.length > 0; pages++) {
    txs.push(...page)
    if (pages >= CHAIN_PAGES_MAX) break
    const last = String(asObject(page[page.length - 1], 'tx').txid)
    checkTxid(last)
    page = asArray(await getJson(request, `${path}/chain/${last}`), 'chain txs')
  }
  return outputsTo(address, txs, await tipHeight(request))
}

/** The outputs paid to `address` among Esplora transactions, each once. */
export function outputsTo(address: string, txs: unknown[], tip: number): OnchainOutput[] {
  const outputs = new Map<string, OnchainOutput>()
  for (const rawTx of txs) {
    const tx = asObject(rawTx, 'tx')
    const txid = String(tx.txid)
    const status = asObject(tx.status ?? {}, 'tx status')
    const confirmations = confirmationsOf(status, tip)
    const sources = spentAddresses(tx.vin)
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
        ...(sources.length > 0 ? { sources } : {}),
      })
    })
  }
  return [...outputs.values()]
}

const SOURCES_MAX = 100

/**
 * Who paid: the addresses of the outputs a transaction's inputs spend. electrs gives each input its
 * `prevout` with `scriptpubkey_address` (src/rest.rs, TxInValue and TxOutValue; absent for a
 * coinbase and for a script without an address), so no second request is needed.
 */
function spentAddresses(vin: unknown): string[] {
  if (!Array.isArray(vin)) return []
  const out = new Set<string>()
  for (const input of vin.slice(0, SOURCES_MAX)) {
    const prevout = (input as { prevout?: { scriptpubkey_address?: unknown } } | null)?.prevout
    if (typeof prevout?.scriptpubkey_address === 'string') out.add(prevout.scriptpubkey_address)
  }
  return [...out]
}

/** `OnchainRail.getTransaction`. */
export async function getTransaction(deps: EsploraDeps, txid: string): Promise<OnchainTxState | null> {
  checkTxid(txid)
  // `/tx/:txid/status` cannot tell: electrs answers {"confirmed":false} for any txid it does not
  // have (src/rest.rs, get_tx_status reads only the chain). `/tx/:txid` looks in the chain and the
  // mempool and is the one that answers 404 for a transaction it does not know.
  const text = await deps.request(`/tx/${txid}`)
  if (text === null) return null
  const tx = asObject(parseJsonText(text, 'esplora tx'), 'tx')
  const status = asObject(tx.status ?? {}, 'tx status')
  if (status.confirmed === true)
    return { confirmations: confirmationsOf(status, await tipHeight(deps.request)) }
  // Unconfirmed is not "in the mempool": electrs keeps the transactions of orphaned blocks in its
  // txstore for ever (src/new_index/schema.rs), so a send whose block left the chain still answers
  // here, {"confirmed":false}, after every mempool dropped it.
  const conflictedDepth = await confirmedConflictDepth(deps, txid, tx)
  if (conflictedDepth !== null) return { confirmations: 0, conflictedDepth }
  return { confirmations: 0, inMempool: await inMempool(deps, txid, tx) }
}

/** A bound on the inputs looked up for a conflict. */
const CONFLICT_INPUTS_MAX = 50
/** electrs' page of an address's mempool transactions (src/rest.rs, MAX_MEMPOOL_TXS). */
const MEMPOOL_PAGE = 50

/**
 * The depth of a transaction in the best chain that spends one of `tx`'s inputs, or null when
 * none does (GET /tx/:txid/outspend/:vout: the best chain's spend or the mempool's, query.rs
 * lookup_spend). Such a conflict is the chain's word that `tx` can never confirm.
 */
export async function confirmedConflictDepth(
  deps: EsploraDeps,
  txid: string,
  tx: Record<string, unknown>,
): Promise<number | null> {
  const inputs = asArray(tx.vin ?? [], 'vin').slice(0, CONFLICT_INPUTS_MAX)
  for (const raw of inputs) {
    const input = asObject(raw, 'vin entry')
    const prev = String(input.txid)
    checkTxid(prev)
    const vout = Number(input.vout)
    if (!Number.isSafeInteger(vout) || vout < 0) continue
    const text = await deps.request(`/tx/${prev}/outspend/${vout}`)
    if (text === null) continue
    const spend = asObject(parseJsonText(text, 'esplora outspend'), 'outspend')
    if (spend.spent !== true || spend.txid === txid) continue
    const status = asObject(spend.status ?? {}, 'outspend status')
    if (status.confirmed === true) return confirmationsOf(status, await tipHeight(deps.request))
  }
  return null
}

/**
 * Whether Esplora's mempool holds `tx`, from the mempool history of the address of its first
 * output (GET /address/:address/txs/mempool, newest first, at most MEMPOOL_PAGE). Not found in a
 * full page means unknown, and reads as false: offering the same signed transaction again is
 * harmless (a node that holds it answers its txid).
 */
async function inMempool(deps: EsploraDeps, txid: string, tx: Record<string, unknown>): Promise<boolean> {
  const output = asArray(tx.vout ?? [], 'vout')
    .map((o) => asObject(o, 'vout entry'))
    .find((o) => typeof o.scriptpubkey_address === 'string')
  if (!output) return false
  const address = String(output.scriptpubkey_address)
  checkAddressText(address)
  const page = asArray(await getJson(deps.request, `/address/${address}/txs/mempool`), 'mempool txs')
  return page.slice(0, MEMPOOL_PAGE).some((entry) => asObject(entry, 'tx').txid === txid)
}

/** `OnchainRail.estimateFeeRate`: whole sat/vB. */
export async function estimateFeeRate(deps: EsploraDeps, targetBlocks: number): Promise<bigint> {
  const estimates = asObject(await getJson(deps.request, '/fee-estimates'), 'fee-estimates')
  const rate = feeRateFor(estimates, targetBlocks)
  if (rate !== null) return rate
  if (deps.options.network === 'regtest') return 1n
  throw new RailFailure('fee_estimate_unavailable', 'esplora has no fee estimates', true)
}

/** The whole sat/vB rate of `/fee-estimates` for a target, null when it has no usable estimate. */
export function feeRateFor(estimates: Record<string, unknown>, targetBlocks: number): bigint | null {
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
  if (!chosen) return null
  // A rate, not an amount: rounding the float up to whole sat/vB is the whole computation.
  const satsPerVb = BigInt(Math.ceil(chosen.rate))
  return satsPerVb < 1n ? 1n : satsPerVb
}
