/**
 * The on-chain rail on Bitcoin Core's wallet, through JSON-RPC 1.0 over HTTP basic auth.
 *
 * Two wallets are involved. Sends need a wallet with keys (`wallet`, the hot wallet). Receive
 * addresses are derived by the service from its account xpub; Bitcoin Core accepts key-less
 * descriptors only into a wallet whose private keys are disabled (src/wallet/rpc/backup.cpp,
 * importdescriptors: -4 "Cannot import descriptor without private keys to a wallet with private
 * keys enabled"), so they are watched in a separate watch-only wallet (`watchWallet`, default
 * `<wallet>-watch`, created blank and key-less when missing). There the rail imports ONE ranged
 * descriptor, `wpkh(<xpub>/0/*)`, and widens its range as indexes are handed out, instead of one
 * `addr()` per address.
 *
 * `sendtoaddress` answers with a txid even when the node's mempool refused the transaction: the
 * wallet keeps it and only logs "Transaction cannot be broadcast immediately"
 * (src/wallet/wallet.cpp, CWallet::CommitTransaction). Every send is therefore checked against the
 * mempool (`getmempoolentry`); one the mempool refuses is abandoned and reported as refused.
 *
 * Amounts in RPC answers are JSON numbers in BTC with eight decimals. They are parsed from their
 * source text, never through a float; amounts we send are written as decimal strings, which every
 * amount argument of the RPC accepts.
 */
import { isLosslessNumber, parse as losslessParse } from 'lossless-json'

import { normaliseDecimal } from '../shared/amount.js'
import { deriveAccountXpub } from './bip84.js'
import { isPassingRefusal } from './refusal.js'
import {
  asArray,
  asObject,
  checkAddressText,
  checkTxid,
  httpRequest,
  NODE_TIMEOUT_MS_DEFAULT,
  TRANSPORT_CODES,
} from '../rails/http-json.js'
import type { Network } from '../rails/network.js'
import {
  RailFailure,
  type OnchainOutput,
  type OnchainRail,
  type OnchainTxState,
  type RailCheckReport,
} from '../rails/rail.js'
import { canonicalAddress } from './address.js'
import { bitcoindPayments, bitcoindReserves, type BitcoindReconcileDeps } from './bitcoind-reconcile.js'

export interface BitcoindRailOptions {
  /** The RPC listener, e.g. `http://127.0.0.1:8332` (18443 on regtest). */
  url: string
  /** `rpcuser`/`rpcpassword`, an `rpcauth` pair, or `__cookie__` and the cookie file's secret. */
  user: string
  password: string
  /** The hot wallet that sends. */
  wallet: string
  /** The watch-only wallet receive addresses are imported into; defaults to `<wallet>-watch`. */
  watchWallet?: string
  /**
   * The account-level extended public key receive addresses derive from (m/84'/coin'/0', as xpub,
   * tpub, zpub or vpub). With it the watch wallet holds one ranged descriptor; without it each
   * address is imported on its own as `addr()`.
   */
  accountXpub?: string
  /** The `timestamp` of the first descriptor import: how far back the node rescans ('now' for a new service). */
  importTimestamp?: number | 'now'
  /** How far beyond the highest index handed out the ranged descriptor reaches (default 1000). */
  descriptorRangeAhead?: number
  network: Network
  timeoutMs?: number
  /**
   * ONCHAIN_CONFIRMATIONS, for reconciliation: outputs with fewer confirmations are reported as
   * still arriving, and payments with fewer are not listed (the service has not posted them). Default 1.
   */
  creditConfirmations?: number
}

/** Wallet transactions read per `listtransactions` page. */
const PAGE_SIZE = 500
/** How far back a send is looked for by its request id: sends older than this are not retried anyway. */
const SEND_SCAN_TXS_MAX = 5_000
/** A bound on the receipts to one address we read; a fresh address per receive sees a handful. */
const OUTPUTS_PER_ADDRESS_MAX = 5_000
/** `estimatesmartfee` accepts targets from 1 to 1008 blocks. */
const CONF_TARGET_MAX = 1008

const SATS_PER_BTC = 100_000_000n
/** How far beyond the highest index handed out the ranged descriptor is imported (its gap). */
export const DESCRIPTOR_RANGE_AHEAD = 1000
/** How many labelled addresses one process remembers before it asks again. */
const LABELLED_CACHE_MAX = 100_000
/** A bound on following fee-bump replacements from one send to the next. */
const REPLACEMENTS_MAX = 25
/** Bitcoin Core's `getblockchaininfo.chain` names for our networks (src/kernel/chainparams.cpp). */
const CHAIN_NAMES: Record<string, Network> = {
  main: 'mainnet',
  test: 'testnet',
  testnet4: 'testnet',
  signet: 'signet',
  regtest: 'regtest',
}

export function createBitcoindRail(options: BitcoindRailOptions): OnchainRail {
  const base = options.url.replace(/\/+$/, '')
  const timeoutMs = options.timeoutMs ?? NODE_TIMEOUT_MS_DEFAULT
  const authorization = 'Basic ' + Buffer.from(`${options.user}:${options.password}`).toString('base64')
  const hotWallet = options.wallet
  const watchWallet = options.watchWallet ?? `${options.wallet}-watch`
  const receiveDescriptor = options.accountXpub
    ? `wpkh(${deriveAccountXpub(options.accountXpub, options.network)}/0/*)`
    : null
  /** The highest index the watch wallet's ranged descriptor covers, once read or imported. */
  let importedRangeEnd: number | null = null
  let watchWalletReady: Promise<void> | null = null
  /** Addresses known to carry their label in the watch wallet (a bounded cache of this process). */
  const labelled = new Set<string>()
  let nextId = 1
  // Sends under way in this process, so that two concurrent calls with one request id share one send.
  const sendsInFlight = new Map<string, Promise<{ txid: string }>>()

  /** One JSON-RPC call; `wallet` null for the node's own methods (`createwallet`, `getnetworkinfo`, ...). */
  async function rpc(
    wallet: string | null,
    method: string,
    params: unknown[] | Record<string, unknown>,
  ): Promise<unknown> {
    const id = `svcpay-${nextId++}`
    const res = await httpRequest({
      url: wallet === null ? `${base}/` : `${base}/wallet/${encodeURIComponent(wallet)}`,
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '1.0', id, method, params }),
      timeoutMs,
    })
    // Bitcoin Core answers bad credentials with a bare 401 and a refused client address with 403.
    if (res.status === 401 || res.status === 403) {
      throw new RailFailure('unauthorized', `bitcoind ${method}: HTTP ${res.status}`, false)
    }
    let body: Record<string, unknown>
    try {
      body = asObject(parseExact(res.text), `bitcoind ${method}`)
    } catch {
      // Not a JSON-RPC answer at all: a proxy page, a node shutting down. Worth another try later.
      throw new RailFailure(
        TRANSPORT_CODES.badResponse,
        `bitcoind ${method}: HTTP ${res.status}, not JSON-RPC`,
        true,
      )
    }
    if (body.error !== null && body.error !== undefined) {
      const error = asObject(body.error, `bitcoind ${method} error`)
      throw new RpcError(Number(error.code), String(error.message ?? ''), method)
    }
    return body.result
  }

  /** The txid of a wallet send committed earlier for `requestId`, found by its `comment`. */
  async function findSend(requestId: string): Promise<string | null> {
    for (let skip = 0; skip < SEND_SCAN_TXS_MAX; skip += PAGE_SIZE) {
      const page = asArray(
        await call(hotWallet, 'listtransactions', {
          label: '*',
          count: PAGE_SIZE,
          skip,
          include_watchonly: false,
        }),
        'listtransactions',
      ).map((entry) => asObject(entry, 'listtransactions entry'))
      const matches = page.filter(
        (e) =>
          e.category === 'send' &&
          e.comment === requestId &&
          e.abandoned !== true &&
          typeof e.txid === 'string',
      )
      // A fee bump copies the comment to the replacement; the one not replaced is the live send.
      const live = matches.find((e) => e.replaced_by_txid === undefined) ?? matches[0]
      if (live) return String(live.txid)
      if (page.length < PAGE_SIZE) return null
    }
    return null
  }

  /** `rpc` with RPC errors mapped to rail failures. */
  async function call(
    wallet: string | null,
    method: string,
    params: unknown[] | Record<string, unknown>,
  ): Promise<unknown> {
    try {
      return await rpc(wallet, method, params)
    } catch (err) {
      throw err instanceof RpcError ? mapRpcError(err) : err
    }
  }

  async function send(input: Parameters<OnchainRail['send']>[0]): Promise<{ txid: string }> {
    const existing = await findSend(input.requestId)
    if (existing) return { txid: await accepted(existing, false) }
    const txid = await call(hotWallet, 'sendtoaddress', {
      address: input.address,
      amount: satsToBtcText(input.amountSats),
      // The request id rides along as the wallet's own comment: it is how a retry finds this send.
      comment: input.requestId,
      // Replaceable, so that a send stuck below the network's rate can be bumped (bumpfee).
      replaceable: true,
      fee_rate: input.feeRateSatPerVb.toString(),
    })
    if (typeof txid !== 'string')
      throw new RailFailure(TRANSPORT_CODES.badResponse, 'sendtoaddress: no txid', true)
    return { txid: await accepted(txid, true) }
  }

  /** `gettransaction` of the hot wallet, null when it is not a wallet transaction (-5). */
  async function walletTx(txid: string): Promise<Record<string, unknown> | null> {
    try {
      return asObject(
        await rpc(hotWallet, 'gettransaction', { txid, include_watchonly: true }),
        'gettransaction',
      )
    } catch (err) {
      // -5: "Invalid or non-wallet transaction id" (src/wallet/rpc/transactions.cpp, gettransaction).
      if (err instanceof RpcError && err.code === -5) return null
      throw err instanceof RpcError ? mapRpcError(err) : err
    }
  }

  /** Whether the node's mempool holds `txid` (`getmempoolentry` answers -5 when it does not). */
  async function inMempool(txid: string): Promise<boolean> {
    try {
      await rpc(null, 'getmempoolentry', [txid])
      return true
    } catch (err) {
      if (err instanceof RpcError && err.code === -5) return false
      throw err instanceof RpcError ? mapRpcError(err) : err
    }
  }

  /**
   * The txid under which a wallet send is on its way: confirmed, or in the mempool. A fee bump's
   * replacement is followed. A send the mempool does not hold is offered to it again; one it
   * refuses is abandoned (so the wallet stops rebroadcasting it and frees its coins) and reported
   * as a final `rejected`; one that conflicts with the chain as a final `conflicted`. `fresh`: the
   * wallet made it just now, so no other node can have it. An older send may have been relayed
   * before our mempool dropped it: refused for a reason that passes (a fee, a conflict in the
   * mempool), it is not abandoned but reported as the retryable `not_relayed`.
   */
  async function accepted(first: string, fresh: boolean): Promise<string> {
    let txid = first
    for (let hops = 0; hops <= REPLACEMENTS_MAX; hops++) {
      const tx = await walletTx(txid)
      if (!tx)
        throw new RailFailure('node_error', `bitcoind: the wallet does not know its send ${txid}`, false)
      const confirmations = Number(tx.confirmations)
      if (typeof tx.replaced_by_txid === 'string' && confirmations <= 0) {
        checkTxid(tx.replaced_by_txid)
        txid = tx.replaced_by_txid
        continue
      }
      if (confirmations > 0) return txid
      if (confirmations < 0) {
        throw new RailFailure(
          'conflicted',
          `bitcoind: send ${txid} conflicts with a transaction ${-confirmations} blocks deep`,
          false,
        )
      }
      if (await inMempool(txid)) return txid
      const hex = String(tx.hex ?? '')
      const [verdict] = asArray(await call(null, 'testmempoolaccept', [[hex]]), 'testmempoolaccept')
      const result = asObject(verdict, 'testmempoolaccept result')
      if (result.allowed === true) {
        // Refused earlier (a full mempool, say) but acceptable now: offer it again.
        await call(null, 'sendrawtransaction', [hex])
        return txid
      }
      const reason = String(result['reject-reason'] ?? 'refused')
      if (!fresh && isPassingRefusal(reason)) {
        throw new RailFailure(
          'not_relayed',
          `bitcoind: the mempool does not take send ${txid} now: ${reason}`,
          true,
        )
      }
      try {
        await rpc(hotWallet, 'abandontransaction', [txid])
      } catch (err) {
        // -5 "Transaction not eligible for abandonment": it reached the mempool or a block meanwhile.
        if (err instanceof RpcError && err.code === -5) continue
        throw err instanceof RpcError ? mapRpcError(err) : err
      }
      throw new RailFailure('rejected', `bitcoind: the mempool refused send ${txid}: ${reason}`, false)
    }
    throw new RailFailure(
      'node_error',
      `bitcoind: more than ${REPLACEMENTS_MAX} replacements of ${first}`,
      false,
    )
  }

  /**
   * The watch wallet exists, is loaded, and holds no private keys; created blank and key-less when
   * the node has no wallet of that name. A wallet with keys is refused: it cannot take key-less
   * descriptors, and a hot wallet must not double as the watch wallet.
   */
  function ensureWatchWallet(): Promise<void> {
    watchWalletReady ??= (async () => {
      let info: Record<string, unknown>
      try {
        info = asObject(await rpc(watchWallet, 'getwalletinfo', []), 'getwalletinfo')
      } catch (err) {
        if (!(err instanceof RpcError) || err.code !== -18)
          throw err instanceof RpcError ? mapRpcError(err) : err
        await loadOrCreateWatchWallet()
        info = asObject(await call(watchWallet, 'getwalletinfo', []), 'getwalletinfo')
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
      if (receiveDescriptor) importedRangeEnd = await currentRangeEnd()
    })().catch((err: unknown) => {
      watchWalletReady = null
      throw err
    })
    return watchWalletReady
  }

  async function loadOrCreateWatchWallet(): Promise<void> {
    try {
      await rpc(null, 'loadwallet', { filename: watchWallet, load_on_startup: true })
      return
    } catch (err) {
      // -35: already loaded (a race with another instance). -18: no such wallet file: create it.
      if (err instanceof RpcError && err.code === -35) return
      if (!(err instanceof RpcError) || err.code !== -18)
        throw err instanceof RpcError ? mapRpcError(err) : err
    }
    try {
      // src/wallet/rpc/wallet.cpp, createwallet: a blank descriptor wallet with private keys disabled.
      await rpc(null, 'createwallet', {
        wallet_name: watchWallet,
        disable_private_keys: true,
        blank: true,
        descriptors: true,
        load_on_startup: true,
      })
    } catch (err) {
      // -4 "Wallet file verification failed ... already exists": another instance created it first.
      if (err instanceof RpcError && err.code === -4 && /already exists/i.test(err.message)) {
        await loadOrCreateWatchWallet()
        return
      }
      throw err instanceof RpcError ? mapRpcError(err) : err
    }
  }

  /** The end of our ranged descriptor's range in the watch wallet, null when not imported yet. */
  async function currentRangeEnd(): Promise<number | null> {
    const listed = asObject(await call(watchWallet, 'listdescriptors', []), 'listdescriptors')
    for (const raw of asArray(listed.descriptors, 'listdescriptors descriptors')) {
      const d = asObject(raw, 'descriptor')
      if (String(d.desc).split('#')[0] !== receiveDescriptor) continue
      const range = Array.isArray(d.range) ? d.range : null
      return range ? Number(range[1]) : null
    }
    return null
  }

  /** Import (or widen) the ranged receive descriptor so that it covers `index` and some way beyond. */
  async function coverIndex(index: number): Promise<void> {
    if (!receiveDescriptor) return
    if (importedRangeEnd !== null && index <= importedRangeEnd) return
    const end = index + (options.descriptorRangeAhead ?? DESCRIPTOR_RANGE_AHEAD)
    // A widened range of a descriptor already imported needs no rescan of the past: its new
    // addresses were never handed out. The first import goes back as far as the operator says.
    const timestamp = importedRangeEnd === null ? (options.importTimestamp ?? 'now') : 'now'
    const results = asArray(
      await call(watchWallet, 'importdescriptors', [
        [
          {
            desc: `${receiveDescriptor}#${descriptorChecksum(receiveDescriptor)}`,
            timestamp,
            range: [0, end],
            active: false,
            internal: false,
          },
        ],
      ]),
      'importdescriptors',
    )
    importResultOk(results)
    importedRangeEnd = Math.max(importedRangeEnd ?? 0, end)
  }

  const reconcileDeps: BitcoindReconcileDeps = {
    call: (wallet, method, params) => call(wallet, method, params),
    watchReady: () => ensureWatchWallet(),
    hotWallet,
    watchWallet,
    creditConfirmations: options.creditConfirmations ?? 1,
    sats: btcToSats,
  }

  return {
    name: 'bitcoind',
    network: options.network,
    reserves: () => bitcoindReserves(reconcileDeps),
    payments: (sinceMs) => bitcoindPayments(reconcileDeps, sinceMs),

    async watchAddress(address, index) {
      checkAddressText(address)
      await ensureWatchWallet()
      if (receiveDescriptor && index !== undefined) {
        await coverIndex(index)
      } else {
        const desc = `addr(${address})`
        importResultOk(
          asArray(
            await call(watchWallet, 'importdescriptors', [
              [{ desc: `${desc}#${descriptorChecksum(desc)}`, timestamp: 'now', label: address }],
            ]),
            'importdescriptors',
          ),
        )
      }
      const info = asObject(await call(watchWallet, 'getaddressinfo', [address]), 'getaddressinfo')
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
      if (receiveDescriptor && index !== undefined) await call(watchWallet, 'setlabel', [address, address])
      labelled.add(address)
    },

    async listOutputs(address): Promise<OnchainOutput[]> {
      checkAddressText(address)
      if (receiveDescriptor && !labelled.has(address)) await ensureLabel(address)
      const outputs = new Map<string, OnchainOutput>()
      for (let skip = 0; skip < OUTPUTS_PER_ADDRESS_MAX; skip += PAGE_SIZE) {
        const page = asArray(
          await call(watchWallet, 'listtransactions', {
            label: address,
            count: PAGE_SIZE,
            skip,
            include_watchonly: true,
          }),
          'listtransactions',
        )
        for (const raw of page) {
          const e = asObject(raw, 'listtransactions entry')
          const confirmations = Number(e.confirmations)
          // Negative confirmations mark a transaction that conflicts with the chain: it will never pay.
          // Bitcoin Core writes addresses from the script (bech32 in lower case); compare canonical forms.
          const sameAddress =
            typeof e.address === 'string' && canonicalAddress(e.address) === canonicalAddress(address)
          if (e.category !== 'receive' || !sameAddress || !(confirmations >= 0)) continue
          const txid = String(e.txid)
          const vout = Number(e.vout)
          const blockHash = typeof e.blockhash === 'string' && confirmations > 0 ? e.blockhash : undefined
          outputs.set(`${txid}:${vout}`, {
            txid,
            vout,
            amountSats: btcToSats(e.amount),
            confirmations,
            ...(blockHash ? { blockHash } : {}),
          })
        }
        if (page.length < PAGE_SIZE) break
      }
      return [...outputs.values()]
    },

    async estimateFeeRate(targetBlocks) {
      const target = Math.min(Math.max(Math.trunc(targetBlocks), 1), CONF_TARGET_MAX)
      const result = asObject(await call(hotWallet, 'estimatesmartfee', [target]), 'estimatesmartfee')
      if (result.feerate === undefined) {
        // A regtest node has no fee history; its relay minimum is the only rate that makes sense there.
        if (options.network === 'regtest') return 1n
        const errors = Array.isArray(result.errors) ? result.errors.join('; ') : 'no estimate'
        throw new RailFailure('fee_estimate_unavailable', `estimatesmartfee: ${errors}`, true)
      }
      // BTC per 1000 vB -> sat per 1000 vB -> sat per vB, rounded up so a send never pays below it.
      const satsPerKvb = btcToSats(result.feerate)
      const satsPerVb = (satsPerKvb + 999n) / 1000n
      return satsPerVb < 1n ? 1n : satsPerVb
    },

    send(input) {
      checkAddressText(input.address)
      if (input.amountSats <= 0n) throw new RailFailure('invalid_amount', 'amount must be positive', false)
      if (input.feeRateSatPerVb < 1n)
        throw new RailFailure('invalid_fee_rate', 'fee rate must be at least 1', false)
      const pending = sendsInFlight.get(input.requestId)
      if (pending) return pending
      const started = send(input).finally(() => sendsInFlight.delete(input.requestId))
      sendsInFlight.set(input.requestId, started)
      return started
    },

    async getTransaction(txid): Promise<OnchainTxState | null> {
      checkTxid(txid)
      const tx = await walletTx(txid)
      if (!tx) return null
      const confirmations = Number(tx.confirmations)
      if (confirmations > 0) return { confirmations }
      // A fee bump of ours took its place (gettransaction's replaced_by_txid, from the wallet's
      // mapValue): the replacement is the send now.
      if (typeof tx.replaced_by_txid === 'string') {
        checkTxid(tx.replaced_by_txid)
        return { confirmations: 0, replacedBy: tx.replaced_by_txid }
      }
      // Negative confirmations: a conflicting transaction is that deep in the best chain.
      if (confirmations < 0) return { confirmations: 0, conflictedDepth: -confirmations }
      return { confirmations: 0, inMempool: await inMempool(txid) }
    },

    async bumpFee(txid, feeRateSatPerVb) {
      checkTxid(txid)
      if (feeRateSatPerVb < 1n)
        throw new RailFailure('invalid_fee_rate', 'fee rate must be at least 1', false)
      // src/wallet/rpc/spend.cpp, bumpfee: a BIP 125 replacement paying `fee_rate` sat/vB.
      const result = asObject(
        await call(hotWallet, 'bumpfee', [txid, { fee_rate: feeRateSatPerVb.toString() }]),
        'bumpfee',
      )
      const replacement = String(result.txid ?? '')
      checkTxid(replacement)
      return { txid: replacement, feeSats: btcToSats(result.fee) }
    },

    async check(): Promise<RailCheckReport> {
      const report: RailCheckReport = { rail: 'onchain', adapter: 'bitcoind', reachable: false, problems: [] }
      const problem = (text: string) => report.problems.push(text)
      try {
        const net = asObject(await call(null, 'getnetworkinfo', []), 'getnetworkinfo')
        report.reachable = true
        report.version = `${String(net.subversion ?? '')} (${String(net.version)})`
        if (Number(net.version) < 210000)
          problem(`Bitcoin Core ${String(net.version)} is older than 0.21: descriptor wallets are needed`)
        const chain = asObject(await call(null, 'getblockchaininfo', []), 'getblockchaininfo')
        report.network = CHAIN_NAMES[String(chain.chain)] ?? String(chain.chain)
        if (report.network !== options.network)
          problem(`bitcoind is on ${String(chain.chain)}, the service is configured for ${options.network}`)
        const progress = Number(String(chain.verificationprogress))
        report.synced = chain.initialblockdownload === false && Number(chain.blocks) === Number(chain.headers)
        if (!report.synced)
          problem(
            `bitcoind is not synced: block ${String(chain.blocks)} of ${String(chain.headers)}, verification progress ${(progress * 100).toFixed(2)}%`,
          )
        const hot = await walletInfo(hotWallet)
        if (!hot) problem(`the hot wallet ${hotWallet} is not loaded`)
        else {
          if (hot.private_keys_enabled !== true)
            problem(`the hot wallet ${hotWallet} has no private keys: it cannot send`)
          const balances = asObject(await call(hotWallet, 'getbalances', []), 'getbalances')
          const mine = asObject(balances.mine ?? {}, 'getbalances mine')
          report.balances = { BTC: satsToBtcText(btcToSats(mine.trusted)) }
          if (hot.unlocked_until === 0)
            problem(`the hot wallet ${hotWallet} is locked: sends wait until it is unlocked`)
        }
        if (watchWallet === hotWallet)
          problem(`the watch wallet is the hot wallet ${hotWallet}: use a separate watch-only wallet`)
        const watch = await walletInfo(watchWallet)
        if (!watch)
          problem(
            `the watch wallet ${watchWallet} is not loaded (the rail creates it on first use when it does not exist)`,
          )
        else if (watch.private_keys_enabled !== false)
          problem(
            `the watch wallet ${watchWallet} has private keys: create it with disable_private_keys=true`,
          )
        // The receive descriptor is imported on the first receive: none yet is not a problem.
        else if (receiveDescriptor) await currentRangeEnd()
      } catch (err) {
        problem(`bitcoind: ${(err as Error).message}`)
      }
      return report
    },
  }

  /**
   * An address of the ranged descriptor handed out before this version (or whose setlabel was lost)
   * has no label, and `listtransactions <label>` would list nothing for it: give it its label.
   */
  async function ensureLabel(address: string): Promise<void> {
    await ensureWatchWallet()
    const info = asObject(await call(watchWallet, 'getaddressinfo', [address]), 'getaddressinfo')
    const labels = Array.isArray(info.labels) ? info.labels : []
    if (info.ismine === true && !labels.includes(address))
      await call(watchWallet, 'setlabel', [address, address])
    if (labelled.size >= LABELLED_CACHE_MAX) labelled.clear()
    labelled.add(address)
  }

  /** getwalletinfo of a wallet, null when it is not loaded (-18). */
  async function walletInfo(wallet: string): Promise<Record<string, unknown> | null> {
    try {
      return asObject(await rpc(wallet, 'getwalletinfo', []), 'getwalletinfo')
    } catch (err) {
      if (err instanceof RpcError && err.code === -18) return null
      throw err instanceof RpcError ? mapRpcError(err) : err
    }
  }
}

/** Throws the mapped failure of the first unsuccessful entry of an `importdescriptors` answer. */
function importResultOk(results: unknown[]): void {
  for (const raw of results) {
    const result = asObject(raw, 'importdescriptors result')
    if (result.success === true) continue
    const error = asObject(result.error ?? {}, 'importdescriptors error')
    throw mapRpcError(
      new RpcError(Number(error.code), String(error.message ?? 'import failed'), 'importdescriptors'),
    )
  }
}

/** An error answer of the RPC, before it is mapped to a rail failure. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly method: string,
  ) {
    super(message)
  }
}

/** Bitcoin Core's RPC error codes (src/rpc/protocol.h) mapped to our short codes. */
function mapRpcError(err: RpcError): RailFailure {
  const text = `bitcoind ${err.method}: ${err.message} (${err.code})`
  switch (err.code) {
    case -6: // RPC_WALLET_INSUFFICIENT_FUNDS: also every other reason the wallet could not build the send.
      if (/too small|dust/i.test(err.message)) return new RailFailure('amount_too_small', text, false)
      if (/fee exceeds maximum/i.test(err.message)) return new RailFailure('fee_too_high', text, false)
      return new RailFailure('insufficient_funds', text, false)
    case -5: // RPC_INVALID_ADDRESS_OR_KEY
      return new RailFailure('invalid_address', text, false)
    case -3: // RPC_TYPE_ERROR: "Invalid amount", "Amount out of range"
      return new RailFailure('invalid_amount', text, false)
    case -8: // RPC_INVALID_PARAMETER
      return new RailFailure('invalid_parameter', text, false)
    case -25: // RPC_VERIFY_ERROR
    case -26: // RPC_VERIFY_REJECTED
      return new RailFailure('rejected', text, false)
    case -4: // RPC_WALLET_ERROR
      return new RailFailure('wallet_error', text, false)
    // The states below pass without anyone touching the request: an operator unlocks or loads the
    // wallet, or the node finishes starting. The worker tries again later.
    case -13: // RPC_WALLET_UNLOCK_NEEDED
      return new RailFailure('wallet_locked', text, true)
    case -18: // RPC_WALLET_NOT_FOUND
    case -19: // RPC_WALLET_NOT_SPECIFIED
      return new RailFailure('wallet_not_loaded', text, true)
    case -28: // RPC_IN_WARMUP
    case -9: // RPC_CLIENT_NOT_CONNECTED
    case -10: // RPC_CLIENT_IN_INITIAL_DOWNLOAD
      return new RailFailure('node_unavailable', text, true)
    case -32601: // RPC_METHOD_NOT_FOUND: a node too old for this adapter.
      return new RailFailure('method_not_found', text, false)
    default:
      return new RailFailure('node_error', text, false)
  }
}

/** JSON with every number kept as its source text. */
function parseExact(text: string): unknown {
  return losslessParse(text, (_key, value) => (isLosslessNumber(value) ? value.value : value))
}

const BTC_RE = /^(-)?(\d{1,8})(?:\.(\d{1,8}))?$/

/** A BTC amount (JSON number text, up to eight decimals) in satoshis, exactly. */
export function btcToSats(value: unknown): bigint {
  const text = typeof value === 'string' ? normaliseDecimal(value) : null
  const m = text === null ? null : BTC_RE.exec(text)
  if (!m) throw new RailFailure(TRANSPORT_CODES.badResponse, `not a BTC amount: ${String(value)}`, true)
  const sats = BigInt(m[2]!) * SATS_PER_BTC + BigInt((m[3] ?? '').padEnd(8, '0'))
  return m[1] ? -sats : sats
}

/** Satoshis as BTC decimal text with eight decimals, as the RPC's amount arguments accept. */
export function satsToBtcText(sats: bigint): string {
  const sign = sats < 0n ? '-' : ''
  const abs = sats < 0n ? -sats : sats
  return `${sign}${abs / SATS_PER_BTC}.${(abs % SATS_PER_BTC).toString().padStart(8, '0')}`
}

// Output descriptor checksum (BIP 380): a BCH code over the descriptor's characters, in groups.
const INPUT_CHARSET =
  '0123456789()[],\'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#"\\ '
const CHECKSUM_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
const GENERATOR = [0xf5dee51989n, 0xa9fdca3312n, 0x1bab10e32dn, 0x3706b1677an, 0x644d626ffdn]

function polymod(c: bigint, value: number): bigint {
  const top = c >> 35n
  let next = ((c & 0x7ffffffffn) << 5n) ^ BigInt(value)
  for (let i = 0; i < 5; i++) if ((top >> BigInt(i)) & 1n) next ^= GENERATOR[i]!
  return next
}

/** The eight-character checksum Bitcoin Core expects after `#` on an imported descriptor. */
export function descriptorChecksum(descriptor: string): string {
  let c = 1n
  let group = 0
  let groupCount = 0
  for (const ch of descriptor) {
    const pos = INPUT_CHARSET.indexOf(ch)
    if (pos < 0)
      throw new RailFailure('invalid_descriptor', `descriptor has an invalid character ${ch}`, false)
    // Each character feeds its low five bits, and every three characters their high bits as one symbol.
    c = polymod(c, pos & 31)
    group = group * 3 + (pos >> 5)
    if (++groupCount === 3) {
      c = polymod(c, group)
      group = 0
      groupCount = 0
    }
  }
  if (groupCount > 0) c = polymod(c, group)
  for (let i = 0; i < 8; i++) c = polymod(c, 0)
  c ^= 1n
  let out = ''
  for (let i = 0; i < 8; i++) out += CHECKSUM_CHARSET[Number((c >> BigInt(5 * (7 - i))) & 31n)]
  return out
}
