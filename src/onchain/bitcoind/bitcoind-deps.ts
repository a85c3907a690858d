/**
 * The bitcoind rail's options and the deps every part of the rail works over: the RPC function,
 * the two wallets' names, the receive descriptor, and what this process remembers between calls
 * (the watch wallet's readiness and range, the labelled addresses, the sends under way).
 */
import { NODE_TIMEOUT_MS_DEFAULT } from '../../rails/http-json.js'
import type { Network } from '../../config/network.js'
import { deriveAccountXpub } from '../../bitcoin/bip84.js'
import { bitcoindRpc, type RpcFunction } from './bitcoind-rpc.js'

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
export const PAGE_SIZE = 500

/** The watch wallet as this process knows it. */
export interface WatchState {
  /** The highest index the watch wallet's ranged descriptor covers, once read or imported. */
  importedRangeEnd: number | null
  ready: Promise<void> | null
  /** Addresses known to carry their label in the watch wallet (a bounded cache of this process). */
  labelled: Set<string>
}

export interface BitcoindDeps {
  options: BitcoindRailOptions
  /** One JSON-RPC call, its error answers thrown as `RpcError` (bitcoind-rpc.ts). */
  rpc: RpcFunction
  hotWallet: string
  watchWallet: string
  /** `wpkh(<xpub>/0/*)` of the account xpub, or null when addresses are imported one by one. */
  receiveDescriptor: string | null
  watch: WatchState
  /** Sends under way in this process, so that two concurrent calls with one request id share one send. */
  sendsInFlight: Map<string, Promise<{ txid: string }>>
}

export function bitcoindDeps(options: BitcoindRailOptions): BitcoindDeps {
  const authorization = 'Basic ' + Buffer.from(`${options.user}:${options.password}`).toString('base64')
  const endpoint = {
    baseUrl: options.url.replace(/\/+$/, ''),
    authorization,
    timeoutMs: options.timeoutMs ?? NODE_TIMEOUT_MS_DEFAULT,
  }
  let nextId = 1
  return {
    options,
    rpc: (wallet, method, params) => bitcoindRpc(endpoint, `svcpay-${nextId++}`, wallet, method, params),
    hotWallet: options.wallet,
    watchWallet: options.watchWallet ?? `${options.wallet}-watch`,
    receiveDescriptor: options.accountXpub
      ? `wpkh(${deriveAccountXpub(options.accountXpub, options.network)}/0/*)`
      : null,
    watch: { importedRangeEnd: null, ready: null, labelled: new Set() },
    sendsInFlight: new Map(),
  }
}
