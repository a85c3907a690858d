/**
 * The on-chain rail on Bitcoin Core's wallet, through JSON-RPC 1.0 over HTTP basic auth.
 *
 * Two wallets may be involved. Receive addresses are derived by the service and imported as
 * `addr()` descriptors, which Bitcoin Core accepts only into a wallet without private keys; sends
 * need a wallet with keys. `wallet` is the hot wallet that sends; `watchWallet` (default: the same
 * wallet) is where receive addresses are imported and watched.
 *
 * Amounts in RPC answers are JSON numbers in BTC with eight decimals. They are parsed from their
 * source text, never through a float; amounts we send are written as decimal strings, which every
 * amount argument of the RPC accepts.
 */
import { isLosslessNumber, parse as losslessParse } from 'lossless-json'

import { normaliseDecimal } from '../../shared/amount.js'
import {
  asArray,
  asObject,
  checkAddressText,
  checkTxid,
  httpRequest,
  NODE_TIMEOUT_MS_DEFAULT,
  TRANSPORT_CODES,
} from '../http-json.js'
import type { Network } from '../network.js'
import { RailFailure, type OnchainOutput, type OnchainRail } from '../rail.js'

export interface BitcoindRailOptions {
  /** The RPC listener, e.g. `http://127.0.0.1:8332` (18443 on regtest). */
  url: string
  /** `rpcuser`/`rpcpassword`, an `rpcauth` pair, or `__cookie__` and the cookie file's secret. */
  user: string
  password: string
  /** The hot wallet that sends. */
  wallet: string
  /** The watch-only wallet receive addresses are imported into; defaults to `wallet`. */
  watchWallet?: string
  network: Network
  timeoutMs?: number
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

export function createBitcoindRail(options: BitcoindRailOptions): OnchainRail {
  const base = options.url.replace(/\/+$/, '')
  const timeoutMs = options.timeoutMs ?? NODE_TIMEOUT_MS_DEFAULT
  const authorization = 'Basic ' + Buffer.from(`${options.user}:${options.password}`).toString('base64')
  const hotWallet = options.wallet
  const watchWallet = options.watchWallet ?? options.wallet
  let nextId = 1
  // Sends under way in this process, so that two concurrent calls with one request id share one send.
  const sendsInFlight = new Map<string, Promise<{ txid: string }>>()

  async function rpc(
    wallet: string,
    method: string,
    params: unknown[] | Record<string, unknown>,
  ): Promise<unknown> {
    const id = `svcpay-${nextId++}`
    const res = await httpRequest({
      url: `${base}/wallet/${encodeURIComponent(wallet)}`,
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
    wallet: string,
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
    if (existing) return { txid: existing }
    const txid = await call(hotWallet, 'sendtoaddress', {
      address: input.address,
      amount: satsToBtcText(input.amountSats),
      // The request id rides along as the wallet's own comment: it is how a retry finds this send.
      comment: input.requestId,
      fee_rate: input.feeRateSatPerVb.toString(),
    })
    if (typeof txid !== 'string')
      throw new RailFailure(TRANSPORT_CODES.badResponse, 'sendtoaddress: no txid', true)
    return { txid }
  }

  return {
    name: 'bitcoind',
    network: options.network,

    async watchAddress(address) {
      checkAddressText(address)
      const desc = `addr(${address})`
      // The label is the address itself, so `listtransactions <address>` lists exactly its receipts.
      const results = asArray(
        await call(watchWallet, 'importdescriptors', [
          [{ desc: `${desc}#${descriptorChecksum(desc)}`, timestamp: 'now', label: address }],
        ]),
        'importdescriptors',
      )
      const result = asObject(results[0], 'importdescriptors result')
      if (result.success !== true) {
        const error = asObject(result.error ?? {}, 'importdescriptors error')
        throw mapRpcError(
          new RpcError(Number(error.code), String(error.message ?? 'import failed'), 'importdescriptors'),
        )
      }
    },

    async listOutputs(address): Promise<OnchainOutput[]> {
      checkAddressText(address)
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
          if (e.category !== 'receive' || e.address !== address || !(confirmations >= 0)) continue
          const txid = String(e.txid)
          const vout = Number(e.vout)
          outputs.set(`${txid}:${vout}`, { txid, vout, amountSats: btcToSats(e.amount), confirmations })
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

    async getTransaction(txid) {
      checkTxid(txid)
      let result: unknown
      try {
        result = await rpc(hotWallet, 'gettransaction', { txid, include_watchonly: true })
      } catch (err) {
        // -5: "Invalid or non-wallet transaction id".
        if (err instanceof RpcError && err.code === -5) return null
        throw err instanceof RpcError ? mapRpcError(err) : err
      }
      // A conflicted transaction reports negative confirmations; to us it is simply unconfirmed.
      return { confirmations: Math.max(0, Number(asObject(result, 'gettransaction').confirmations)) }
    },
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
