/**
 * Receiving on the bitcoind rail: the key-less watch wallet (found, loaded or created), the ranged
 * receive descriptor imported and widened there as indexes are handed out (or one `addr()` per
 * address without an xpub), each address labelled with itself, and the receipts to an address.
 */
import { asArray, asObject, checkAddressText } from '../../rails/http-json.js'
import { RailFailure, type OnchainOutput } from '../../rails/rail.js'
import { canonicalAddress } from '../../shared/address-spelling.js'
import { btcToSats } from './bitcoind-amount.js'
import { PAGE_SIZE, type BitcoindDeps } from './bitcoind-deps.js'
import { withChecksum } from './bitcoind-descriptor.js'
import { call, callExpecting, importResultOk, mapRpcError } from './bitcoind-rpc.js'

/** How far beyond the highest index handed out the ranged descriptor is imported (its gap). */
export const DESCRIPTOR_RANGE_AHEAD = 1000
/** A bound on the receipts to one address we read; a fresh address per receive sees a handful. */
const OUTPUTS_PER_ADDRESS_MAX = 5_000
/** How many labelled addresses one process remembers before it asks again. */
const LABELLED_CACHE_MAX = 100_000

/** getwalletinfo of a wallet, null when it is not loaded (-18). */
export async function walletInfo(
  deps: BitcoindDeps,
  wallet: string,
): Promise<Record<string, unknown> | null> {
  const answer = await callExpecting(deps, wallet, 'getwalletinfo', [], [-18])
  return answer.refused ? null : asObject(answer.result, 'getwalletinfo')
}

/**
 * The watch wallet exists, is loaded, and holds no private keys; created blank and key-less when
 * the node has no wallet of that name. A wallet with keys is refused: it cannot take key-less
 * descriptors, and a hot wallet must not double as the watch wallet.
 */
export function ensureWatchWallet(deps: BitcoindDeps): Promise<void> {
  const { watch, watchWallet } = deps
  watch.ready ??= (async () => {
    let info = await walletInfo(deps, watchWallet)
    if (!info) {
      await loadOrCreateWatchWallet(deps)
      info = asObject(await call(deps, watchWallet, 'getwalletinfo', []), 'getwalletinfo')
    }
    if (info.private_keys_enabled !== false) {
      throw new RailFailure(
        'watch_wallet_has_keys',
        `bitcoind wallet ${watchWallet} has private keys: the watch wallet must be created with disable_private_keys=true`,
        false,
      )
    }
    if (info.descriptors === false) {
      throw new RailFailure(
        'watch_wallet_legacy',
        `bitcoind wallet ${watchWallet} is not a descriptor wallet`,
        false,
      )
    }
    if (deps.receiveDescriptor) watch.importedRangeEnd = await currentRangeEnd(deps)
  })().catch((err: unknown) => {
    watch.ready = null
    throw err
  })
  return watch.ready
}

async function loadOrCreateWatchWallet(deps: BitcoindDeps): Promise<void> {
  const { watchWallet } = deps
  const loaded = await callExpecting(
    deps,
    null,
    'loadwallet',
    { filename: watchWallet, load_on_startup: true },
    // -35: already loaded (a race with another instance). -18: no such wallet file: create it.
    [-35, -18],
  )
  if (loaded.refused?.code !== -18) return
  // src/wallet/rpc/wallet.cpp, createwallet: a blank descriptor wallet with private keys disabled.
  const created = await callExpecting(
    deps,
    null,
    'createwallet',
    {
      wallet_name: watchWallet,
      disable_private_keys: true,
      blank: true,
      descriptors: true,
      load_on_startup: true,
    },
    [-4],
  )
  if (!created.refused) return
  // -4 "Wallet file verification failed ... already exists": another instance created it first.
  if (!/already exists/i.test(created.refused.message)) throw mapRpcError(created.refused)
  await loadOrCreateWatchWallet(deps)
}

/** The end of our ranged descriptor's range in the watch wallet, null when not imported yet. */
export async function currentRangeEnd(deps: BitcoindDeps): Promise<number | null> {
  const listed = asObject(await call(deps, deps.watchWallet, 'listdescriptors', []), 'listdescriptors')
  for (const raw of asArray(listed.descriptors, 'listdescriptors descriptors')) {
    const d = asObject(raw, 'descriptor')
    if (String(d.desc).split('#')[0] !== deps.receiveDescriptor) continue
    const range = Array.isArray(d.range) ? d.range : null
    return range ? Number(range[1]) : null
  }
  return null
}

/** Import (or widen) the ranged receive descriptor so that it covers `index` and some way beyond. */
async function coverIndex(deps: BitcoindDeps, index: number): Promise<void> {
  const { receiveDescriptor, watch, options } = deps
  if (!receiveDescriptor) return
  if (watch.importedRangeEnd !== null && index <= watch.importedRangeEnd) return
  const end = index + (options.descriptorRangeAhead ?? DESCRIPTOR_RANGE_AHEAD)
  // A widened range of a descriptor already imported needs no rescan of the past: its new
  // addresses were never handed out. The first import goes back as far as the operator says.
  const timestamp = watch.importedRangeEnd === null ? (options.importTimestamp ?? 'now') : 'now'
  await importDescriptor(deps, {
    desc: withChecksum(receiveDescriptor),
    timestamp,
    range: [0, end],
    active: false,
    internal: false,
  })
  watch.importedRangeEnd = Math.max(watch.importedRangeEnd ?? 0, end)
}

async function importDescriptor(deps: BitcoindDeps, request: Record<string, unknown>): Promise<void> {
  importResultOk(
    asArray(await call(deps, deps.watchWallet, 'importdescriptors', [[request]]), 'importdescriptors'),
  )
}

/** `OnchainRail.watchAddress`. */
export async function watchAddress(deps: BitcoindDeps, address: string, index?: number): Promise<void> {
  const { receiveDescriptor, watchWallet } = deps
  checkAddressText(address)
  await ensureWatchWallet(deps)
  if (receiveDescriptor && index !== undefined) {
    await coverIndex(deps, index)
  } else {
    await importDescriptor(deps, { desc: withChecksum(`addr(${address})`), timestamp: 'now', label: address })
  }
  const info = asObject(await call(deps, watchWallet, 'getaddressinfo', [address]), 'getaddressinfo')
  if (info.ismine !== true) {
    throw new RailFailure(
      'address_not_watched',
      `bitcoind wallet ${watchWallet} does not watch ${address}: the descriptor imported there is of another key`,
      false,
    )
  }
  // The label is the address itself, so `listtransactions <address>` lists exactly its receipts.
  // A ranged descriptor's addresses carry no label of their own (importdescriptors refuses one),
  // so the address gets it through setlabel (src/wallet/rpc/addresses.cpp).
  if (receiveDescriptor && index !== undefined) await call(deps, watchWallet, 'setlabel', [address, address])
  deps.watch.labelled.add(address)
}

/**
 * An address of the ranged descriptor handed out before this version (or whose setlabel was lost)
 * has no label, and `listtransactions <label>` would list nothing for it: give it its label.
 */
async function ensureLabel(deps: BitcoindDeps, address: string): Promise<void> {
  const { watchWallet, watch } = deps
  await ensureWatchWallet(deps)
  const info = asObject(await call(deps, watchWallet, 'getaddressinfo', [address]), 'getaddressinfo')
  const labels = Array.isArray(info.labels) ? info.labels : []
  if (info.ismine === true && !labels.includes(address))
    await call(deps, watchWallet, 'setlabel', [address, address])
  if (watch.labelled.size >= LABELLED_CACHE_MAX) watch.labelled.clear()
  watch.labelled.add(address)
}

/** `OnchainRail.listOutputs`: the receipts to `address`, read from the watch wallet by its label. */
export async function listOutputs(deps: BitcoindDeps, address: string): Promise<OnchainOutput[]> {
  checkAddressText(address)
  if (deps.receiveDescriptor && !deps.watch.labelled.has(address)) await ensureLabel(deps, address)
  const outputs = new Map<string, OnchainOutput>()
  for (let skip = 0; skip < OUTPUTS_PER_ADDRESS_MAX; skip += PAGE_SIZE) {
    const page = asArray(
      await call(deps, deps.watchWallet, 'listtransactions', {
        label: address,
        count: PAGE_SIZE,
        skip,
        include_watchonly: true,
      }),
      'listtransactions',
    )
    for (const raw of page) {
      const output = receiptTo(address, raw)
      if (output) outputs.set(`${output.txid}:${output.vout}`, output)
    }
    if (page.length < PAGE_SIZE) break
  }
  return [...outputs.values()]
}

/** A `listtransactions` entry as an output paid to `address`, or null when it is none. */
export function receiptTo(address: string, raw: unknown): OnchainOutput | null {
  const e = asObject(raw, 'listtransactions entry')
  const confirmations = Number(e.confirmations)
  // Negative confirmations mark a transaction that conflicts with the chain: it will never pay.
  // Bitcoin Core writes addresses from the script (bech32 in lower case); compare canonical forms.
  const sameAddress =
    typeof e.address === 'string' && canonicalAddress(e.address) === canonicalAddress(address)
  if (e.category !== 'receive' || !sameAddress || !(confirmations >= 0)) return null
  const txid = String(e.txid)
  const vout = Number(e.vout)
  const blockHash = typeof e.blockhash === 'string' && confirmations > 0 ? e.blockhash : undefined
  return { txid, vout, amountSats: btcToSats(e.amount), confirmations, ...(blockHash ? { blockHash } : {}) }
}

const PAYERS_MAX = 100

/**
 * `OnchainRail.payersOf`: `getrawtransaction` at verbosity 2 (Bitcoin Core 25 and later) gives each
 * input its `prevout`, whose `scriptPubKey.address` is who paid (src/rpc/rawtransaction.cpp,
 * getrawtransaction and TxToJSON with TxVerbosity::SHOW_DETAILS_AND_PREVOUT; src/core_write.cpp).
 * With the block hash a confirmed transaction is found without `-txindex`. -5 (the node does not
 * have it: no txindex and no block given) answers none, as does an older node without prevouts.
 */
export async function payersOf(deps: BitcoindDeps, txid: string, blockHash?: string): Promise<string[]> {
  const params = blockHash ? { txid, verbosity: 2, blockhash: blockHash } : { txid, verbosity: 2 }
  const answer = await callExpecting(deps, null, 'getrawtransaction', params, [-5])
  if (answer.refused) return []
  const vin = asObject(answer.result, 'getrawtransaction').vin
  if (!Array.isArray(vin)) return []
  const out = new Set<string>()
  for (const input of vin.slice(0, PAYERS_MAX)) {
    const address = (input as { prevout?: { scriptPubKey?: { address?: unknown } } } | null)?.prevout
      ?.scriptPubKey?.address
    if (typeof address === 'string') out.add(address)
  }
  return [...out]
}
