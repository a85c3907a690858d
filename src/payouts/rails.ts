import { ConfigError, type Config } from '../config/config.js'
import type { Db, Queryable } from '../db/db.js'
import type { BankPayoutRail, EthRail, TronRail } from '../rails/rail.js'
import { createEthJsonRpcRail } from './eth/jsonrpc.js'
import { createSandboxEthRail } from './eth/sandbox.js'
import { createSandboxTronRail } from './tron/sandbox.js'
import { createTronGridRail } from './tron/trongrid.js'
import type { TronSendRecord, TronSendStore } from './tron/trongrid-sends.js'
import { createSandboxBankRail } from './vnd/sandbox.js'
import { createBankHttpRail, type BankHttpRail } from './vnd/bank-http.js'
import { bankCreditsPollMs } from './vnd/bank-credit-poll.js'
import { sql } from '../db/sql.js'

/** The USDT (TRC-20) contract on TRON mainnet; testnets need TRON_USDT_CONTRACT. */
export const USDT_MAINNET_CONTRACT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
/** The most TRX a transfer may burn for energy by default: 50 TRX, in sun. */
export const TRON_FEE_LIMIT_SUN_DEFAULT = 50_000_000n

/** How often a real network is asked about a payout in flight. */
export const TRON_POLL_MS = 15_000
export const BANK_POLL_MS = 30_000
/** An Ethereum block comes every 12 s; a payout in flight is asked about once a block. */
export const ETH_POLL_MS = 12_000

/** Tether's USDT (ERC-20) contract on Ethereum mainnet; other chains need ETH_USDT_CONTRACT. */
export const ETH_USDT_MAINNET_CONTRACT = '0xdAC17F958D2ee523a2206206994597C13D831ec7'

/**
 * The payout rails, chosen by configuration: `TRON=sandbox|trongrid`, `VND=sandbox|bank-http`
 * (both sandbox when `RAILS=sandbox`). `pollMs` is how long the payout flows wait before asking a
 * rail again about a payout in flight: a sandbox payout is asked exactly when it settles.
 */
export interface PayoutRails {
  tron: TronRail
  bank: BankPayoutRail
  /** USDT over Ethereum (issue 33): `ETH=sandbox|jsonrpc`. */
  eth: EthRail
  /** Checks a bank partner's notification; there with `VND=bank-http` and `BANK_PAYOUT_WEBHOOK_SECRET`. */
  verifyBankNotification: BankHttpRail['verifyNotification'] | undefined
  pollMs: { tron: number; bank: number; eth: number }
  /** Incoming transfers from the bank partner; there with `VND=bank-http`. */
  bankCredits: BankCreditsSource | undefined
}

/** Where incoming bank transfers are read from (docs/payouts.md, "Incoming credits"). */
export interface BankCreditsSource {
  /** Checks a credit notification; there with `BANK_PAYOUT_WEBHOOK_SECRET`. */
  verify: BankHttpRail['verifyCredit'] | undefined
  list: BankHttpRail['listCredits']
  /** BANK_CREDITS_POLL_S in milliseconds; 0: no statement poll. */
  pollMs: number
}

/**
 * Build the payout rails. The real adapters read their settings from the environment:
 * - TronGrid: `TRONGRID_URL` (default `https://api.trongrid.io`), `TRONGRID_API_KEY`,
 *   `TRON_HOT_WALLET_PRIVATE_KEY` (64 hex), `TRON_USDT_CONTRACT` (default the mainnet contract),
 *   `TRON_FEE_LIMIT_SUN` (default 50 TRX), `TRON_CONFIRMATIONS` (default 19), `TRON_NETWORK`
 *   (`mainnet`, `nile` or `shasta`; default mainnet, which `svcpay rails check` holds the node to).
 * - Bank partner (docs/payouts.md): `BANK_PAYOUT_URL`, `BANK_PAYOUT_API_KEY`, optionally
 *   `BANK_PAYOUT_WEBHOOK_SECRET` and `BANK_PAYOUT_SIGNING_SECRET` (signs our requests), and
 *   `BANK_CREDITS_POLL_S` (how often the statement of incoming credits is read; default 60, 0 off).
 * - Ethereum JSON-RPC (`ETH=jsonrpc`, issue 33): `ETH_RPC_URL`, `ETH_HOT_WALLET_PRIVATE_KEY` (64 hex),
 *   `ETH_USDT_CONTRACT` (default Tether's mainnet contract), `ETH_CHAIN_ID` (default 1),
 *   `ETH_CONFIRMATIONS` (a floor below the `finalized` tag; default 12), `ETH_REPLACE_AFTER_S`
 *   (how long a transaction may wait unmined before it is replaced; default 180).
 */
export function createPayoutRails(config: Config, db: Db): PayoutRails {
  const delayMs = config.sandboxPayoutDelayMs
  let tron: TronRail
  if (config.tron === 'sandbox') {
    tron = createSandboxTronRail({ db, failAddresses: config.sandboxTronFail, delayMs })
  } else {
    tron = tronGrid(config, db)
  }
  let bank: BankPayoutRail
  let verifyBankNotification: PayoutRails['verifyBankNotification']
  let bankCredits: BankCreditsSource | undefined
  if (config.vnd === 'sandbox') {
    bank = createSandboxBankRail({ db, delayMs })
  } else {
    const partner = bankHttp(config)
    bank = partner
    const signed = Boolean(config.env.BANK_PAYOUT_WEBHOOK_SECRET)
    if (signed) verifyBankNotification = partner.verifyNotification
    bankCredits = {
      verify: signed ? partner.verifyCredit : undefined,
      list: partner.listCredits,
      pollMs: bankCreditsPollMs(config.env),
    }
  }
  const eth: EthRail =
    config.eth === 'sandbox'
      ? createSandboxEthRail({ db, failAddresses: config.sandboxEthFail, delayMs })
      : ethJsonRpc(config, db)
  return {
    tron,
    bank,
    eth,
    verifyBankNotification,
    bankCredits,
    pollMs: {
      tron: config.tron === 'sandbox' ? delayMs : TRON_POLL_MS,
      bank: config.vnd === 'sandbox' ? delayMs : BANK_POLL_MS,
      eth: config.eth === 'sandbox' ? delayMs : ETH_POLL_MS,
    },
  }
}

function tronGrid(config: Config, db: Db): TronRail {
  const env = config.env
  const feeLimit = env.TRON_FEE_LIMIT_SUN || String(TRON_FEE_LIMIT_SUN_DEFAULT)
  if (!/^\d{1,15}$/.test(feeLimit))
    throw new ConfigError(`TRON_FEE_LIMIT_SUN: expected a whole number of sun, got ${feeLimit}`)
  const confirmations = env.TRON_CONFIRMATIONS || '19'
  if (!/^\d{1,3}$/.test(confirmations) || Number(confirmations) < 1) {
    throw new ConfigError(`TRON_CONFIRMATIONS: expected a whole number from 1, got ${confirmations}`)
  }
  const network = env.TRON_NETWORK || 'mainnet'
  if (network !== 'mainnet' && network !== 'nile' && network !== 'shasta')
    throw new ConfigError(`TRON_NETWORK: expected mainnet, nile or shasta, got ${network}`)
  if (network !== 'mainnet' && !env.TRON_USDT_CONTRACT)
    throw new ConfigError(`TRON_USDT_CONTRACT is required with TRON_NETWORK=${network}`)
  const privateKeyHex = env.TRON_HOT_WALLET_PRIVATE_KEY
  if (!privateKeyHex) throw new ConfigError('TRON_HOT_WALLET_PRIVATE_KEY is required by TRON=trongrid')
  try {
    return createTronGridRail({
      url: env.TRONGRID_URL || 'https://api.trongrid.io',
      ...(env.TRONGRID_API_KEY ? { apiKey: env.TRONGRID_API_KEY } : {}),
      privateKeyHex,
      usdtContract: env.TRON_USDT_CONTRACT || USDT_MAINNET_CONTRACT,
      feeLimitSun: BigInt(feeLimit),
      confirmationsNeeded: Number(confirmations),
      network,
      store: tronSendStore(db),
    })
  } catch (err) {
    // The adapter checks its settings with assertions; at start they are configuration errors.
    throw new ConfigError(`TRON=trongrid: ${(err as Error).message}`)
  }
}

/** The settings of `ETH=jsonrpc`, checked at start (docs/configuration.md). */
export interface EthJsonRpcSettings {
  url: string
  privateKeyHex: string
  usdtContract: string
  chainId: number
  confirmations: number
  replaceAfterMs: number
}

/** Read and check the `ETH=jsonrpc` settings; a bad or missing one is a ConfigError naming it. */
export function ethJsonRpcSettings(env: Record<string, string | undefined>): EthJsonRpcSettings {
  const url = env.ETH_RPC_URL
  if (!url) throw new ConfigError('ETH_RPC_URL is required by ETH=jsonrpc')
  if (!/^https?:\/\//.test(url)) throw new ConfigError(`ETH_RPC_URL: expected an http(s) URL`)
  const privateKeyHex = env.ETH_HOT_WALLET_PRIVATE_KEY
  if (!privateKeyHex) throw new ConfigError('ETH_HOT_WALLET_PRIVATE_KEY is required by ETH=jsonrpc')
  // The key itself is never echoed in the message.
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(privateKeyHex))
    throw new ConfigError('ETH_HOT_WALLET_PRIVATE_KEY: expected 64 hex digits')
  const usdtContract = env.ETH_USDT_CONTRACT || ETH_USDT_MAINNET_CONTRACT
  if (!/^0x[0-9a-fA-F]{40}$/.test(usdtContract))
    throw new ConfigError(`ETH_USDT_CONTRACT: expected 0x and 40 hex digits, got ${usdtContract}`)
  const whole = (name: string, fallback: string, min: number, max: number): number => {
    const text = env[name] || fallback
    if (!/^\d{1,12}$/.test(text) || Number(text) < min || Number(text) > max)
      throw new ConfigError(`${name}: expected a whole number from ${min} to ${max}, got ${text}`)
    return Number(text)
  }
  const chainId = whole('ETH_CHAIN_ID', '1', 1, 2 ** 53 - 1)
  if (chainId !== 1 && !env.ETH_USDT_CONTRACT)
    throw new ConfigError(`ETH_USDT_CONTRACT is required with ETH_CHAIN_ID=${chainId}`)
  return {
    url,
    privateKeyHex: privateKeyHex.replace(/^0x/, ''),
    usdtContract,
    chainId,
    confirmations: whole('ETH_CONFIRMATIONS', '12', 1, 1_000),
    replaceAfterMs: whole('ETH_REPLACE_AFTER_S', '180', 12, 86_400) * 1000,
  }
}

function ethJsonRpc(config: Config, db: Db): EthRail {
  const settings = ethJsonRpcSettings(config.env)
  try {
    return createEthJsonRpcRail({ db, ...settings })
  } catch (err) {
    if (err instanceof ConfigError) throw err
    // The adapter checks its settings with assertions; at start they are configuration errors.
    throw new ConfigError(`ETH=jsonrpc: ${(err as Error).message}`)
  }
}

function bankHttp(config: Config): BankHttpRail {
  const env = config.env
  for (const name of ['BANK_PAYOUT_URL', 'BANK_PAYOUT_API_KEY']) {
    if (!env[name]) throw new ConfigError(`${name} is required by VND=bank-http`)
  }
  try {
    return createBankHttpRail({
      url: env.BANK_PAYOUT_URL!,
      apiKey: env.BANK_PAYOUT_API_KEY!,
      ...(env.BANK_PAYOUT_WEBHOOK_SECRET ? { webhookSecret: env.BANK_PAYOUT_WEBHOOK_SECRET } : {}),
      ...(env.BANK_PAYOUT_SIGNING_SECRET ? { signingSecret: env.BANK_PAYOUT_SIGNING_SECRET } : {}),
    })
  } catch (err) {
    throw new ConfigError(`VND=bank-http: ${(err as Error).message}`)
  }
}

/**
 * The TronGrid adapter's send records in `tron_sends`. A second transfer for a request that already
 * has one is refused: two processes must never broadcast two different transfers for one payout.
 */
export function tronSendStore(db: Queryable, now: () => number = Date.now): TronSendStore {
  const read = async (column: 'request_id' | 'tx_hash', value: string) => {
    const { rows } = await db.query<{ tx_hash: string; signed_tx: string | null; expires_at: string | null }>(
      sql`SELECT tx_hash, signed_tx, expires_at::text FROM tron_sends WHERE ${sql.ident(column)} = ${value}`,
    )
    const row = rows[0]
    if (!row) return undefined
    const record: TronSendRecord = { txHash: row.tx_hash }
    if (row.signed_tx !== null) record.signed = row.signed_tx
    if (row.expires_at !== null) record.expirationMs = BigInt(row.expires_at)
    return record
  }
  return {
    get: (requestId) => read('request_id', requestId),
    byHash: (txHash) => read('tx_hash', txHash),
    async put(requestId, { txHash, signed, expirationMs }) {
      await db.query(
        sql`INSERT INTO tron_sends (request_id, tx_hash, signed_tx, expires_at, created_at)
         VALUES (${requestId}, ${txHash}, ${signed}, ${expirationMs.toString()}, ${now()}) ON CONFLICT (request_id) DO NOTHING`,
      )
      if ((await read('request_id', requestId))?.txHash !== txHash)
        throw new Error(`request ${requestId} already has another TRON transfer`)
    },
  }
}
