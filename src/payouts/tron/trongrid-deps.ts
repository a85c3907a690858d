/**
 * The TRON rail's configuration, checked once, and the deps every part of the rail works over:
 * the request function, the hot wallet's key and addresses, the clock and the send memory.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { assert } from '../../shared/assert.js'
import { tronAddressFromPrivateKey, validateTronAddress } from './address.js'
import { tronGridRequest, type Json } from './trongrid-http.js'
import { newSendMemory, type SendMemory, type TronSendStore } from './trongrid-sends.js'

export interface TronGridConfig {
  /** TronGrid (or any java-tron full node HTTP API), e.g. `https://api.trongrid.io`. */
  url: string
  /** Sent as `TRON-PRO-API-KEY`; TronGrid rate-limits requests without one. */
  apiKey?: string
  /** The hot wallet's secp256k1 private key, 64 hex characters. */
  privateKeyHex: string
  /** The USDT contract's base58 address (mainnet `TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t`). */
  usdtContract: string
  /** The most TRX (in sun) a transfer may burn for energy and bandwidth. */
  feeLimitSun: bigint
  /**
   * Blocks, counting the one holding the transfer, before its outcome is final. Default 19. A
   * transfer is final only once the node reports it solidified; this can only ask for more.
   */
  confirmationsNeeded?: number
  /** Per HTTP request, body included. Default 10 s. */
  timeoutMs?: number
  store?: TronSendStore
  /** The network the node must be on (`TRON_NETWORK`); `check()` compares it with block 0. */
  network?: TronNetworkName
  /** The clock `check()` judges the age of the node's head block by. */
  now?: () => number
}

export type TronNetworkName = 'mainnet' | 'nile' | 'shasta'

/**
 * Block 0's id (`/wallet/getblockbynum {num: 0}`) names the network: each public TRON network has
 * its own genesis block, and no node can answer another's.
 */
export const TRON_GENESIS_BLOCK_IDS: Record<TronNetworkName, string> = {
  mainnet: '00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc',
  nile: '0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc',
  shasta: '0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e',
}

/**
 * A TRON block is solidified (irreversible) once 19 of the 27 super representatives have built on
 * it, about a minute after it is produced.
 */
export const TRON_CONFIRMATIONS_DEFAULT = 19
export const TRONGRID_TIMEOUT_MS_DEFAULT = 10_000
const TIMEOUT_MS_MAX = 60_000

export interface TronGridDeps {
  config: TronGridConfig
  /** The base URL without a trailing slash. */
  baseUrl: string
  /** A java-tron POST with a JSON body, or (no body) a GET of TronGrid's v1 API (trongrid-http.ts). */
  request: (path: string, body?: Json) => Promise<Json>
  privateKey: Uint8Array
  hotWalletAddress: string
  /** The hot wallet and the USDT contract as 21-byte hex (`41…`), as every body sends them. */
  ownerHex: string
  contractHex: string
  confirmationsNeeded: number
  network: TronNetworkName
  now: () => number
  sends: SendMemory
}

/** Checks the configuration (an operator's mistake stops the start) and builds the deps from it. */
export function tronGridDeps(config: TronGridConfig): TronGridDeps {
  const baseUrl = config.url.replace(/\/+$/, '')
  assert(/^https?:\/\//.test(baseUrl), 'TRONGRID_URL must be an http(s) URL')
  const timeoutMs = config.timeoutMs ?? TRONGRID_TIMEOUT_MS_DEFAULT
  assert(timeoutMs > 0 && timeoutMs <= TIMEOUT_MS_MAX, `timeoutMs must be in (0, ${TIMEOUT_MS_MAX}]`)
  const confirmationsNeeded = config.confirmationsNeeded ?? TRON_CONFIRMATIONS_DEFAULT
  assert(
    Number.isInteger(confirmationsNeeded) && confirmationsNeeded >= 1,
    'confirmationsNeeded must be >= 1',
  )
  // fee_limit travels as a JSON number, so it must be exact as one.
  assert(
    config.feeLimitSun > 0n && config.feeLimitSun <= BigInt(Number.MAX_SAFE_INTEGER),
    'TRON_FEE_LIMIT_SUN must be a positive safe integer',
  )
  const privateKey = parsePrivateKey(config.privateKeyHex)
  const hotWalletAddress = tronAddressFromPrivateKey(privateKey)
  const ownerHex = hexOf(hotWalletAddress, 'the hot wallet address')
  const contractHex = hexOf(config.usdtContract, 'TRON_USDT_CONTRACT')
  const network = config.network ?? 'mainnet'
  assert(network in TRON_GENESIS_BLOCK_IDS, 'TRON_NETWORK must be mainnet, nile or shasta')
  const endpoint = { baseUrl, apiKey: config.apiKey, timeoutMs }
  return {
    config,
    baseUrl,
    request: (path, body) => tronGridRequest(endpoint, path, body),
    privateKey,
    hotWalletAddress,
    ownerHex,
    contractHex,
    confirmationsNeeded,
    network,
    now: config.now ?? Date.now,
    sends: newSendMemory(),
  }
}

function parsePrivateKey(text: string): Uint8Array {
  const hex = text.trim().replace(/^0x/, '').toLowerCase()
  assert(/^[0-9a-f]{64}$/.test(hex), 'TRON_HOT_WALLET_PRIVATE_KEY must be 64 hex characters')
  const key = hexToBytes(hex)
  assert(secp256k1.utils.isValidSecretKey(key), 'TRON_HOT_WALLET_PRIVATE_KEY is not a valid secp256k1 key')
  return key
}

function hexOf(address: string, what: string): string {
  const checked = validateTronAddress(address)
  assert(checked.ok, `${what} is not a TRON address`)
  return checked.hex
}
