import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js'
import { buildApp } from '../../src/app.js'
import { createRatesService, liveRateProvider } from '../../src/rates/service.js'
import { RATE_CODES } from '../../src/shared/currency.js'

const CRYPTO_IDS: Record<string, string> = { USDT: 'tether', USDC: 'usd-coin', ETH: 'ethereum', TRX: 'tron' }

/** CoinGecko's `simple/price` answer as raw text: BTC in every fiat code, each crypto in BTC. */
function simplePriceBody(): string {
  const fiat = RATE_CODES.filter((c) => !(c in CRYPTO_IDS))
    .map((c, i) => `"${c.toLowerCase()}":${c === 'USD' ? '97123.45678901234567' : String(1000 + i)}`)
    .join(',')
  return `{"bitcoin":{${fiat}},"tether":{"btc":0.00001},"usd-coin":{"btc":0.0000102},"ethereum":{"btc":0.04},"tron":{"btc":0.0000025}}`
}

describe('live rates through the API', () => {
  let source: Server
  let sourceUrl: string
  let requests = 0
  let up = true
  let h: Harness
  let acct: TestAccount

  beforeAll(async () => {
    source = createServer((_req, res) => {
      requests++
      res.writeHead(up ? 200 : 502, { 'content-type': 'application/json' })
      res.end(up ? simplePriceBody() : '{}')
    })
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve))
    sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/api/v3/simple/price`
    h = await createHarness({ RATES_PROVIDER: 'live', RATES_LIVE_URL: sourceUrl, RATES_MAX_AGE_S: '300' })
    acct = await h.createAccount()
  })
  afterAll(async () => {
    await h?.close()
    await new Promise((resolve) => source?.close(resolve))
  })

  it('serves the live source’s rates exactly, for all 28 codes, fetched once', async () => {
    const res = await h.app.inject({
      method: 'GET',
      url: '/api/v2/rate',
      headers: { authorization: `Bearer ${acct.token}` },
    })
    expect(res.statusCode).toBe(200)
    const data = res.json().data
    expect(Object.keys(data).sort()).toEqual(RATE_CODES.map((c) => `BTC${c}`).sort())
    // More digits than a float holds, passed through as written.
    expect(res.body).toContain('"BTCUSD":97123.45678901234567')
    expect(data).toMatchObject({ BTCUSDT: 100000, BTCETH: 25, BTCTRX: 400000, BTCEUR: 1001 })
    await h.api('GET', '/api/v2/rate', acct.token)
    expect(requests).toBe(1)
  })

  it('refuses with 503 rate_unavailable once the source is down past the staleness limit', async () => {
    let now = Date.now()
    const rates = createRatesService({
      provider: liveRateProvider({ url: sourceUrl }),
      maxAgeMs: 300_000,
      refreshMs: 60_000,
      now: () => now,
    })
    // The same service wired with a clock the test moves.
    const app = await buildApp({ ...h.c, rates })
    try {
      const get = () =>
        app.inject({ method: 'GET', url: '/api/v2/rate', headers: { authorization: `Bearer ${acct.token}` } })
      expect((await get()).statusCode).toBe(200)
      up = false
      now += 120_000
      expect((await get()).statusCode).toBe(200)
      now += 180_001
      const res = await get()
      expect(res.statusCode).toBe(503)
      expect(res.json()).toEqual({ error: 'rate_unavailable', message: expect.any(String) })
      up = true
      await expect.poll(async () => (await get()).statusCode).toBe(200)
    } finally {
      up = true
      await app.close()
    }
  })
})
