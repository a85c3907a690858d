/**
 * The Ethereum JSON-RPC rail's options, checked once, and the deps every part of it works over:
 * the call function, the hot wallet's key and address, the token's reads, the clock.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import type { Db } from '../../db/db.js'
import { httpRequest } from '../../rails/http-json.js'
import { RailFailure } from '../../rails/rail.js'
import { assert } from '../../shared/assert.js'
import { hexQuantity, hexWord, rpcCall, type EthRpcTransport } from './jsonrpc-client.js'
import { addressOfPrivateKey, addressWord, normalizeAddress, SELECTORS } from './jsonrpc-tx.js'

export interface EthJsonRpcOptions {
  db: Db
  /** The node's JSON-RPC URL (geth, Nethermind, Erigon or a provider's, key in the path). */
  url: string
  /** The hot wallet's secp256k1 private key, 64 hex characters (optionally `0x`). */
  privateKeyHex: string
  /** Tether's contract (mainnet 0xdAC17F958D2ee523a2206206994597C13D831ec7). */
  usdtContract: string
  /** EIP-155 chain id the node must be on and every transaction is signed for (mainnet 1). */
  chainId: number | bigint
  /** Blocks, counting the one holding the transfer, before its outcome can be final: a floor under the `finalized` tag. */
  confirmations: number
  /** A transaction not mined after this long is replaced (same nonce, fees bumped at least 10%). */
  replaceAfterMs: number
  /** The HTTP transport; the project's helper (src/rails/http-json.ts) unless a test wraps it. */
  fetch?: EthRpcTransport
  /** Per request. Default 10 s. */
  timeoutMs?: number
  now?: () => number
}

export const ETH_TIMEOUT_MS_DEFAULT = 10_000
const TIMEOUT_MS_MAX = 60_000

export interface EthDeps {
  db: Db
  rpc: (method: string, params: unknown[]) => Promise<unknown>
  privateKey: Uint8Array
  /** The hot wallet, lower case. */
  address: string
  /** Tether's contract, lower case. */
  usdt: string
  chainId: bigint
  confirmations: number
  replaceAfterMs: number
  now: () => number
  /** Set once the node has said it is on `chainId` (checked before the first signature). */
  chainChecked: boolean
}

export function ethDeps(opts: EthJsonRpcOptions): EthDeps {
  assert(/^https?:\/\//.test(opts.url), 'the Ethereum node URL must be an http(s) URL')
  const timeoutMs = opts.timeoutMs ?? ETH_TIMEOUT_MS_DEFAULT
  assert(timeoutMs > 0 && timeoutMs <= TIMEOUT_MS_MAX, `timeoutMs must be in (0, ${TIMEOUT_MS_MAX}]`)
  assert(Number.isInteger(opts.confirmations) && opts.confirmations >= 1, 'confirmations must be >= 1')
  assert(
    Number.isInteger(opts.replaceAfterMs) && opts.replaceAfterMs >= 1_000,
    'replaceAfterMs must be a whole number of milliseconds >= 1000',
  )
  const chainId = BigInt(opts.chainId)
  assert(chainId >= 1n, 'chainId must be positive')
  const hex = opts.privateKeyHex.trim().replace(/^0x/, '').toLowerCase()
  assert(/^[0-9a-f]{64}$/.test(hex), 'the hot wallet private key must be 64 hex characters')
  const privateKey = hexToBytes(hex)
  assert(
    secp256k1.utils.isValidSecretKey(privateKey),
    'the hot wallet private key is not a valid secp256k1 key',
  )
  assert(/^0x[0-9a-fA-F]{40}$/.test(opts.usdtContract), 'the USDT contract must be a 20-byte hex address')
  const endpoint = { url: opts.url, timeoutMs, transport: opts.fetch ?? httpRequest }
  return {
    db: opts.db,
    rpc: (method, params) => rpcCall(endpoint, method, params),
    privateKey,
    address: addressOfPrivateKey(privateKey),
    usdt: normalizeAddress(opts.usdtContract),
    chainId,
    confirmations: opts.confirmations,
    replaceAfterMs: opts.replaceAfterMs,
    now: opts.now ?? Date.now,
    chainChecked: false,
  }
}

/** A read-only call of the token at `block` ('latest', 'finalized'). */
export async function callToken(deps: EthDeps, data: string, block = 'latest'): Promise<unknown> {
  return deps.rpc('eth_call', [{ to: deps.usdt, data: '0x' + data }, block])
}

export async function usdtBalanceOf(deps: EthDeps, address: string, block = 'latest'): Promise<bigint> {
  return hexWord(await callToken(deps, SELECTORS.balanceOf + addressWord(address), block), 'balanceOf')
}

export async function isBlackListed(deps: EthDeps, address: string): Promise<boolean> {
  return (
    hexWord(await callToken(deps, SELECTORS.isBlackListed + addressWord(address)), 'isBlackListed') !== 0n
  )
}

export async function tokenPaused(deps: EthDeps): Promise<boolean> {
  return hexWord(await callToken(deps, SELECTORS.paused), 'paused') !== 0n
}

export async function ethBalance(deps: EthDeps, block = 'latest'): Promise<bigint> {
  return hexQuantity(await deps.rpc('eth_getBalance', [deps.address, block]), 'eth_getBalance')
}

/** Transactions of the hot wallet mined (`latest`) or also pooled (`pending`): the next nonce. */
export async function transactionCount(deps: EthDeps, block: 'latest' | 'pending'): Promise<bigint> {
  return hexQuantity(
    await deps.rpc('eth_getTransactionCount', [deps.address, block]),
    'eth_getTransactionCount',
  )
}

/** The node must be on our chain before anything is signed for it. */
export async function ensureChain(deps: EthDeps): Promise<void> {
  if (deps.chainChecked) return
  const id = hexQuantity(await deps.rpc('eth_chainId', []), 'eth_chainId')
  if (id !== deps.chainId)
    throw new RailFailure(
      'wrong_chain',
      `the node is on chain ${id}, the rail signs for chain ${deps.chainId}`,
      false,
    )
  deps.chainChecked = true
}
