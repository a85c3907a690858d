import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createHarness, createTestDb, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { buildApp } from '../app.js'
import { loadConfig } from '../config/config.js'
import { createContainer } from '../container.js'
import { createLogger } from '../logger.js'
import { runDueDeliveries } from './delivery-worker.js'
import { deliveryDepsOf, startReceiver, type Receiver } from '../../test/helpers/webhooks.js'

const SECRET = 'whsec-0123456789abcdef'
const swap = {
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
}

describe('webhook registration (POST/GET/PUT/DELETE /api/v2/webhook)', () => {
  let h: Harness
  let a: TestAccount
  let b: TestAccount
  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Hooks A' })
    b = await h.createAccount({ name: 'Hooks B' })
  })
  afterAll(async () => h?.close())

  it('creates, lists, replaces with a new id, updates and deletes; the secret never comes back and is stored sealed', async () => {
    expect((await h.api('GET', '/api/v2/webhook', a.token)).body).toEqual({ data: [] })

    const first = await h.api('POST', '/api/v2/webhook', a.token, {
      callback: 'http://127.0.0.1:9/one',
      secret: SECRET,
    })
    expect(first.status).toBe(200)
    expect(first.body).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-z]{25}$/),
      callback: 'http://127.0.0.1:9/one',
      createdAt: expect.any(Number),
    })
    expect(Math.abs(first.body.createdAt - Date.now())).toBeLessThan(60_000)

    const stored = await h.c.db.query('SELECT secret_enc FROM webhooks WHERE id = $1', [first.body.id])
    expect(stored.rows[0].secret_enc).not.toContain(SECRET)
    expect(h.c.box.open(stored.rows[0].secret_enc)).toBe(SECRET)

    const second = await h.api('POST', '/api/v2/webhook', a.token, {
      callback: 'http://127.0.0.1:9/two',
      secret: SECRET,
    })
    expect(second.status).toBe(200)
    expect(second.body.id).not.toBe(first.body.id)
    const list = await h.api('GET', '/api/v2/webhook', a.token)
    expect(list.body).toEqual({
      data: [{ id: second.body.id, callback: 'http://127.0.0.1:9/two', createdAt: second.body.createdAt }],
    })
    expect(JSON.stringify(list.body)).not.toContain('secret')

    // The replaced webhook is gone for every purpose.
    expect(
      (
        await h.api('PUT', `/api/v2/webhook/${first.body.id}`, a.token, {
          callback: 'http://127.0.0.1:9/x',
          secret: SECRET,
        })
      ).status,
    ).toBe(404)
    expect((await h.api('DELETE', `/api/v2/webhook/${first.body.id}`, a.token)).status).toBe(404)

    const updated = await h.api('PUT', `/api/v2/webhook/${second.body.id}`, a.token, {
      callback: 'http://127.0.0.1:9/three',
      secret: 'another-secret-of-length',
    })
    expect(updated.status).toBe(200)
    expect(updated.body).toEqual({
      id: second.body.id,
      callback: 'http://127.0.0.1:9/three',
      createdAt: second.body.createdAt,
      updatedAt: expect.any(Number),
    })
    expect(updated.body.updatedAt).toBeGreaterThanOrEqual(updated.body.createdAt)
    const onlyUrl = await h.api('PUT', `/api/v2/webhook/${second.body.id}`, a.token, {
      callback: 'http://127.0.0.1:9/four',
    })
    expect(onlyUrl.body.callback).toBe('http://127.0.0.1:9/four')
    const secretRow = await h.c.db.query('SELECT secret_enc FROM webhooks WHERE id = $1', [second.body.id])
    expect(h.c.box.open(secretRow.rows[0].secret_enc)).toBe('another-secret-of-length')

    // Another account cannot see, change or delete it: 404, as if it did not exist.
    expect((await h.api('GET', '/api/v2/webhook', b.token)).body).toEqual({ data: [] })
    expect(
      (
        await h.api('PUT', `/api/v2/webhook/${second.body.id}`, b.token, {
          callback: 'http://127.0.0.1:9/b',
          secret: SECRET,
        })
      ).body.error,
    ).toBe('not_found')
    expect((await h.api('DELETE', `/api/v2/webhook/${second.body.id}`, b.token)).status).toBe(404)

    const deleted = await h.api('DELETE', `/api/v2/webhook/${second.body.id}`, a.token)
    expect(deleted.status).toBe(204)
    expect(deleted.body).toBeUndefined()
    expect((await h.api('GET', '/api/v2/webhook', a.token)).body).toEqual({ data: [] })
    expect((await h.api('DELETE', `/api/v2/webhook/${second.body.id}`, a.token)).status).toBe(404)
    expect((await h.api('DELETE', '/api/v2/webhook/wh_doesnotexist', a.token)).body.error).toBe('not_found')
  })

  it('validates the body: secret of at least 16 characters, callback required and well-formed', async () => {
    const short = await h.api('POST', '/api/v2/webhook', a.token, {
      callback: 'http://127.0.0.1:9/',
      secret: '123456789012345',
    })
    expect(short.status).toBe(400)
    expect(short.body).toMatchObject({ error: 'invalid_request', details: [{ field: 'secret' }] })
    const missing = await h.api('POST', '/api/v2/webhook', a.token, { secret: SECRET })
    expect(missing.body).toMatchObject({ error: 'invalid_request', details: [{ field: 'callback' }] })
    const notUrl = await h.api('POST', '/api/v2/webhook', a.token, { callback: 'not a url', secret: SECRET })
    expect(notUrl.body).toMatchObject({ error: 'invalid_request', details: [{ field: 'callback' }] })
    const plainHttp = await h.api('POST', '/api/v2/webhook', a.token, {
      callback: 'http://hooks.example.com/',
      secret: SECRET,
    })
    expect(plainHttp.body).toMatchObject({
      error: 'invalid_request',
      details: [{ field: 'callback', issue: expect.stringMatching(/https/) }],
    })
    expect(
      (await h.api('POST', '/api/v2/webhook', undefined, { callback: 'http://127.0.0.1:9/', secret: SECRET }))
        .status,
    ).toBe(401)
    const empty = await h.api('PUT', '/api/v2/webhook/wh_x', a.token, {})
    expect(empty.status).toBe(400)
  })
})

describe('webhook callbacks in production (ALLOW_HTTP_WEBHOOKS=false)', () => {
  let h: Harness
  let a: TestAccount
  let dataDir: string
  beforeAll(async () => {
    h = await createHarness({ ALLOW_HTTP_WEBHOOKS: 'false' })
    a = await h.createAccount()
    dataDir = mkdtempSync(join(tmpdir(), 'svcpay-dns-'))
  })
  afterAll(async () => {
    await h?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it.each([
    ['a private address', 'https://10.0.0.1/hook'],
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data'],
    ['a link-local address', 'https://169.254.1.1/'],
    ['loopback', 'https://127.0.0.1/hook'],
    ['plain http to loopback', 'http://127.0.0.1:8080/hook'],
    ['localhost', 'https://localhost/hook'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.1.1]/'],
    ['a metadata host name', 'https://metadata.google.internal/'],
  ])('refuses %s with 400 invalid_request naming callback', async (_name, callback) => {
    const r = await h.api('POST', '/api/v2/webhook', a.token, { callback, secret: SECRET })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({
      error: 'invalid_request',
      details: [{ field: 'callback', issue: expect.any(String) }],
    })
    expect((await h.api('GET', '/api/v2/webhook', a.token)).body.data).toEqual([])
  })

  it('refuses a host name that resolves to a private address, and accepts one that resolves to a public address', async () => {
    // A service whose resolver answers for two made-up names, as a DNS server would.
    const { db, drop } = await createTestDb()
    const config = loadConfig({
      DATA_DIR: dataDir,
      MASTER_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: 'adm_' + randomBytes(16).toString('hex'),
      LOG_LEVEL: 'silent',
      ALLOW_HTTP_WEBHOOKS: 'false',
      RATE_LIMITS_ENABLED: 'false',
    })
    const zone: Record<string, string[]> = {
      'hooks.inside.example': ['93.184.216.34', '10.1.2.3'],
      'hooks.outside.example': ['93.184.216.34'],
    }
    const c = await createContainer(config, createLogger('silent'), {
      db,
      resolveHost: async (name) => (zone[name] ?? []).map((address) => ({ address, family: 4 as const })),
    })
    const app = await buildApp(c)
    try {
      const created = await app.inject({
        method: 'POST',
        url: '/admin/accounts',
        headers: { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'dns' }),
      })
      const account = JSON.parse(created.body)
      const token = await tokenOf(app, account.apiKey, account.apiSecret)
      const post = (callback: string) =>
        app.inject({
          method: 'POST',
          url: '/api/v2/webhook',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ callback, secret: SECRET }),
        })
      const inside = await post('https://hooks.inside.example/hook')
      expect(inside.statusCode).toBe(400)
      expect(JSON.parse(inside.body)).toMatchObject({
        error: 'invalid_request',
        details: [{ field: 'callback', issue: expect.stringMatching(/resolve/) }],
      })
      const outside = await post('https://hooks.outside.example/hook')
      expect(outside.statusCode).toBe(200)
      expect(JSON.parse(outside.body).callback).toBe('https://hooks.outside.example/hook')
    } finally {
      await app.close()
      await c.close()
      await db.close()
      await drop()
    }
  })
})

async function tokenOf(
  app: Awaited<ReturnType<typeof buildApp>>,
  apiKey: string,
  apiSecret: string,
): Promise<string> {
  const { createHmac } = await import('node:crypto')
  const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
  const signature = createHmac('sha256', apiSecret).update(`${apiKey}&payload=${body}`).digest('hex')
  const res = await app.inject({
    method: 'POST',
    url: '/api/v2/authentication/token-signature',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-api-signature': signature },
    payload: body,
  })
  return JSON.parse(res.body).accessToken
}

describe('the delivery record: owner and operator views, redelivery', () => {
  let h: Harness
  let a: TestAccount
  let b: TestAccount
  let receiver: Receiver
  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60' })
    a = await h.createAccount({ name: 'Record A' })
    b = await h.createAccount({ name: 'Record B' })
    await h.fund(a.accountId, 'BTC', '0.01')
    receiver = await startReceiver(SECRET)
  })
  afterAll(async () => {
    await receiver?.close()
    await h?.close()
  })

  const admin = (method: string, url: string) =>
    h.app
      .inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${h.adminToken}` } })
      .then((r) => ({ status: r.statusCode, body: JSON.parse(r.body) }))

  it('lists deliveries with their attempts, paginated, and sends one again on request', async () => {
    const hook = (await h.api('POST', '/api/v2/webhook', a.token, { callback: receiver.url, secret: SECRET }))
      .body
    receiver.respond = (i) => (i === 0 ? 503 : 200)
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    const deps = deliveryDepsOf(h.c, { retryDelayMs: () => 0 })
    await runDueDeliveries(deps)
    await runDueDeliveries(deps)
    await receiver.waitFor(3)

    const page = await h.api('GET', `/api/v2/webhook/${hook.id}/deliveries`, a.token)
    expect(page.status).toBe(200)
    expect(page.body.pagination).toEqual({ page: 1, limit: 20, total: 2 })
    const [completed, quoted] = page.body.data
    expect(completed).toMatchObject({
      webhookId: hook.id,
      txnId: q.body.txnId,
      txnState: 'completed',
      status: 'succeeded',
      attempts: 1,
      nextAttemptAt: null,
      lastStatus: 200,
      lastError: null,
    })
    expect(quoted).toMatchObject({ txnState: 'quoted', status: 'succeeded', attempts: 2, lastStatus: 200 })
    expect(quoted.history).toEqual([
      {
        attempt: 1,
        at: expect.any(Number),
        httpStatus: 503,
        latencyMs: expect.any(Number),
        error: 'http_503',
      },
      { attempt: 2, at: expect.any(Number), httpStatus: 200, latencyMs: expect.any(Number), error: null },
    ])
    expect(quoted.eventId).toMatch(/^evt_\d+$/)
    const small = await h.api('GET', `/api/v2/webhook/${hook.id}/deliveries?limit=1&page=2`, a.token)
    expect(small.body.data.map((d: any) => d.id)).toEqual([quoted.id])
    expect(
      (await h.api('GET', `/api/v2/webhook/${hook.id}/deliveries?status=failed`, a.token)).body.data,
    ).toEqual([])
    expect((await h.api('GET', `/api/v2/webhook/${hook.id}/deliveries?limit=101`, a.token)).status).toBe(400)
    expect((await h.api('GET', `/api/v2/webhook/${hook.id}/deliveries`, b.token)).status).toBe(404)

    // The owner asks for the quoted event again: a new delivery, same event id, sent once more.
    const again = await h.api('POST', `/api/v2/webhook/${hook.id}/deliveries/${quoted.id}/redeliver`, a.token)
    expect(again.status).toBe(200)
    expect(again.body.data).toMatchObject({
      status: 'pending',
      attempts: 0,
      eventId: quoted.eventId,
      txnState: 'quoted',
    })
    expect(again.body.data.id).not.toBe(quoted.id)
    expect(
      (await h.api('POST', `/api/v2/webhook/${hook.id}/deliveries/${quoted.id}/redeliver`, b.token)).status,
    ).toBe(404)
    expect(
      (await h.api('POST', `/api/v2/webhook/${hook.id}/deliveries/999999999/redeliver`, a.token)).status,
    ).toBe(404)
    await runDueDeliveries(deps)
    const all = await receiver.waitFor(4)
    expect(all[3]!.body.txnState).toBe('quoted')
    expect(all[3]!.headers['x-svcpay-event-id']).toBe(quoted.eventId)
    expect(all[3]!.headers['x-svcpay-delivery-attempt']).toBe('1')

    // The operator's view, with the fields the CLI prints, and the operator's redelivery.
    const ops = await admin('GET', `/admin/webhook/deliveries?accountId=${a.accountId}`)
    expect(ops.status).toBe(200)
    expect(ops.body.data).toHaveLength(3)
    for (const d of ops.body.data) {
      expect(d).toMatchObject({
        id: expect.any(String),
        status: expect.any(String),
        attempts: expect.any(Number),
        txnState: expect.any(String),
        txnId: q.body.txnId,
      })
    }
    const byOperator = await admin('POST', `/admin/webhook/deliveries/${completed.id}/redeliver`)
    expect(byOperator.status).toBe(200)
    expect(byOperator.body.data).toMatchObject({
      id: expect.any(String),
      status: 'pending',
      txnState: 'completed',
    })
    expect((await admin('GET', '/admin/webhook/deliveries?accountId=x')).body.data).toEqual([])
    const noAuth = await h.app.inject({
      method: 'GET',
      url: `/admin/webhook/deliveries?accountId=${a.accountId}`,
    })
    expect(noAuth.statusCode).toBe(401)
  })
})
