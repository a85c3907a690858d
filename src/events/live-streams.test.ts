import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import Fastify, { type FastifyInstance } from 'fastify'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTestDb } from '../../test/helpers/harness.js'
import { openSse } from '../http/sse.js'
import { ApiError } from '../shared/errors.js'
import { TXN_CHANNEL } from './channels.js'
import { liveStreams } from './live-streams.js'
import { createNotifier, type Notifier } from './notifier.js'

// The slot, subscription and shutdown bookkeeping both server-sent event streams share, over a real
// notifier and a real HTTP server: what a holder may open, what is given back when a stream ends,
// and what a full process answers.

describe('live streams', () => {
  let test: Awaited<ReturnType<typeof createTestDb>>
  let notifier: Notifier
  let app: FastifyInstance
  let base: string
  const ended: string[] = []

  beforeAll(async () => {
    test = await createTestDb()
    // Two listeners in all: the third open stream finds the process full.
    notifier = createNotifier({ db: test.db, listenersMax: 2, log: { warn: () => {} } })
    app = Fastify()
    app.setErrorHandler((err, _request, reply) => {
      const code = err instanceof ApiError ? err.code : 'internal'
      void reply.code(code === 'rate_limit_exceeded' ? 429 : 503).send({ error: code, message: String(err) })
    })
    const streams = liveStreams(app, notifier, {
      perHolderMax: 1,
      holderFull: 'one stream per holder',
      processFull: 'the process is full',
    })
    app.get<{ Params: { holder: string; txn: string } }>('/:holder/:txn', async (req, reply) => {
      const { holder, txn } = req.params
      let sent = 0
      await streams.open(holder, txn, (onEnd) => {
        return openSse(reply, {
          headers: {},
          heartbeatMs: 60_000,
          // Each read is one event (the first at once, then one per change); the second ends the
          // stream, as a final state would.
          read: async (stream) => {
            stream.write(`data: ${++sent}\n\n`)
            if (sent === 2) stream.end()
          },
          onEnd: () => {
            ended.push(`${holder}/${txn}`)
            onEnd()
          },
        })
      })
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await app?.close()
    await notifier?.close()
    await test?.db.close()
    await test?.drop()
  })

  /** Open a stream; resolves with its status once the headers arrive, and the body as it ends. */
  const open = (path: string) =>
    new Promise<{ status: number; body: Promise<string> }>((resolve, reject) => {
      request(`${base}${path}`, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        resolve({ status: res.statusCode!, body: new Promise((done) => res.on('end', () => done(body))) })
      })
        .on('error', reject)
        .end()
    })

  it('gives a holder its slots, refuses one more, and frees the slot when a stream ends', async () => {
    const first = await open('/alice/txn_1')
    expect(first.status).toBe(200)
    const refused = await open('/alice/txn_2')
    expect(refused.status).toBe(429)
    expect(await refused.body).toContain('one stream per holder')

    // A committed change wakes the stream; its second event ends it and gives the slot back.
    await test.db.tx((q) => q.notify(TXN_CHANNEL, 'txn_1'))
    expect(await first.body).toContain('data: 2')
    expect(ended).toContain('alice/txn_1')
    await expect.poll(() => notifier.listenerCount).toBe(0)
    const again = await open('/alice/txn_3')
    expect(again.status).toBe(200)
    await test.db.tx((q) => q.notify(TXN_CHANNEL, 'txn_3'))
    await again.body
  })

  it('answers 503 and keeps no slot when the process serves all the listeners it can', async () => {
    const a = await open('/bob/txn_a')
    const c = await open('/carol/txn_c')
    expect([a.status, c.status]).toEqual([200, 200])
    const full = await open('/dave/txn_d')
    expect(full.status).toBe(503)
    expect(await full.body).toContain('the process is full')
    // Dave's refused attempt held no slot: once a listener is free, his stream opens.
    await test.db.tx((q) => q.notify(TXN_CHANNEL, 'txn_a'))
    await a.body
    await expect.poll(() => notifier.listenerCount).toBe(1)
    const dave = await open('/dave/txn_d')
    expect(dave.status).toBe(200)
    for (const txn of ['txn_c', 'txn_d']) await test.db.tx((q) => q.notify(TXN_CHANNEL, txn))
    await Promise.all([c.body, dave.body])
  })

  it('ends every open stream when the server closes', async () => {
    const other = Fastify()
    const streams = liveStreams(other, notifier, { perHolderMax: 5, holderFull: '', processFull: '' })
    let closed = 0
    other.get('/', async (_req, reply) => {
      await streams.open('erin', 'txn_e', (onEnd) =>
        openSse(reply, {
          headers: {},
          heartbeatMs: 60_000,
          read: async () => {},
          onEnd: () => {
            closed++
            onEnd()
          },
        }),
      )
    })
    await other.listen({ port: 0, host: '127.0.0.1' })
    const port = (other.server.address() as AddressInfo).port
    const stream = await new Promise<{ body: Promise<string> }>((resolve) =>
      request(`http://127.0.0.1:${port}/`, (res) => {
        res.resume()
        resolve({ body: new Promise((done) => res.on('end', () => done(''))) })
      }).end(),
    )
    await other.close()
    await stream.body
    expect(closed).toBe(1)
    expect(notifier.listenerCount).toBe(0)
  })
})
