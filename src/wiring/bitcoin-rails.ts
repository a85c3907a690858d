import { readFileSync } from 'node:fs'
import { ConfigError, type Config } from '../config/config.js'
import type { Db } from '../db/db.js'
import type { BitcoinKeys } from '../bitcoin/keys.js'
import type { LightningRail, OnchainRail } from '../rails/rail.js'
import { createLndRail } from '../lightning/lnd/lnd.js'
import { createSandboxLightningRail, type SandboxLightningRail } from '../lightning/sandbox.js'
import { createBitcoindRail } from '../onchain/bitcoind/bitcoind.js'
import { createEsploraRail } from '../onchain/esplora/esplora.js'
import { createSandboxOnchainRail, type SandboxOnchainRail } from '../onchain/sandbox.js'
import { sql } from '../db/sql.js'

/**
 * The Bitcoin rails the service runs on, chosen by configuration: `LIGHTNING=sandbox|lnd`,
 * `ONCHAIN=sandbox|bitcoind|esplora` (both sandbox when `RAILS=sandbox`). The sandbox rails are also
 * returned under `sandbox`, for the sandbox endpoints that play the outside world.
 */
export interface BitcoinRails {
  lightning: LightningRail
  onchain: OnchainRail
  sandbox: { lightning?: SandboxLightningRail; onchain?: SandboxOnchainRail }
}

/**
 * Build the rails. The real adapters read their connection settings from the environment:
 * - LND: `LND_REST_URL`, `LND_MACAROON_HEX` (or `LND_MACAROON_PATH`, the binary file), and
 *   optionally `LND_TLS_CERT_PATH`, `LND_INVOICE_ROUTE_HINTS` (default true: invoices carry
 *   route hints for the node's private channels) and `LND_TIMEOUT_MS` (each request's deadline).
 * - bitcoind: `BITCOIND_RPC_URL`, `BITCOIND_RPC_USER`, `BITCOIND_RPC_PASSWORD`, `BITCOIND_WALLET`,
 *   optionally `BITCOIND_WATCH_WALLET` (default `<BITCOIND_WALLET>-watch`, created watch-only when
 *   missing) and `BITCOIND_RESCAN_SINCE` (unix seconds: how far back the first import of the
 *   receive descriptor rescans; default now).
 * - Esplora: `ESPLORA_URL` (receives only: it has no keys to send with).
 */
export function createRails(config: Config, db: Db, keys: BitcoinKeys): BitcoinRails {
  const env = config.env
  const sandbox: BitcoinRails['sandbox'] = {}
  let lightning: LightningRail
  if (config.lightning === 'sandbox') {
    lightning = sandbox.lightning = createSandboxLightningRail({
      db,
      network: config.network,
      nodePrivateKey: keys.nodePrivateKey,
    })
  } else {
    const macaroonPath = env.LND_MACAROON_PATH
    const macaroonHex =
      env.LND_MACAROON_HEX ?? (macaroonPath ? readFileSync(macaroonPath).toString('hex') : undefined)
    const certPath = env.LND_TLS_CERT_PATH
    lightning = createLndRail({
      url: required(env, 'LND_REST_URL'),
      macaroonHex: macaroonHex ?? missing('LND_MACAROON_HEX or LND_MACAROON_PATH'),
      ...(certPath ? { tlsCertPem: readFileSync(certPath, 'utf8') } : {}),
      network: config.network,
      privateInvoices: flag(env, 'LND_INVOICE_ROUTE_HINTS', true),
      ...(env.LND_TIMEOUT_MS ? { timeoutMs: positiveInt(env, 'LND_TIMEOUT_MS') } : {}),
    })
  }

  let onchain: OnchainRail
  if (config.onchain === 'sandbox') {
    onchain = sandbox.onchain = createSandboxOnchainRail({
      db,
      network: config.network,
      creditConfirmations: config.onchainConfirmations,
    })
  } else if (config.onchain === 'bitcoind') {
    onchain = createBitcoindRail({
      url: required(env, 'BITCOIND_RPC_URL'),
      user: required(env, 'BITCOIND_RPC_USER'),
      password: required(env, 'BITCOIND_RPC_PASSWORD'),
      wallet: required(env, 'BITCOIND_WALLET'),
      ...(env.BITCOIND_WATCH_WALLET ? { watchWallet: env.BITCOIND_WATCH_WALLET } : {}),
      // Receive addresses derive from this key: the watch wallet imports it as one ranged descriptor.
      accountXpub: keys.accountXpub,
      ...(env.BITCOIND_RESCAN_SINCE ? { importTimestamp: rescanSince(env.BITCOIND_RESCAN_SINCE) } : {}),
      network: config.network,
      creditConfirmations: config.onchainConfirmations,
    })
  } else {
    onchain = createEsploraRail({
      url: required(env, 'ESPLORA_URL'),
      network: config.network,
      // The addresses handed out (derived from the xpub): what reconciliation sums and lists.
      receiveAddresses: async () =>
        (
          await db.query<{ address: string }>(sql`SELECT address FROM onchain_addresses ORDER BY address`)
        ).rows.map((r) => r.address),
      creditConfirmations: config.onchainConfirmations,
    })
  }
  return { lightning, onchain, sandbox }
}

function rescanSince(text: string): number {
  const seconds = Number(text)
  if (!Number.isSafeInteger(seconds) || seconds < 0)
    throw new ConfigError('BITCOIND_RESCAN_SINCE must be unix seconds')
  return seconds
}

function required(env: Record<string, string | undefined>, name: string): string {
  return env[name] || missing(name)
}

function missing(name: string): never {
  throw new ConfigError(`${name} is required by the configured Bitcoin rail`)
}

function flag(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const value = env[name]
  if (value === undefined || value === '') return fallback
  if (value === 'true' || value === '1') return true
  if (value === 'false' || value === '0') return false
  throw new ConfigError(`${name} must be true or false`)
}

function positiveInt(env: Record<string, string | undefined>, name: string): number {
  const value = Number(env[name])
  if (!Number.isSafeInteger(value) || value < 1) throw new ConfigError(`${name} must be a positive integer`)
  return value
}
