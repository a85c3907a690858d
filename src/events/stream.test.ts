import { randomBytes } from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import {
  createHarness,
  createTestDb,
  ENGINE,
  type Harness,
  type TestAccount,
} from '../../test/helpers/harness.js'
import { buildApp } from '../app.js'
import { loadConfig } from '../config/config.js'
import { createContainer, type Container } from '../container.js'
import { createPostgresDb, type Db } from '../db/db.js'
import { createLogger } from '../logger.js'
import { runDueTransactions } from '../transactions/worker.js'

/** One message of an event stream, as an EventSource would see it. */
interface SseMessage {
  event: string
  id: string | undefined
  data: string
}

/** A minimal EventSource over node:http that also keeps comment lines, for the keep-alive check. */
interface SseClient {
  status: number
  headers: http.IncomingHttpHeaders
  messages: SseMessage[]
  comments: string[]
  /** The body of a non-200 answer. */
  body: string
  ended: Promise<void>
  waitFor(count: number, timeoutMs?: number): Promise<SseMessage[]>
  close(): void
}

function openSse(
  baseUrl: string,
  path: string,
  token: string | undefined,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${baseUrl}${path}`,
      {
        headers: {
          accept: 'text/event-stream',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
      },
      (res) => {
        let buffer = ''
        let endedResolve: () => void
        const listeners: Array<() => void> = []
        const client: SseClient = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          messages: [],
          comments: [],
          body: '',
          ended: new Promise<void>((r) => (endedResolve = r)),
          async waitFor(count, timeoutMs = 5_000) {
            const deadline = Date.now() + timeoutMs
            while (client.messages.length < count) {
              if (Date.now() > deadline)
                throw new Error(`expected ${count} messages, got ${JSON.stringify(client.messages)}`)
              await new Promise<void>((r) => {
                const t = setTimeout(r, 100)
                listeners.push(() => {
                  clearTimeout(t)
                  r()
                })
              })
            }
            return client.messages.slice()
          },
          close: () => req.destroy(),
        }
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          if (client.status !== 200) {
            client.body += chunk
            return
          }
          buffer += chunk
          let at: number
          while ((at = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, at)
            buffer = buffer.slice(at + 2)
            const message: SseMessage = { event: 'message', id: undefined, data: '' }
            let hasData = false
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) client.comments.push(line)
              else if (line.startsWith('event: ')) message.event = line.slice(7)
              else if (line.startsWith('id: ')) message.id = line.slice(4)
              else if (line.startsWith('data: ')) {
                message.data += line.slice(6)
                hasData = true
              }
            }
            if (hasData) client.messages.push(message)
          }
          for (const l of listeners.splice(0)) l()
        })
        res.on('end', () => endedResolve())
        res.on('close', () => endedResolve())
        resolve(client)
      },
    )
    req.on('error', reject)
  })
}

const swap = () => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
})

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

const statesOf = (messages: SseMessage[]) => messages.map((m) => JSON.parse(m.data).txnState)

describe('GET /api/v2/transaction/{txnId}/events over real HTTP', () => {
  let h: Harness
  let a: TestAccount
  let other: TestAccount
  let base: string
  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60', STREAM_HEARTBEAT_MS: '200' })
    a = await h.createAccount({ name: 'Streamer' })
    other = await h.createAccount({ name: 'Other' })
    await h.fund(a.accountId, 'BTC', '0.01')
    base = await listen(h.app)
  })
  afterAll(async () => h?.close())

  it('sends the current state at once, then each change in order, then ends after the final state', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, { ...swap(), extRefId: 'sse-1' })
    const stream = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, a.token)
    expect(stream.status).toBe(200)
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(stream.headers['cache-control']).toContain('no-cache')
    const [first] = await stream.waitFor(1)
    expect(first!.event).toBe('status')
    expect(first!.id).toMatch(/^\d+$/)
    expect(JSON.parse(first!.data)).toEqual({
      txnId: q.body.txnId,
      extRefId: 'sse-1',
      txnState: 'quoted',
      msg: '',
      updatedAt: expect.any(Number),
    })

    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    await stream.ended
    expect(statesOf(stream.messages)).toEqual(['quoted', 'completed'])
    expect(stream.messages.every((m) => m.event === 'status')).toBe(true)
    expect(Number(stream.messages[1]!.id)).toBeGreaterThan(Number(stream.messages[0]!.id))
    // The data is the webhook body, byte for byte the same text.
    expect(Object.keys(JSON.parse(stream.messages[1]!.data))).toEqual([
      'txnId',
      'extRefId',
      'txnState',
      'msg',
      'updatedAt',
    ])
    await expect.poll(() => h.c.notifier.listenerCount).toBe(0)
    await h.expectBooksBalanced()
  })

  it('follows a Lightning receive through srccreated to completed', async () => {
    const payer = await h.createAccount({ name: 'Payer' })
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0003', reqDetails: {} },
    })
    const stream = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, a.token)
    await stream.waitFor(1)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    await stream.waitFor(2)
    await h.api('POST', '/sandbox/lightning/pay', payer.token, {
      paymentRequest: c.body.sourceReq.reqDetails.paymentRequest,
    })
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    await stream.ended
    expect(statesOf(stream.messages)).toEqual(['quoted', 'srccreated', 'completed'])
    await h.expectBooksBalanced()
  })

  it('ends at once for a transaction already final; resumes after Last-Event-ID', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    const done = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, a.token)
    await done.ended
    expect(statesOf(done.messages)).toEqual(['usercanceled'])
    expect(JSON.parse(done.messages[0]!.data).msg).toBe('user_canceled')

    const { rows } = await h.c.db.query('SELECT id FROM events WHERE txn_id = $1 ORDER BY id', [q.body.txnId])
    const resumed = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, a.token, {
      'last-event-id': String(rows[0].id),
    })
    await resumed.ended
    expect(resumed.messages.map((m) => m.id)).toEqual([String(rows[1].id)])
    const replay = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, a.token, {
      'last-event-id': '0',
    })
    await replay.ended
    expect(statesOf(replay.messages)).toEqual(['quoted', 'usercanceled'])
  })

  it(
    'a reconnect loop after the final state gets 204 each time, holds no stream and never reaches the cap',
    { timeout: 90_000 },
    async () => {
      const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
      await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      const path = `/api/v2/transaction/${q.body.txnId}/events`
      // What an EventSource does: open, read until the server closes, reconnect with the last id.
      // A connection the server does not close within the wait is left open, as an EventSource
      // would keep it, so a stream that never ends piles up against the per-account cap.
      let lastEventId: string | undefined
      const statuses: number[] = []
      const held: SseClient[] = []
      for (let i = 0; i < 25; i++) {
        const s = await openSse(
          base,
          path,
          a.token,
          lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
        )
        statuses.push(s.status)
        const ended = await Promise.race([
          s.ended.then(() => true),
          new Promise((r) => setTimeout(() => r(false), 1_500)),
        ])
        if (!ended) held.push(s)
        lastEventId = s.messages.at(-1)?.id ?? lastEventId
      }
      for (const s of held) s.close()
      expect(held).toHaveLength(0)
      expect(statuses[0]).toBe(200)
      expect(statuses.slice(1)).toEqual(Array(24).fill(204))
      await expect.poll(() => h.c.notifier.listenerCount).toBe(0)
      // An id beyond the transaction's events (another transaction's, or made up) ends it too.
      const beyond = await openSse(base, path, a.token, { 'last-event-id': '999999999999' })
      await beyond.ended
      expect(beyond.status).toBe(204)
      // The account may still open its streams.
      const open = await h.api('POST', '/api/v2/transaction', a.token, swap())
      const live = await openSse(base, `/api/v2/transaction/${open.body.txnId}/events`, a.token)
      expect(live.status).toBe(200)
      await live.waitFor(1)
      await h.api('PUT', `/api/v2/transaction/${open.body.txnId}/cancel`, a.token)
      await live.ended
    },
  )

  it('a stream resumed with an id beyond its events still closes when the transaction ends', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    const s = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, a.token, {
      'last-event-id': '999999999999',
    })
    expect(s.status).toBe(200)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    const ended = await Promise.race([
      s.ended.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 3_000)),
    ])
    s.close()
    expect(ended).toBe(true)
    await expect.poll(() => h.c.notifier.listenerCount).toBe(0)
  })

  it(
    'holds no stream for a client that went away before its stream started',
    { timeout: 60_000 },
    async () => {
      const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
      const { port } = new URL(base)
      // Each client sends its request and hangs up at once, while the service is still checking it.
      for (let i = 0; i < 30; i++) {
        await new Promise<void>((resolve) => {
          const socket = net.connect(Number(port), '127.0.0.1', () => {
            socket.write(
              `GET /api/v2/transaction/${q.body.txnId}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.token}\r\nAccept: text/event-stream\r\n\r\n`,
            )
            setTimeout(() => socket.destroy(), i % 3)
          })
          socket.on('close', () => resolve())
          socket.on('error', () => resolve())
        })
      }
      await expect.poll(() => h.c.notifier.listenerCount, { timeout: 5_000 }).toBe(0)
      // The account still has all of its streams.
      const streams: SseClient[] = []
      for (let i = 0; i < 20; i++) {
        const s = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, a.token)
        expect(s.status, `stream ${i + 1}`).toBe(200)
        streams.push(s)
      }
      for (const s of streams) s.close()
      await expect.poll(() => h.c.notifier.listenerCount).toBe(0)
      await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    },
  )

  it('answers HEAD with the headers and no stream', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    const head = (txnId: string) =>
      new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = http.request(`${base}/api/v2/transaction/${txnId}/events`, {
          method: 'HEAD',
          headers: { authorization: `Bearer ${a.token}` },
          timeout: 3_000,
        })
        req.on('response', (res) => {
          res.resume()
          res.on('end', () => resolve(res))
        })
        req.on('timeout', () => req.destroy(new Error('HEAD did not finish')))
        req.on('error', reject)
        req.end()
      })
    const res = await head(q.body.txnId)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(res.headers['x-ratelimit-limit']).toBeDefined()
    expect((await head('txn_0000000000000000000000000')).statusCode).toBe(404)
    expect(h.c.notifier.listenerCount).toBe(0)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
  })

  it('keeps the connection open with comment lines and cleans up when the client goes away', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    const stream = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, a.token)
    await stream.waitFor(1)
    expect(h.c.notifier.listenerCount).toBe(1)
    await expect.poll(() => stream.comments.length, { timeout: 3_000 }).toBeGreaterThanOrEqual(2)
    expect(stream.comments[0]).toBe(': keep-alive')
    stream.close()
    await expect.poll(() => h.c.notifier.listenerCount).toBe(0)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
  })

  it('answers 404 for another account’s or an unknown transaction, and 401 without a token', async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
    const foreign = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, other.token)
    await foreign.ended
    expect(foreign.status).toBe(404)
    expect(JSON.parse(foreign.body)).toMatchObject({ error: 'not_found' })
    const unknown = await openSse(base, '/api/v2/transaction/txn_0000000000000000000000000/events', a.token)
    await unknown.ended
    expect(unknown.status).toBe(404)
    const anonymous = await openSse(base, `/api/v2/transaction/${q.body.txnId}/events`, undefined)
    await anonymous.ended
    expect(anonymous.status).toBe(401)
    expect(h.c.notifier.listenerCount).toBe(0)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
  })
})

/** A second instance of the service on the same PostgreSQL database, with its own connections. */
async function secondInstance(url: string, first: Container, env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-second-'))
  const db: Db = createPostgresDb(url, { poolMax: 5 })
  const config = loadConfig({
    DATA_DIR: dataDir,
    MASTER_KEY: first.config.masterKey!,
    ADMIN_TOKEN: first.adminToken,
    LOG_LEVEL: 'silent',
    RATE_LIMITS_ENABLED: 'false',
    QUOTE_TTL_S: '60',
    JWT_SECRET: first.config.jwtSecret!,
    ...env,
  })
  const c = await createContainer(config, createLogger('silent'), { db })
  const app = await buildApp(c)
  return {
    c,
    app,
    async close() {
      await app.close()
      await c.close()
      await db.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

describe.skipIf(ENGINE !== 'postgres')('status stream across instances (PostgreSQL)', () => {
  it.each([
    ['LISTEN/NOTIFY', {}],
    ['Redis pub/sub as well', { REDIS_URL: 'redis://127.0.0.1:6379' }],
  ])(
    'a stream on one instance sees a confirm made on another (%s)',
    async (_name, env: Record<string, string>) => {
      const { db, url, drop } = await createTestDb()
      const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-first-'))
      const config = loadConfig({
        DATA_DIR: dataDir,
        MASTER_KEY: randomBytes(32).toString('hex'),
        ADMIN_TOKEN: 'adm_' + randomBytes(16).toString('hex'),
        JWT_SECRET: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'silent',
        RATE_LIMITS_ENABLED: 'false',
        QUOTE_TTL_S: '60',
        ...env,
      })
      const one = await createContainer(config, createLogger('silent'), { db })
      const oneApp = await buildApp(one)
      const two = await secondInstance(url!, one, env)
      try {
        const account = JSON.parse(
          (
            await oneApp.inject({
              method: 'POST',
              url: '/admin/accounts',
              headers: { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' },
              payload: JSON.stringify({ name: 'Across' }),
            })
          ).body,
        )
        await oneApp.inject({
          method: 'POST',
          url: '/admin/sandbox/fund',
          headers: { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ accountId: account.accountId, ccy: 'BTC', amount: '0.01' }),
        })
        const token = await tokenOf(oneApp, account.apiKey, account.apiSecret)
        const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
        const created = JSON.parse(
          (
            await two.app.inject({
              method: 'POST',
              url: '/api/v2/transaction',
              headers: bearer,
              payload: JSON.stringify(swap()),
            })
          ).body,
        )

        const base = await listen(oneApp)
        const stream = await openSse(base, `/api/v2/transaction/${created.txnId}/events`, token)
        await stream.waitFor(1)
        const confirmed = await two.app.inject({
          method: 'PUT',
          url: `/api/v2/transaction/${created.txnId}/confirm`,
          headers: bearer,
        })
        expect(JSON.parse(confirmed.body).txnState).toBe('completed')
        await stream.ended
        expect(statesOf(stream.messages)).toEqual(['quoted', 'completed'])
      } finally {
        await two.close()
        await oneApp.close()
        await one.close()
        await db.close()
        await drop()
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
  )
})

async function tokenOf(app: FastifyInstance, apiKey: string, apiSecret: string): Promise<string> {
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
