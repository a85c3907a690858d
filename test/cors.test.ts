import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config/config.js'
import { docsServers } from '../src/openapi/openapi.js'
import { createHarness, type Harness, type TestAccount } from './helpers/harness.js'

/**
 * CORS (contract section 11): browsers at the origins listed in CORS_ORIGINS may call the public
 * API (/api/v2, the token exchange included); any other origin, and every operator route, gets no
 * CORS header at all. The allowed origin is always echoed, never `*`, and no credentials are
 * allowed: the API takes a bearer token, never a cookie.
 */

const APP = 'https://shop.example.com'
const OTHER = 'https://evil.example.net'

const corsHeaders = (headers: Record<string, unknown>) =>
  Object.keys(headers).filter((name) => name.startsWith('access-control-'))

const preflight = (h: Harness, url: string, origin: string, method: string, requestHeaders?: string) =>
  h.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      ...(requestHeaders ? { 'access-control-request-headers': requestHeaders } : {}),
    },
  })

describe('CORS with CORS_ORIGINS set', () => {
  let h: Harness
  let acct: TestAccount

  beforeAll(async () => {
    h = await createHarness({ CORS_ORIGINS: `${APP}, http://127.0.0.1:5173` })
    acct = await h.createAccount()
  })
  afterAll(() => h?.close())

  it('answers a preflight of the token exchange from a listed origin: 204, that origin, its headers allowed', async () => {
    const res = await preflight(
      h,
      '/api/v2/authentication/token-signature',
      APP,
      'POST',
      'content-type,x-api-key,x-api-signature',
    )
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toEqual(
      expect.arrayContaining(['GET', 'POST', 'PUT', 'DELETE']),
    )
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)
    expect(allowed).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'x-api-key', 'x-api-signature']),
    )
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0)
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
    expect(String(res.headers.vary)).toMatch(/\bOrigin\b/i)
  })

  it('answers a preflight of any /api/v2 operation, and the call itself carries the origin and exposes the rate-limit headers', async () => {
    const url = `/api/v2/account/${acct.accountId}/wallet/`
    const pre = await preflight(h, url, 'http://127.0.0.1:5173', 'GET', 'authorization')
    expect(pre.statusCode).toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBe('http://127.0.0.1:5173')

    const res = await h.app.inject({
      method: 'GET',
      url,
      headers: { origin: APP, authorization: `Bearer ${acct.token}` },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
    expect(String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)).toEqual(
      expect.arrayContaining([
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
        'retry-after',
      ]),
    )
    expect(String(res.headers.vary)).toMatch(/\bOrigin\b/i)
  })

  it('lets the browser read an error answer too', async () => {
    const res = await h.app.inject({
      method: 'GET',
      url: `/api/v2/account/${acct.accountId}`,
      headers: { origin: APP, authorization: 'Bearer not-a-token' },
    })
    expect(res.statusCode).toBe(401)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
  })

  it('sends no CORS header to an origin that is not listed, preflight or not', async () => {
    const pre = await preflight(h, '/api/v2/authentication/token-signature', OTHER, 'POST', 'x-api-key')
    expect(pre.statusCode).not.toBe(204)
    expect(corsHeaders(pre.headers)).toEqual([])
    // An origin is matched whole: a listed origin's prefix or a different port is another origin.
    for (const origin of [`${APP}.evil.net`, 'http://127.0.0.1:5174', APP.toUpperCase(), 'null']) {
      const other = await preflight(h, '/api/v2/rate', origin, 'GET', 'authorization')
      expect(corsHeaders(other.headers), origin).toEqual([])
    }
    const res = await h.app.inject({
      method: 'GET',
      url: '/api/v2/rate',
      headers: { origin: OTHER, authorization: `Bearer ${acct.token}` },
    })
    expect(res.statusCode).toBe(200)
    expect(corsHeaders(res.headers)).toEqual([])
    // Caches must not hand one origin's answer to another.
    expect(String(res.headers.vary)).toMatch(/\bOrigin\b/i)
  })

  it('never opens the operator routes, the console or the docs to another origin', async () => {
    for (const url of ['/admin/accounts', '/console', '/docs/json', '/openapi.json', '/sandbox/fund']) {
      const pre = await preflight(h, url, APP, 'GET', 'authorization')
      expect(pre.statusCode, url).not.toBe(204)
      expect(corsHeaders(pre.headers), url).toEqual([])
      const res = await h.app.inject({ method: 'GET', url, headers: { origin: APP } })
      expect(corsHeaders(res.headers), url).toEqual([])
    }
  })
})

describe('CORS by default', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(() => h?.close())

  it('answers no preflight and sends no CORS header when CORS_ORIGINS is unset', async () => {
    const pre = await preflight(h, '/api/v2/authentication/token-signature', APP, 'POST', 'x-api-key')
    expect(pre.statusCode).toBe(404)
    expect(corsHeaders(pre.headers)).toEqual([])
    const res = await h.app.inject({ method: 'GET', url: '/api/v2/rate', headers: { origin: APP } })
    expect(corsHeaders(res.headers)).toEqual([])
  })
})

describe('CORS_ORIGINS', () => {
  const load = (value: string) => loadConfig({ CORS_ORIGINS: value }).corsOrigins

  it('is a comma-separated list of origins, empty by default, written as browsers send them', () => {
    expect(loadConfig({}).corsOrigins).toEqual([])
    expect(load('')).toEqual([])
    expect(load(' https://App.Example.com/ ,http://127.0.0.1:5173,https://app.example.com:443')).toEqual([
      'https://app.example.com',
      'http://127.0.0.1:5173',
    ])
  })

  it('refuses a wildcard, a path, a query, credentials, or anything that is not an http(s) origin', () => {
    for (const bad of [
      '*',
      'https://*.example.com',
      'null',
      'https://app.example.com/shop',
      'https://app.example.com?x=1',
      'https://user:pw@app.example.com',
      'ftp://app.example.com',
      'app.example.com',
    ]) {
      expect(() => load(bad), bad).toThrow(ConfigError)
    }
    expect(() => load(Array.from({ length: 101 }, (_, i) => `https://a${i}.example.com`).join(','))).toThrow(
      ConfigError,
    )
  })
})

describe('the API reference at /docs', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ PUBLIC_BASE_URL: 'http://localhost:8080' })
  })
  afterAll(() => h?.close())

  it('sends "Try it out" to the address the page was opened from, whichever of the printed ones it was', async () => {
    const served = JSON.parse((await h.app.inject({ method: 'GET', url: '/docs/json' })).body)
    // A server URL without a host is resolved against the document's own address (OpenAPI 3.1,
    // "Server Object"): http://127.0.0.1:8080/docs calls http://127.0.0.1:8080/api/v2/...
    expect(served.servers[0].url).toBe('/')
    for (const page of ['http://127.0.0.1:8080/docs/json', 'http://localhost:8080/docs/json']) {
      expect(new URL(served.servers[0].url, page).origin).toBe(new URL(page).origin)
    }
    expect(served.servers.map((s: { url: string }) => s.url)).toContain('http://localhost:8080')
    // The document for generators keeps the public address alone.
    const doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/openapi.json' })).body)
    expect(doc.servers).toEqual([{ url: 'http://localhost:8080' }])
  })

  it('keeps the path of a public address served under a prefix', () => {
    const served = docsServers({ openapi: '3.1.0', servers: [] }, 'https://example.com/svcpay')
    expect(served.servers[0].url).toBe('/svcpay')
    expect(served.servers[1].url).toBe('https://example.com/svcpay')
  })
})
