import { readFileSync } from 'node:fs'
import { parse as losslessParse, isLosslessNumber } from 'lossless-json'
import { formatRate, parseRate, type Rate } from '../shared/amount.js'
import { RATE_CODES } from '../shared/currency.js'
import { ApiError } from '../shared/errors.js'

/** Where BTC rates come from. Values are decimal text: units of the currency per 1 BTC. */
export interface RateProvider {
  readonly name: string
  fetch(): Promise<Record<string, string>>
}

export interface RateSnapshot {
  /** Units per 1 BTC, keyed by currency code; BTC itself is 1. */
  rates: Map<string, Rate>
  texts: Record<string, string>
  fetchedAt: number
}

export interface RatesService {
  /** The current rates; refuses (503 rate_unavailable) when they are older than the staleness limit. */
  current(): Promise<RateSnapshot>
  perBtc(snapshot: RateSnapshot, ccy: string): Rate
}

export function staticRateProvider(file: string): RateProvider {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { rates?: Record<string, string> }
  const rates = parsed.rates ?? {}
  for (const code of RATE_CODES) {
    if (typeof rates[code] !== 'string')
      throw new Error(`${file}: rate for ${code} missing (decimal text expected)`)
    parseRate(rates[code]!)
  }
  return { name: 'static', fetch: async () => rates }
}

/** CoinGecko's ids for the crypto codes we quote; fiat codes are its vs_currencies. */
const CRYPTO_IDS: Record<string, string> = { USDT: 'tether', USDC: 'usd-coin', ETH: 'ethereum', TRX: 'tron' }

/**
 * A live provider over CoinGecko's public `simple/price` API: BTC priced in every fiat code, and
 * each crypto code priced in BTC (inverted). Numbers are read as exact text, never as floats.
 */
export function liveRateProvider(opts: { url: string; timeoutMs?: number; apiKey?: string }): RateProvider {
  const fiat = RATE_CODES.filter((c) => !(c in CRYPTO_IDS))
  return {
    name: 'live',
    async fetch() {
      const ids = ['bitcoin', ...Object.values(CRYPTO_IDS)].join(',')
      const vs = [...fiat.map((c) => c.toLowerCase()), 'btc'].join(',')
      const res = await fetch(`${opts.url}?ids=${ids}&vs_currencies=${vs}`, {
        headers: { accept: 'application/json', ...(opts.apiKey ? { 'x-cg-demo-api-key': opts.apiKey } : {}) },
        signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
      })
      if (!res.ok) throw new Error(`rate source answered ${res.status}`)
      const body = losslessParse(await res.text(), (_k, v) =>
        isLosslessNumber(v) ? v.toString() : v,
      ) as Record<string, Record<string, string>>
      const out: Record<string, string> = {}
      for (const code of fiat) {
        const v = body.bitcoin?.[code.toLowerCase()]
        if (v === undefined) throw new Error(`rate source has no BTC${code}`)
        out[code] = v
      }
      for (const [code, id] of Object.entries(CRYPTO_IDS)) {
        const inBtc = body[id]?.btc
        if (inBtc === undefined) throw new Error(`rate source has no ${id} price in BTC`)
        out[code] = invertDecimal(inBtc)
      }
      return out
    },
  }
}

/** 1 / x to 12 significant digits, exactly, from decimal text. */
function invertDecimal(text: string): string {
  const r = parseRate(text)
  if (r.num === 0n) throw new Error('zero rate')
  const digits = 12
  let scale = 0
  while (10n ** BigInt(r.scale + scale) / r.num < 10n ** BigInt(digits - 1)) scale++
  const value = 10n ** BigInt(r.scale + scale) / r.num
  const s = value.toString().padStart(scale + 1, '0')
  return scale ? `${s.slice(0, -scale)}.${s.slice(-scale)}`.replace(/\.?0+$/, '') : s
}

export function createRatesService(deps: {
  provider: RateProvider
  maxAgeMs: number
  refreshMs?: number
  now?: () => number
  log?: { warn(obj: object, msg: string): void }
}): RatesService {
  const now = deps.now ?? Date.now
  const refreshMs = deps.refreshMs ?? Math.min(60_000, deps.maxAgeMs / 2)
  let snapshot: RateSnapshot | undefined
  let inflight: Promise<void> | undefined

  async function refresh(): Promise<void> {
    try {
      const fetched = await deps.provider.fetch()
      const rates = new Map<string, Rate>([['BTC', { num: 1n, scale: 0 }]])
      const texts: Record<string, string> = {}
      for (const [code, text] of Object.entries(fetched)) {
        const rate = parseRate(text)
        if (rate.num === 0n) throw new Error(`zero rate for ${code}`)
        rates.set(code, rate)
        texts[code] = formatRate(rate)
      }
      snapshot = { rates, texts, fetchedAt: now() }
    } catch (err) {
      deps.log?.warn({ provider: deps.provider.name, error: (err as Error).message }, 'rate refresh failed')
    }
  }

  return {
    async current() {
      if (!snapshot || now() - snapshot.fetchedAt >= refreshMs) {
        inflight ??= refresh().finally(() => (inflight = undefined))
        // Serve a fresh-enough snapshot while a refresh runs; wait when there is none.
        if (!snapshot || now() - snapshot.fetchedAt >= deps.maxAgeMs) await inflight
      }
      if (!snapshot || now() - snapshot.fetchedAt >= deps.maxAgeMs) {
        throw new ApiError(
          'rate_unavailable',
          'Exchange rates are unavailable right now; quotes are refused until they return',
        )
      }
      return snapshot
    },
    perBtc(s, ccy) {
      const r = s.rates.get(ccy)
      if (!r) throw new ApiError('unsupported_currency_pair', 'No exchange rate for this currency')
      return r
    },
  }
}
