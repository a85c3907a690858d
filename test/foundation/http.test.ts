import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Validator } from '@seriousme/openapi-schema-validator'
import { createHarness, createTestDb, type Harness, type TestAccount } from '../helpers/harness.js'
import { loadConfig } from '../../src/config/config.js'
import { createContainer } from '../../src/container.js'
import { buildApp } from '../../src/app.js'
import { createLogger } from '../../src/logger.js'
import { RATE_CODES } from '../../src/shared/currency.js'

const errorBody = (code: string) => ({ error: code, message: expect.any(String) })

let h: Harness
let acct: TestAccount
beforeAll(async () => {
  h = await createHarness()
  acct = await h.createAccount()
})
afterAll(async () => h?.close())

async function raw(method: string, url: string, headers: Record<string, string>, payload?: string) {
  const res = await h.app.inject({
    method: method as any,
    url,
    headers,
    ...(payload !== undefined ? { payload } : {}),
  })
  let body: unknown
  try {
    body = JSON.parse(res.body)
  } catch {
    body = res.body
  }
  return { status: res.statusCode, body, headers: res.headers, text: res.body }
}

describe('error model', () => {
  it('answers an unknown route with 404 and the error body, for any method', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await raw(method, '/api/v2/nothing-here?x=1', {})
      expect(r.status, method).toBe(404)
      // The answer names neither the method nor the path: error texts never echo input.
      expect(r.body).toEqual({ error: 'not_found', message: 'No route answers this method and path' })
      expect(r.headers['content-type']).toMatch(/^application\/json/)
    }
  })

  it('treats an empty PUT or DELETE body sent as JSON as no body', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const r = await raw(method, '/api/v2/no-such-resource/x1', { 'content-type': 'application/json' }, '')
      expect(r, method).toMatchObject({ status: 404, body: errorBody('not_found') })
    }
  })

  it('accepts a JSON content type with a charset or a +json suffix', async () => {
    const body = '{"name":"Charset"}'
    for (const contentType of ['application/json; charset=utf-8', 'application/vnd.svcpay+json']) {
      const r = await raw(
        'POST',
        '/admin/accounts',
        { authorization: `Bearer ${h.adminToken}`, 'content-type': contentType },
        body,
      )
      expect(r.status, contentType).toBe(200)
    }
  })

  it('answers malformed JSON with 400 invalid_json', async () => {
    for (const body of ['{"name":', '{name: 1}', '{"name":"x"} trailing', '['.repeat(40) + ']'.repeat(40)]) {
      const r = await raw(
        'POST',
        '/admin/accounts',
        { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
        body,
      )
      expect(r, body.slice(0, 20)).toEqual(
        expect.objectContaining({ status: 400, body: errorBody('invalid_json') }),
      )
    }
  })

  it('answers a body over 64 KiB with 413 payload_too_large', async () => {
    const big = JSON.stringify({ name: 'x', pad: 'p'.repeat(65 * 1024) })
    const headers = { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' }
    expect(await raw('POST', '/admin/accounts', headers, big)).toMatchObject({
      status: 413,
      body: errorBody('payload_too_large'),
    })
    const token = await raw(
      'POST',
      '/api/v2/authentication/token-signature',
      { 'content-type': 'application/json', 'x-api-key': 'k' },
      big,
    )
    expect(token).toMatchObject({ status: 413, body: errorBody('payload_too_large') })
    // Exactly 64 KiB is within the limit; one byte more is not.
    const exactly = (size: number) => {
      const head = '{"name":"x","pad":"'
      return head + 'p'.repeat(size - head.length - 2) + '"}'
    }
    expect(exactly(64 * 1024)).toHaveLength(65_536)
    expect((await raw('POST', '/admin/accounts', headers, exactly(64 * 1024))).status).toBe(200)
    expect((await raw('POST', '/admin/accounts', headers, exactly(64 * 1024 + 1))).status).toBe(413)
  })

  it('answers a streamed body over 64 KiB with 413 over real HTTP', async () => {
    await h.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = h.app.server.address() as AddressInfo
    const chunk = new TextEncoder().encode('x'.repeat(8 * 1024))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"'))
        if (sent >= 20) return controller.close()
        sent++
        controller.enqueue(chunk)
      },
    })
    const res = await fetch(`http://127.0.0.1:${port}/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual(errorBody('payload_too_large'))
  })

  it('answers a non-JSON body with 415 unsupported_media_type', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const r = await raw(
        'POST',
        '/admin/accounts',
        { authorization: `Bearer ${h.adminToken}`, 'content-type': contentType },
        'name=x',
      )
      expect(r, contentType).toEqual(
        expect.objectContaining({ status: 415, body: errorBody('unsupported_media_type') }),
      )
    }
  })

  it('answers schema violations with 400 invalid_request naming the field', async () => {
    const r = await raw(
      'POST',
      '/admin/accounts',
      { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      '{"tier":"gold"}',
    )
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ error: 'invalid_request', message: expect.any(String) })
    const fields = (r.body as any).details.map((d: any) => d.field)
    expect(fields).toEqual(expect.arrayContaining(['name', 'tier']))
  })

  it('never leaks a stack trace in an error body', async () => {
    const r = await raw(
      'POST',
      '/admin/accounts',
      { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      '{"name":',
    )
    expect(r.text).not.toMatch(/at .*\.(ts|js):\d+|node_modules|stack/i)
  })
})

describe('operator API', () => {
  const admin = () => ({ authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' })

  it('requires the admin token', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong-admin-token-value',
      `Bearer ${acct.token}`,
      h.adminToken,
    ]) {
      const r = await raw('GET', '/admin/accounts', authorization ? { authorization } : {})
      expect(r, String(authorization)).toEqual(
        expect.objectContaining({ status: 401, body: errorBody('unauthorized') }),
      )
    }
  })

  it('creates accounts with a key, sub-accounts and tiers; refuses unknown parents and accounts', async () => {
    const created = await raw(
      'POST',
      '/admin/accounts',
      admin(),
      JSON.stringify({ name: '  Ops test  ', tier: 'premium' }),
    )
    expect(created.body).toMatchObject({
      accountId: expect.stringMatching(/^acc_/),
      apiKey: expect.stringMatching(/^key_/),
      apiSecret: expect.stringMatching(/^sk_/),
      account: { displayName: 'Ops test', tier: 'premium', parentId: null },
    })
    const id = (created.body as any).accountId
    const unknownParent = await raw(
      'POST',
      '/admin/accounts',
      admin(),
      JSON.stringify({ name: 'Orphan', parentId: 'acc_' + '0'.repeat(25) }),
    )
    expect(unknownParent).toMatchObject({ status: 404, body: errorBody('not_found') })
    const tier = await raw('PUT', `/admin/accounts/${id}/tier`, admin(), '{"tier":"standard"}')
    expect(tier.body).toEqual({ accountId: id, tier: 'standard' })
    expect((await raw('PUT', `/admin/accounts/acc_missing/tier`, admin(), '{"tier":"premium"}')).status).toBe(
      404,
    )
    expect((await raw('POST', '/admin/keys', admin(), '{"accountId":"acc_missing"}')).status).toBe(404)
    const list = await raw('GET', '/admin/accounts', { authorization: `Bearer ${h.adminToken}` })
    expect((list.body as any).data.find((a: any) => a.id === id)).toMatchObject({
      tier: 'standard',
      displayName: 'Ops test',
    })
  })
})

describe('rates endpoint', () => {
  it('answers all 28 BTC rates as numbers', async () => {
    const r = await h.api('GET', '/api/v2/rate', acct.token)
    expect(r.status).toBe(200)
    expect(Object.keys(r.body.data).sort()).toEqual(RATE_CODES.map((c) => `BTC${c}`).sort())
    for (const [key, value] of Object.entries(r.body.data)) {
      expect(typeof value, key).toBe('number')
      expect(value as number, key).toBeGreaterThan(0)
    }
    expect(r.body.data).toMatchObject({ BTCUSD: 95000, BTCVND: 2470000000, BTCETH: 27.94 })
  })

  it('requires a token', async () => {
    expect(await h.api('GET', '/api/v2/rate', undefined)).toMatchObject({
      status: 401,
      body: errorBody('unauthorized'),
    })
  })
})

describe('health, metrics and the API reference', () => {
  it('reports liveness and readiness', async () => {
    expect(await raw('GET', '/healthz', {})).toMatchObject({ status: 200, body: { status: 'ok' } })
    expect(await raw('GET', '/readyz', {})).toMatchObject({ status: 200, body: { status: 'ready' } })
  })

  it('reports not ready when the database is gone', async () => {
    const { db, drop } = await createTestDb()
    const config = loadConfig({ DATA_DIR: h.dataDir, ADMIN_TOKEN: h.adminToken, LOG_LEVEL: 'silent' })
    const c = await createContainer(config, createLogger('silent'), { db })
    const app = await buildApp(c)
    try {
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
      await db.close()
      const res = await app.inject({ method: 'GET', url: '/readyz' })
      expect(res.statusCode).toBe(503)
      expect(res.json()).toEqual(errorBody('service_unavailable'))
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    } finally {
      await app.close()
      await drop()
    }
  })

  it('exposes Prometheus metrics with request durations by route', async () => {
    await h.api('GET', `/api/v2/account/${acct.accountId}/wallet/`, acct.token)
    const r = await raw('GET', '/metrics', {})
    expect(r.status).toBe(200)
    expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(r.text).toContain('# HELP svcpay_http_request_duration_seconds')
    expect(r.text).toContain('# TYPE svcpay_http_request_duration_seconds histogram')
    expect(r.text).toMatch(
      /svcpay_http_request_duration_seconds_count\{method="GET",route="\/api\/v2\/account\/:accountId\/wallet\/",status="200"\} [1-9]/,
    )
    expect(r.text).toContain('svcpay_process_cpu_user_seconds_total')
  })

  it('publishes a valid OpenAPI 3.1 document with the API routes and without the operator ones', async () => {
    const r = await raw('GET', '/openapi.json', {})
    expect(r.status).toBe(200)
    const doc = r.body as any
    expect(doc.openapi).toBe('3.1.0')
    for (const path of [
      '/api/v2/authentication/token-signature',
      '/api/v2/account/{accountId}',
      '/api/v2/account/{accountId}/wallet/',
      '/api/v2/account/{accountId}/wallet/{walletId}',
      '/api/v2/rate',
    ]) {
      expect(doc.paths, path).toHaveProperty([path])
    }
    expect(doc.paths['/api/v2/authentication/token-signature'].post).toBeDefined()
    expect(doc.paths['/api/v2/rate'].get.security).toEqual([{ bearerAuth: [] }])
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin'))).toEqual([])
    const validation = await new Validator().validate(doc)
    expect(validation.errors ?? [], JSON.stringify(validation.errors)).toEqual([])
    expect(validation.valid).toBe(true)
  })

  it('serves the API reference as HTML at /docs', async () => {
    let res = await h.app.inject({ method: 'GET', url: '/docs' })
    for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 3; hops++) {
      res = await h.app.inject({
        method: 'GET',
        url: new URL(res.headers.location as string, 'http://x/docs/').pathname,
      })
    }
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.body).toMatch(/<html/i)
  })
})
