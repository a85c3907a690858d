import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createRatesService, liveRateProvider, staticRateProvider, type RateProvider } from './service.js'
import { loadConfig } from '../config/config.js'
import { RATE_CODES } from '../shared/currency.js'
import { ApiError } from '../shared/errors.js'
import { formatRate } from '../shared/amount.js'

const FIAT = RATE_CODES.filter((c) => !['USDT', 'USDC', 'ETH', 'TRX'].includes(c))

/**
 * A CoinGecko `simple/price` answer, written as raw text so numbers can carry more digits than a
 * float holds.
 */
function coingeckoBody(usd: string): string {
  const fiat = FIAT.map((c) => `"${c.toLowerCase()}":${c === 'USD' ? usd : '1000'}`).join(',')
  return (
    `{"bitcoin":{${fiat},"btc":1},` +
    `"tether":{"usd":1,"btc":0.0000105},"usd-coin":{"btc":0.00001052},` +
    `"ethereum":{"btc":0.03579},"tron":{"btc":2.5e-6}}`
  )
}

/** A stand-in for the rate source on 127.0.0.1 whose answer and availability the test controls. */
class FakeRateSource {
  server!: Server
  requests: URL[] = []
  status = 200
  body = coingeckoBody('95123.123456789012345678')
  url = ''

  async start() {
    this.server = createServer((req, res) => {
      this.requests.push(new URL(req.url ?? '/', 'http://x'))
      res.writeHead(this.status, { 'content-type': 'application/json' })
      res.end(this.status === 200 ? this.body : '{"error":"down"}')
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v3/simple/price`
  }
  async stop() {
    await new Promise((resolve) => this.server.close(resolve))
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

describe('static provider', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svcpay-rates-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('ships a rate for every one of the 28 codes', async () => {
    const rates = await staticRateProvider(loadConfig({}).ratesFile).fetch()
    expect(Object.keys(rates).sort()).toEqual([...RATE_CODES].sort())
    expect(RATE_CODES).toHaveLength(28)
    for (const code of RATE_CODES) expect(rates[code], code).toMatch(/^\d+(\.\d+)?$/)
  })

  it('refuses a rates file with a missing or malformed rate, naming it', () => {
    const file = join(dir, 'rates.json')
    const full = Object.fromEntries(RATE_CODES.map((c) => [c, '1']))
    const { KHR: _omitted, ...missing } = full
    writeFileSync(file, JSON.stringify({ rates: missing }))
    expect(() => staticRateProvider(file)).toThrow(/rate for KHR missing/)
    writeFileSync(file, JSON.stringify({ rates: { ...full, USD: 95000 } }))
    expect(() => staticRateProvider(file)).toThrow(/rate for USD missing/)
    writeFileSync(file, JSON.stringify({ rates: { ...full, EUR: 'abc' } }))
    expect(() => staticRateProvider(file)).toThrow(/invalid rate abc/)
  })
})

describe('rates service', () => {
  const fixed = (rates: Record<string, string>): RateProvider => ({ name: 'test', fetch: async () => rates })

  it('exposes exact rates per BTC, with BTC itself at 1', async () => {
    const svc = createRatesService({ provider: fixed({ USD: '95000.50', ETH: '27.94' }), maxAgeMs: 60_000 })
    const snap = await svc.current()
    expect(snap.texts).toEqual({ USD: '95000.5', ETH: '27.94' })
    expect(svc.perBtc(snap, 'BTC')).toEqual({ num: 1n, scale: 0 })
    expect(formatRate(svc.perBtc(snap, 'USD'))).toBe('95000.5')
    const err = (() => {
      try {
        svc.perBtc(snap, 'XYZ')
      } catch (e) {
        return e
      }
    })()
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).code).toBe('unsupported_currency_pair')
  })

  it('refuses a source that quotes zero instead of pricing with it', async () => {
    const svc = createRatesService({ provider: fixed({ USD: '0' }), maxAgeMs: 60_000 })
    const err = (await rejection(svc.current())) as ApiError
    expect(err.code).toBe('rate_unavailable')
    expect(err.status).toBe(503)
  })
})

describe('live provider', () => {
  const source = new FakeRateSource()
  beforeAll(() => source.start())
  afterAll(() => source.stop())
  beforeEach(() => {
    source.requests = []
    source.status = 200
    source.body = coingeckoBody('95123.123456789012345678')
  })

  it('asks for BTC in every fiat code and each crypto in BTC', async () => {
    await liveRateProvider({ url: source.url }).fetch()
    const q = source.requests[0]!
    expect(q.pathname).toBe('/api/v3/simple/price')
    expect(q.searchParams.get('ids')!.split(',').sort()).toEqual([
      'bitcoin',
      'ethereum',
      'tether',
      'tron',
      'usd-coin',
    ])
    expect(q.searchParams.get('vs_currencies')!.split(',').sort()).toEqual(
      [...FIAT.map((c) => c.toLowerCase()), 'btc'].sort(),
    )
  })

  it('reads numbers as exact text and inverts crypto prices', async () => {
    const rates = await liveRateProvider({ url: source.url }).fetch()
    expect(Object.keys(rates).sort()).toEqual([...RATE_CODES].sort())
    expect(rates.USD).toBe('95123.123456789012345678')
    expect(rates.EUR).toBe('1000')
    // Inverses keep 12 significant digits, rounded down: 1 / 0.0000105 = 95238.0952380952...; 1 / 0.03579 = 27.94076557697...; 1 / 2.5e-6 = 400000.
    expect(rates.USDT).toBe('95238.095238')
    expect(rates.ETH).toBe('27.9407655769')
    expect(rates.TRX).toBe('400000')
  })

  it('fails on an error status or a missing price', async () => {
    source.status = 500
    await expect(liveRateProvider({ url: source.url }).fetch()).rejects.toThrow(/answered 500/)
    source.status = 200
    source.body = '{"bitcoin":{"usd":1}}'
    await expect(liveRateProvider({ url: source.url }).fetch()).rejects.toThrow(/has no BTC/)
  })

  it('caches within the refresh interval and refreshes after it', async () => {
    let now = 1_000_000
    const svc = createRatesService({
      provider: liveRateProvider({ url: source.url }),
      maxAgeMs: 300_000,
      refreshMs: 60_000,
      now: () => now,
    })
    const [a, b] = await Promise.all([svc.current(), svc.current()])
    expect(source.requests).toHaveLength(1)
    expect(a).toBe(b)
    expect(a.texts.USD).toBe('95123.123456789012345678')
    now += 59_000
    await svc.current()
    expect(source.requests).toHaveLength(1)

    source.body = coingeckoBody('96000.25')
    now += 2_000
    // Past the refresh interval the cached rates are still served while the refresh runs.
    expect((await svc.current()).texts.USD).toBe('95123.123456789012345678')
    await expect.poll(() => source.requests.length).toBe(2)
    await expect.poll(async () => (await svc.current()).texts.USD).toBe('96000.25')
    expect(source.requests).toHaveLength(2)
  })

  it('keeps serving while the source is down, then refuses once the rates are older than the limit', async () => {
    let now = 5_000_000
    const svc = createRatesService({
      provider: liveRateProvider({ url: source.url }),
      maxAgeMs: 300_000,
      refreshMs: 60_000,
      now: () => now,
    })
    const first = await svc.current()
    await source.stop()
    try {
      now += 200_000
      expect(await svc.current()).toBe(first)
      now += 100_000
      const err = (await rejection(svc.current())) as ApiError
      expect(err).toBeInstanceOf(ApiError)
      expect(err.code).toBe('rate_unavailable')
      expect(err.status).toBe(503)
      expect(err.toBody()).toEqual({ error: 'rate_unavailable', message: expect.any(String) })
    } finally {
      await source.start()
    }
    // Once the source answers again, quotes resume.
    const restarted = createRatesService({
      provider: liveRateProvider({ url: source.url }),
      maxAgeMs: 300_000,
    })
    expect((await restarted.current()).texts.USD).toBe('95123.123456789012345678')
  })

  it('refuses from the start when the source never answered', async () => {
    source.status = 503
    const svc = createRatesService({ provider: liveRateProvider({ url: source.url }), maxAgeMs: 300_000 })
    expect(((await rejection(svc.current())) as ApiError).code).toBe('rate_unavailable')
  })
})
