import { isIP } from 'node:net'
import { join, resolve } from 'node:path'
import { RATE_CODES, isCurrency, precisionOf } from '../shared/currency.js'
import { NETWORKS, type Network } from './network.js'
import { RAIL_KINDS, RAIL_OPS_DEFAULTS, type RailOpsConfig } from './rail-ops.js'
import { parseCorsOrigins } from './cors-origins.js'
import { limitsConfig, LimitsConfigError, type LimitsConfig } from './limits.js'

/**
 * Every environment variable the service reads, parsed and checked in one place. A bad value stops
 * the process at start with a message naming the variable.
 */
export interface Config {
  port: number
  host: string
  publicBaseUrl: string
  invoicePageUrl: string
  databaseUrl: string | undefined
  dataDir: string
  redisUrl: string | undefined
  rails: 'sandbox' | 'real'
  lightning: 'sandbox' | 'lnd'
  onchain: 'sandbox' | 'bitcoind' | 'esplora'
  tron: 'sandbox' | 'trongrid'
  /** USDT over Ethereum (issue 33): `ETH=sandbox|jsonrpc`. */
  eth: 'sandbox' | 'jsonrpc'
  vnd: 'sandbox' | 'bank-http'
  network: Network
  walletCurrencies: string[]
  tokenTtlS: number
  quoteTtlS: number
  invoiceExpiryS: number
  onchainConfirmations: number
  onchainReceiveTtlS: number
  role: 'all' | 'api' | 'worker'
  webhookVariant: 'a' | 'b'
  allowHttpWebhooks: boolean
  allowPrivateWebhooks: boolean
  // Webhook delivery and status streams (src/events/): the per-attempt time-out, the first retry's
  // nominal wait (the schedule scales with it; shortened only in tests), sends in flight per process,
  // the status stream's keep-alive interval, and the open streams one process serves.
  webhookTimeoutMs: number
  webhookBackoffBaseMs: number
  webhookConcurrency: number
  streamHeartbeatMs: number
  streamListenersMax: number
  // The hosted invoice page (src/pages/): the fiat currency its amount is also shown in, and the
  // live page streams one client address may hold open at once.
  pageFiatCcy: string
  pageStreamsPerAddressMax: number
  adminToken: string | undefined
  masterKey: string | undefined
  /** MASTER_KEY_PREVIOUS: old master keys that still open (comma-separated), for rotation (issue 32). */
  masterKeyPrevious: string[]
  jwtSecret: string | undefined
  ratesProvider: 'static' | 'live'
  ratesFile: string
  ratesLiveUrl: string
  ratesMaxAgeS: number
  fxSpreadBps: bigint
  fees: FeeSchedule
  logLevel: string
  sandboxTronFail: string[]
  /** Ethereum addresses whose sandbox transfers revert (`SANDBOX_ETH_FAIL`). */
  sandboxEthFail: string[]
  // Payouts (TRON USDT and VND bank): the fixed TRON network fee, and how long sandbox payouts take.
  tronNetworkFeeUsdtMinor: bigint
  // The largest Lightning or on-chain receive quoted, in sats (RECEIVE_MAX_BTC; never above 21e6 BTC).
  receiveMaxSats: bigint
  sandboxPayoutDelayMs: number
  // Rail operations (src/rails/attempts.ts, docs/operations.md): per rail, when a transaction counts
  // as stuck (RAIL_<RAIL>_STUCK_AFTER_S) and how its retries back off (RAIL_<RAIL>_RETRY_BASE_MS,
  // RAIL_<RAIL>_RETRY_MAX_MS); and how long `svcpay rails check` waits for each rail (RAILS_CHECK_TIMEOUT_MS).
  railOps: RailOpsConfig
  railsCheckTimeoutMs: number
  // Four-eyes approval (src/approvals/): per currency, the amount above which a payout or on-chain
  // send waits for a second operator (APPROVAL_THRESHOLD_<CCY>, minor units; a currency without
  // one never waits), and how long an approval may take before the send is refused (APPROVAL_TTL_S).
  approvalThresholds: Record<string, bigint>
  approvalTtlS: number
  dbPoolMax: number
  bodyLimitBytes: number
  // Which peers may say who the client is in X-Forwarded-For (TRUST_PROXY): none, the number of
  // proxy hops in front of the service, or the proxies' addresses and CIDR ranges.
  trustProxy: TrustProxy
  // Browser origins allowed to call the public API (CORS_ORIGINS, src/http/cors.ts); none by default.
  corsOrigins: readonly string[]
  // Limits and risk controls (src/limits, docs/limits.md): LIMITS_CCY, LIMITS_<TIER>_<LIMIT>[_<METHOD>],
  // HOT_WALLET_CAP_<RAIL>_PER_HOUR, LIMITS_ENABLED (src/config/limits.ts).
  limits: LimitsConfig
  env: Record<string, string | undefined>
}

export type TrustProxy = false | number | string[]

/** Per method: a fixed fee in the source currency's minor units plus basis points of the amount. */
export interface FeeRule {
  fixedMinor: bigint
  bps: bigint
}
export type FeeSchedule = Record<string, FeeRule>

export class ConfigError extends Error {
  override name = 'ConfigError'
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = int(env, 'PORT', 8080, 0, 65535)
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`).replace(/\/$/, '')
  const rails = oneOf(env, 'RAILS', ['sandbox', 'real'] as const, 'sandbox')
  const sandbox = rails === 'sandbox'
  const walletCurrencies = (env.WALLET_CURRENCIES ?? 'BTC,USDT,VND,USD,CAD')
    .split(',')
    .map((c) => c.trim().toUpperCase())
    .filter(Boolean)
  for (const c of walletCurrencies) {
    if (!isCurrency(c)) throw new ConfigError(`WALLET_CURRENCIES: unknown currency ${c}`)
    if (c === 'ETH') throw new ConfigError('WALLET_CURRENCIES: ETH wallets are not supported (18 decimals)')
  }
  if (!walletCurrencies.includes('BTC')) throw new ConfigError('WALLET_CURRENCIES must include BTC')
  const dataDir = resolve(env.DATA_DIR ?? './data')
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    publicBaseUrl,
    invoicePageUrl: url(env, 'INVOICE_PAGE_URL', `${publicBaseUrl}/pay`).replace(/\/$/, ''),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir,
    redisUrl: env.REDIS_URL || undefined,
    rails,
    lightning: oneOf(env, 'LIGHTNING', ['sandbox', 'lnd'] as const, sandbox ? 'sandbox' : 'lnd'),
    onchain: oneOf(
      env,
      'ONCHAIN',
      ['sandbox', 'bitcoind', 'esplora'] as const,
      sandbox ? 'sandbox' : 'bitcoind',
    ),
    tron: oneOf(env, 'TRON', ['sandbox', 'trongrid'] as const, sandbox ? 'sandbox' : 'trongrid'),
    vnd: oneOf(env, 'VND', ['sandbox', 'bank-http'] as const, sandbox ? 'sandbox' : 'bank-http'),
    eth: oneOf(env, 'ETH', ['sandbox', 'jsonrpc'] as const, sandbox ? 'sandbox' : 'jsonrpc'),
    network: oneOf(env, 'NETWORK', NETWORKS, sandbox ? 'regtest' : 'mainnet'),
    walletCurrencies,
    tokenTtlS: int(env, 'TOKEN_TTL_S', 3600, 10, 86_400),
    quoteTtlS: int(env, 'QUOTE_TTL_S', 120, 1, 86_400),
    invoiceExpiryS: int(env, 'INVOICE_EXPIRY_S', 3600, 10, 7 * 86_400),
    onchainConfirmations: int(env, 'ONCHAIN_CONFIRMATIONS', sandbox ? 1 : 3, 1, 100),
    onchainReceiveTtlS: int(env, 'ONCHAIN_RECEIVE_TTL_S', 86_400, 60, 30 * 86_400),
    role: oneOf(env, 'ROLE', ['all', 'api', 'worker'] as const, 'all'),
    webhookVariant: oneOf(env, 'WEBHOOK_VARIANT', ['a', 'b'] as const, 'a'),
    allowHttpWebhooks: bool(env, 'ALLOW_HTTP_WEBHOOKS', sandbox),
    allowPrivateWebhooks: bool(env, 'ALLOW_PRIVATE_WEBHOOKS', false),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookBackoffBaseMs: int(env, 'WEBHOOK_BACKOFF_BASE_MS', 5_000, 1, 5_000),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 32, 1, 1_000),
    streamHeartbeatMs: int(env, 'STREAM_HEARTBEAT_MS', 15_000, 100, 60_000),
    streamListenersMax: int(env, 'STREAM_LISTENERS_MAX', 10_000, 1, 1_000_000),
    pageFiatCcy: pageFiatCcy(env),
    pageStreamsPerAddressMax: int(env, 'PAGE_STREAMS_PER_ADDRESS_MAX', 20, 1, 10_000),
    adminToken: env.ADMIN_TOKEN || undefined,
    masterKey: env.MASTER_KEY || undefined,
    masterKeyPrevious: (env.MASTER_KEY_PREVIOUS ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== ''),
    jwtSecret: env.JWT_SECRET || undefined,
    ratesProvider: oneOf(env, 'RATES_PROVIDER', ['static', 'live'] as const, 'static'),
    ratesFile: env.RATES_FILE ?? join(new URL('../rates/', import.meta.url).pathname, 'static-rates.json'),
    ratesLiveUrl: url(env, 'RATES_LIVE_URL', 'https://api.coingecko.com/api/v3/simple/price'),
    ratesMaxAgeS: int(env, 'RATES_MAX_AGE_S', 300, 5, 86_400),
    fxSpreadBps: BigInt(int(env, 'FX_SPREAD_BPS', 50, 0, 5_000)),
    fees: feeSchedule(env),
    logLevel: oneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    sandboxTronFail: (env.SANDBOX_TRON_FAIL ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    sandboxEthFail: (env.SANDBOX_ETH_FAIL ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    // Payouts: TRON_NETWORK_FEE_USDT is a decimal USDT amount (default 1), kept as 6-decimal minor units.
    tronNetworkFeeUsdtMinor: usdtMinor(env, 'TRON_NETWORK_FEE_USDT', '1'),
    receiveMaxSats: btcSats(env, 'RECEIVE_MAX_BTC', '1000'),
    sandboxPayoutDelayMs: int(env, 'SANDBOX_PAYOUT_DELAY_MS', 1500, 0, 600_000),
    railOps: railOpsConfig(env),
    railsCheckTimeoutMs: int(env, 'RAILS_CHECK_TIMEOUT_MS', 10_000, 100, 120_000),
    approvalThresholds: approvalThresholds(env),
    approvalTtlS: int(env, 'APPROVAL_TTL_S', 86_400, 60, 30 * 86_400),
    dbPoolMax: int(env, 'DB_POOL_MAX', 20, 1, 500),
    trustProxy: trustProxy(env.TRUST_PROXY),
    bodyLimitBytes: 64 * 1024,
    corsOrigins: corsOrigins(env),
    limits: limits(env),
    env,
  }
}

function limits(env: Record<string, string | undefined>): LimitsConfig {
  try {
    return limitsConfig(env)
  } catch (err) {
    if (err instanceof LimitsConfigError) throw new ConfigError(err.message)
    throw err
  }
}

/**
 * Fee schedule: `FEE_<METHOD>` as `<fixed minor units>+<basis points>`, e.g. `FEE_ONCHAIN=0+50`.
 * The method key is the destination method for sends and payouts, `swap` for swaps and the source
 * method for receives.
 */
const DEFAULT_FEES: Record<string, string> = {
  swap: '0+50',
  lightning_send: '0+10',
  onchain_send: '0+10',
  lightning_receive: '0+0',
  onchain_receive: '0+0',
  tron: '0+20',
  // USDT over Ethereum (FEE_ETH); the network fee is quoted apart, from the gas price.
  eth: '0+20',
  'vnd-instant': '0+30',
  // Dong paid in over VietQR (src/payins/receive.ts): free by default.
  vnd_receive: '0+0',
}

function feeSchedule(env: Record<string, string | undefined>): FeeSchedule {
  const out: FeeSchedule = {}
  for (const [method, fallback] of Object.entries(DEFAULT_FEES)) {
    const name = `FEE_${method.toUpperCase().replace(/-/g, '_')}`
    const text = env[name] ?? fallback
    const m = /^(\d{1,15})\+(\d{1,5})$/.exec(text)
    if (!m || BigInt(m[2]!) > 10_000n)
      throw new ConfigError(`${name}: expected <fixed minor units>+<bps>, got ${text}`)
    out[method] = { fixedMinor: BigInt(m[1]!), bps: BigInt(m[2]!) }
  }
  return out
}

const APPROVAL_THRESHOLD_PREFIX = 'APPROVAL_THRESHOLD_'

/**
 * APPROVAL_THRESHOLD_<CCY>: exact decimal text in the currency's units (`10000`, `0.5`), at most as
 * many decimals as the currency has, zero allowed (then every such send waits). Kept as minor units;
 * never through a float.
 */
function approvalThresholds(env: Record<string, string | undefined>): Record<string, bigint> {
  const out: Record<string, bigint> = {}
  for (const [name, text] of Object.entries(env)) {
    if (!name.startsWith(APPROVAL_THRESHOLD_PREFIX) || text === undefined || text === '') continue
    const ccy = name.slice(APPROVAL_THRESHOLD_PREFIX.length)
    if (!isCurrency(ccy)) throw new ConfigError(`${name}: ${ccy} is not a known currency code`)
    const precision = precisionOf(ccy)
    const m = /^(\d{1,18})(?:\.(\d+))?$/.exec(text)
    // Every written decimal counts, zeros too, as in the API (contract section 11): "500.000" dong
    // is refused, never read as 500.
    const frac = m?.[2] ?? ''
    if (!m || frac.length > precision)
      throw new ConfigError(
        `${name}: expected a decimal ${ccy} amount with at most ${precision} decimals, got ${JSON.stringify(text)}`,
      )
    out[ccy] = BigInt(m[1]! + frac.padEnd(precision, '0'))
  }
  return out
}

function corsOrigins(env: Record<string, string | undefined>): string[] {
  const parsed = parseCorsOrigins(env.CORS_ORIGINS)
  if (parsed instanceof Error) throw new ConfigError(`CORS_ORIGINS: ${parsed.message}`)
  return parsed
}

/** PAGE_FIAT_CCY: a fiat currency we have a BTC rate for (crypto codes make no sense beside BTC). */
function pageFiatCcy(env: Record<string, string | undefined>): string {
  const code = (env.PAGE_FIAT_CCY || 'USD').trim().toUpperCase()
  const crypto = ['USDT', 'USDC', 'ETH', 'TRX']
  if (!(RATE_CODES as readonly string[]).includes(code) || crypto.includes(code)) {
    throw new ConfigError(
      `PAGE_FIAT_CCY: expected a fiat currency code with a rate, such as USD or VND, got ${JSON.stringify(env.PAGE_FIAT_CCY)}`,
    )
  }
  return code
}

const TRUST_PROXY_HINT =
  'set the number of proxies in front of the service (TRUST_PROXY=1) or their addresses (TRUST_PROXY=10.0.0.0/8,127.0.0.1)'
// proxy-addr's names for whole ranges, which Fastify's trustProxy accepts alongside addresses.
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * TRUST_PROXY: unset, empty or `false` trusts no proxy (the client is the socket's peer); a whole
 * number N trusts N hops in front of the service; otherwise a comma-separated list of addresses,
 * CIDR ranges or range names. `true` would trust every hop, so the client would be the left-most
 * X-Forwarded-For entry, which the client writes itself: it is refused (docs/configuration.md).
 */
function trustProxy(raw: string | undefined): TrustProxy {
  const text = (raw ?? '').trim()
  if (text === '' || text === 'false') return false
  if (text === 'true')
    throw new ConfigError(
      `TRUST_PROXY: true would take the client's address from the left-most X-Forwarded-For entry, which the client writes itself; ${TRUST_PROXY_HINT}`,
    )
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    if (hops < 1 || hops > 10)
      throw new ConfigError(`TRUST_PROXY: expected from 1 to 10 proxy hops, got ${JSON.stringify(raw)}`)
    return hops
  }
  const entries = text.split(',').map((e) => e.trim())
  for (const entry of entries) {
    if (!isProxyEntry(entry))
      throw new ConfigError(
        `TRUST_PROXY: ${JSON.stringify(entry)} is not an address, a CIDR range or loopback, linklocal, uniquelocal; ${TRUST_PROXY_HINT}`,
      )
  }
  return entries
}

function isProxyEntry(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true
  const slash = entry.indexOf('/')
  const address = slash === -1 ? entry : entry.slice(0, slash)
  const family = isIP(address)
  if (family === 0) return false
  if (slash === -1) return true
  const prefix = entry.slice(slash + 1)
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
}

function int(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < min || n > max) {
    throw new ConfigError(
      `${name}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`,
    )
  }
  return n
}

/** A decimal USDT amount (up to 6 decimals, zero allowed) as minor units. */
function usdtMinor(env: Record<string, string | undefined>, name: string, fallback: string): bigint {
  const text = env[name] || fallback
  const m = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(text)
  if (!m)
    throw new ConfigError(`${name}: expected a USDT amount such as 1 or 0.5, got ${JSON.stringify(text)}`)
  return BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'))
}

/**
 * A decimal BTC amount (up to 8 decimals) as sats, above zero and at most the 21 million BTC that
 * will ever exist.
 */
function btcSats(env: Record<string, string | undefined>, name: string, fallback: string): bigint {
  const text = env[name] || fallback
  const m = /^(\d{1,8})(?:\.(\d{1,8}))?$/.exec(text)
  const sats = m ? BigInt(m[1]!) * 100_000_000n + BigInt((m[2] ?? '').padEnd(8, '0')) : 0n
  if (sats <= 0n || sats > 21_000_000n * 100_000_000n) {
    throw new ConfigError(
      `${name}: expected a BTC amount above 0 and at most 21000000, got ${JSON.stringify(text)}`,
    )
  }
  return sats
}

function bool(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  if (text === 'true' || text === '1') return true
  if (text === 'false' || text === '0') return false
  throw new ConfigError(`${name}: expected true or false, got ${JSON.stringify(text)}`)
}

function oneOf<T extends string>(
  env: Record<string, string | undefined>,
  name: string,
  values: readonly T[],
  fallback: T,
): T {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  if (!values.includes(text as T))
    throw new ConfigError(`${name}: expected one of ${values.join(', ')}, got ${JSON.stringify(text)}`)
  return text as T
}

function url(env: Record<string, string | undefined>, name: string, fallback: string): string {
  const text = env[name] || fallback
  try {
    const u = new URL(text)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error()
  } catch {
    throw new ConfigError(`${name}: expected an http(s) URL, got ${JSON.stringify(text)}`)
  }
  return text
}

/** Per rail: RAIL_<RAIL>_STUCK_AFTER_S, RAIL_<RAIL>_RETRY_BASE_MS and RAIL_<RAIL>_RETRY_MAX_MS. */
function railOpsConfig(env: Record<string, string | undefined>): RailOpsConfig {
  const out = {} as RailOpsConfig
  for (const rail of RAIL_KINDS) {
    const d = RAIL_OPS_DEFAULTS[rail]
    const prefix = `RAIL_${rail.toUpperCase()}_`
    const retryBaseMs = int(env, `${prefix}RETRY_BASE_MS`, d.retryBaseMs, 100, 3_600_000)
    const retryMaxMs = int(env, `${prefix}RETRY_MAX_MS`, d.retryMaxMs, 100, 86_400_000)
    if (retryMaxMs < retryBaseMs)
      throw new ConfigError(`${prefix}RETRY_MAX_MS must be at least ${prefix}RETRY_BASE_MS (${retryBaseMs})`)
    const stuckAfterMs = int(env, `${prefix}STUCK_AFTER_S`, d.stuckAfterMs / 1000, 60, 30 * 86_400) * 1000
    out[rail] = { stuckAfterMs, retryBaseMs, retryMaxMs }
  }
  return out
}
