import { afterAll, describe, expect, it } from 'vitest'
import { createPostgresDb, type Db } from '../../src/db/db.js'
import { startReceiver, type Receiver } from '../helpers/webhooks.js'
import { ENGINE } from '../helpers/harness.js'
import {
  finishCase,
  historyProblems,
  moneyProblems,
  stuckTransactions,
  undeliveredEvents,
} from '../helpers/invariants.js'
import { opsStarted, startLoad } from '../helpers/load.js'
import { settle } from '../helpers/settle.js'
import { startRedisProcess, type RedisProcess } from '../helpers/redis-process.js'
import {
  createServiceStore,
  serviceClient,
  sleep,
  startServiceProcess,
  type RemoteAccount,
  type ServiceClient,
  type ServiceProcess,
  type ServiceStore,
} from '../helpers/service-process.js'

/**
 * Several instances on one PostgreSQL and one Redis: two API processes (ROLE=api) and two worker
 * processes (ROLE=worker) under a load spread over both APIs. Rate limits are shared, no transaction
 * executes twice, every event is delivered (once: nothing crashed), and the status stream served by
 * one API follows changes made by the other API and by the workers. PostgreSQL only: the embedded
 * engine is one process's by design.
 */

const SECRET = 'instances-webhook-secret-0123'

/** Reads a status stream until it ends (after a final state) or `timeoutMs` passes. */
async function readStatusStream(
  base: string,
  txnId: string,
  token: string,
  opened: () => Promise<void>,
  timeoutMs = 20_000,
): Promise<{ states: string[]; ended: boolean }> {
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(), timeoutMs)
  const states: string[] = []
  let ended = false
  try {
    const r = await fetch(`${base}/api/v2/transaction/${txnId}/events`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const reader = r.body!.getReader()
    const decoder = new TextDecoder()
    let buffer = ''
    let first = true
    for (;;) {
      const { value, done } = await reader.read()
      if (done) {
        ended = true
        break
      }
      buffer += decoder.decode(value, { stream: true })
      let cut: number
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut)
        buffer = buffer.slice(cut + 2)
        const data = block.split('\n').find((l) => l.startsWith('data: '))
        if (data) {
          states.push(JSON.parse(data.slice(6)).txnState)
          if (first) {
            first = false
            await opened()
          }
        }
      }
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err
  } finally {
    clearTimeout(timer)
  }
  return { states, ended }
}

describe.skipIf(ENGINE !== 'postgres')('several instances on one PostgreSQL and one Redis', () => {
  let store: ServiceStore | undefined
  let redis: RedisProcess | undefined
  let receiver: Receiver | undefined
  const procs: ServiceProcess[] = []
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()))
    await redis?.stop()
    await receiver?.close()
    await store?.cleanup()
  })

  it(
    'shares limits, executes each transaction once, delivers each event and streams across instances',
    { timeout: 300_000 },
    async () => {
      receiver = await startReceiver(SECRET)
      redis = await startRedisProcess()
      store = await createServiceStore({
        REDIS_URL: redis.url,
        RATE_LIMITS_ENABLED: 'true',
        ALLOW_HTTP_WEBHOOKS: 'true',
        WEBHOOK_BACKOFF_BASE_MS: '20',
        QUOTE_TTL_S: '600',
      })
      // The first process migrates the database; the others start on it together.
      procs.push(await startServiceProcess(store.env, { role: 'api' }))
      procs.push(
        ...(await Promise.all([
          startServiceProcess(store.env, { role: 'api' }),
          startServiceProcess(store.env, { role: 'worker' }),
          startServiceProcess(store.env, { role: 'worker' }),
        ])),
      )
      const apis: ServiceClient[] = procs
        .filter((p) => p.port !== undefined)
        .map((p) => serviceClient(p.base, store!.adminToken))
      expect(apis).toHaveLength(2)
      const [one, two] = apis as [ServiceClient, ServiceClient]

      // Limits are counted in Redis: six requests in one second, alternating instances, and the sixth
      // is refused by whichever instance gets it.
      const limited = await one.createAccount('Standard tier')
      await sleep(1_100)
      const burst = []
      for (let i = 0; i < 6; i++)
        burst.push(await (i % 2 ? two : one).call('GET', '/api/v2/rate', limited.token))
      expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429])
      expect(burst.slice(0, 5).map((r) => Number(r.headers.get('x-ratelimit-remaining')))).toEqual([
        4, 3, 2, 1, 0,
      ])
      expect(burst[5]!.body).toEqual({ error: 'rate_limit_exceeded', message: expect.any(String) })

      const accounts: RemoteAccount[] = []
      for (let i = 0; i < 4; i++) {
        const a = await one.createAccount(`Instances ${i}`, 'premium')
        await one.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy: 'BTC', amount: '0.5' })
        await one.admin('POST', '/admin/sandbox/fund', {
          accountId: a.accountId,
          ccy: 'USD',
          amount: '10000',
        })
        expect(
          (await two.call('POST', '/api/v2/webhook', a.token, { callback: receiver.url, secret: SECRET }))
            .status,
        ).toBe(200)
        accounts.push(a)
      }
      const pick = () => apis[Math.floor(Math.random() * apis.length)]!
      // The stream checks below use two accounts of their own, so the load cannot spend their
      // rate-limit windows and turn a check of the streams into a check of the limits.
      const quiet = accounts.splice(2, 2)
      const load = startLoad({ client: pick, accounts, concurrency: 6, pauseMs: 20 })

      // Meanwhile, status streams on one API follow Lightning sends confirmed on the other and paid by
      // a worker process.
      const streams: string[][] = []
      for (const [watch, act] of [
        [two, one],
        [one, two],
      ] as const) {
        const [payer, payee] = [quiet[0]!, quiet[1]!]
        const inv = await act.call('POST', '/sandbox/lightning/invoice', payee.token, { amount: '0.0002' })
        const q = await act.call('POST', '/api/v2/transaction', payer.token, {
          sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
          destReq: {
            ccy: 'BTC',
            method: 'lightning',
            reqDetails: { paymentRequest: inv.body.paymentRequest },
          },
        })
        expect(q.status).toBe(200)
        const seen = await readStatusStream(watch.base, q.body.txnId, payer.token, async () => {
          expect(
            (await act.call('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, payer.token)).status,
          ).toBe(200)
        })
        expect(seen).toEqual({ states: ['quoted', 'srccreated', 'completed'], ended: true })
        streams.push(seen.states)
      }
      await sleep(8_000)
      const stats = await load.stop()
      expect(stats.serverErrors, JSON.stringify(stats.serverErrors.slice(0, 3))).toEqual([])
      expect(stats.networkErrors).toBe(0)
      expect(stats.finished).toBeGreaterThan(20)

      // Let the workers finish: sends confirmed, deliveries out.
      const db: Db = createPostgresDb(store.databaseUrl!)
      try {
        const open = await settle({
          timeoutMs: 60_000,
          pollMs: 500,
          mine: async () => {
            await one.call('POST', '/sandbox/onchain/mine', accounts[0]!.token, { blocks: 1 })
          },
          look: async () => {
            const { rows } = await db.query<{ what: string }>(
              `SELECT id || ' ' || state AS what FROM transactions WHERE kind IN ('ln_send', 'onchain_send') AND state IN ('srccreated', 'destsent')
             UNION ALL SELECT 'delivery ' || id FROM webhook_deliveries WHERE status = 'pending'`,
            )
            return rows.map((r) => r.what)
          },
        })
        expect(open).toEqual([])
        expect(await historyProblems(db)).toEqual([])
        expect(await moneyProblems(db)).toEqual([])
        expect(await stuckTransactions(db)).toEqual([])
        // The sandbox networks saw each payment once: one Lightning payment per hash, one chain
        // transaction per send.
        const doubled = await db.query(
          `SELECT request_id FROM sandbox_chain_txs WHERE request_id IS NOT NULL GROUP BY request_id HAVING count(*) > 1`,
        )
        expect(doubled.rows).toEqual([])
        const seen = receiver.received.map((r) => ({
          eventId: String(r.headers['x-svcpay-event-id']),
          body: r.body,
        }))
        expect(receiver.received.every((r) => r.signatureValid)).toBe(true)
        expect(await undeliveredEvents(db, seen)).toEqual([])
        const ids = seen.map((x) => x.eventId)
        expect(ids.length - new Set(ids).size, 'events delivered more than once with nothing crashed').toBe(0)
        const statuses = Object.entries(stats.statuses)
          .map(([s, n]) => `${s}: ${n}`)
          .join(', ')
        await finishCase('several instances', db, {
          ops: opsStarted(stats) + burst.length,
          detail: `${stats.finished} ran to the end over 2 API and 2 worker processes (answers ${statuses}), ${receiver.received.length} webhook requests, ${streams.length} streams across instances`,
        })
      } finally {
        await db.close()
      }
    },
  )
})
