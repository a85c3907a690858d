import { afterAll, describe, expect, it } from 'vitest'
import { createPgliteDb, createPostgresDb, type Db } from '../../src/db/db.js'
import { startReceiver, type Receiver } from '../helpers/webhooks.js'
import { ENGINE } from '../helpers/harness.js'
import {
  finishCase,
  historyProblems,
  moneyProblems,
  stuckTransactions,
  undeliveredEvents,
  WORKER_SLACK_MS,
} from '../helpers/invariants.js'
import { opsStarted, startLoad } from '../helpers/load.js'
import { settle } from '../helpers/settle.js'
import {
  createServiceStore,
  freePort,
  serviceClient,
  sleep,
  startServiceProcess,
  type RemoteAccount,
  type ServiceProcess,
  type ServiceStore,
} from '../helpers/service-process.js'

/**
 * Crash recovery: the real server process (`tsx src/server.ts`, API and workers in one) under a load
 * of swaps, sends and receives is killed with SIGKILL at random moments and started again, four
 * times. Afterwards, once the restarted workers have caught up: the books balance, every
 * transaction's history is a path through the state machine, money moved once per executed
 * transaction, nothing is stranded, and every state change that was committed (before a crash or
 * after) reached the webhook receiver at least once.
 */

const SECRET = 'crash-webhook-secret-0123456789'
const KILLS = 4
const SETTLE_TIMEOUT_MS = WORKER_SLACK_MS + 30_000

describe('crash recovery', () => {
  let store: ServiceStore | undefined
  let server: ServiceProcess | undefined
  let receiver: Receiver | undefined
  afterAll(async () => {
    await server?.stop()
    await receiver?.close()
    await store?.cleanup()
  })

  it(
    `keeps the books and delivers every committed event across ${KILLS} SIGKILLs under load`,
    { timeout: 300_000 },
    async () => {
      receiver = await startReceiver(SECRET)
      store = await createServiceStore({
        ALLOW_HTTP_WEBHOOKS: 'true',
        // Short retries and attempt leases, so that deliveries cut off by a kill come back soon.
        WEBHOOK_BACKOFF_BASE_MS: '20',
        WEBHOOK_TIMEOUT_MS: '2000',
        QUOTE_TTL_S: '600',
      })
      const port = await freePort()
      server = await startServiceProcess(store.env, { port })
      const client = serviceClient(`http://127.0.0.1:${port}`, store.adminToken)

      const accounts: RemoteAccount[] = []
      for (let i = 0; i < 4; i++) {
        const a = await client.createAccount(`Crash ${i}`)
        await client.admin('POST', '/admin/sandbox/fund', {
          accountId: a.accountId,
          ccy: 'BTC',
          amount: '0.5',
        })
        await client.admin('POST', '/admin/sandbox/fund', {
          accountId: a.accountId,
          ccy: 'USD',
          amount: '10000',
        })
        const hook = await client.call('POST', '/api/v2/webhook', a.token, {
          callback: receiver.url,
          secret: SECRET,
        })
        expect(hook.status).toBe(200)
        accounts.push(a)
      }

      const load = startLoad({ client: () => client, accounts, concurrency: 6 })
      const kills: number[] = []
      const timings: string[] = []
      for (let k = 0; k < KILLS; k++) {
        // A random moment: 0.5-2.5 s into the load on this process, and after 10-40 answers from it.
        const answeredBefore = load.stats.answered
        const afterMs = 500 + Math.floor(Math.random() * 2_000)
        const afterAnswers = 10 + Math.floor(Math.random() * 30)
        const since = Date.now()
        while (Date.now() - since < afterMs || load.stats.answered - answeredBefore < afterAnswers)
          await sleep(20)
        kills.push(load.stats.answered - answeredBefore)
        await server.stop('SIGKILL')
        const restart = Date.now()
        server = await startServiceProcess(store.env, { port })
        timings.push(`restart ${Date.now() - restart} ms`)
      }
      // A little more load on the last incarnation, and enough in all to mean something.
      await sleep(2_000)
      for (const until = Date.now() + 30_000; load.stats.finished < 30 && Date.now() < until;)
        await sleep(100)
      const stats = await load.stop()
      expect(stats.serverErrors, JSON.stringify(stats.serverErrors.slice(0, 5))).toEqual([])
      expect(stats.finished).toBeGreaterThan(20)

      // Let the restarted worker finish what it can: sends go out and confirm, receives paid get
      // credited, and the deliveries cut short by a kill come back after their lease.
      const api = (method: string, path: string, token: string, body?: unknown) =>
        client.call(method, path, token, body)
      const settleStart = Date.now()
      const open = await settle({
        timeoutMs: SETTLE_TIMEOUT_MS,
        mine: async () => {
          const mined = await api('POST', '/sandbox/onchain/mine', accounts[0]!.token, { blocks: 1 })
          expect(mined.status).toBe(200)
        },
        look: async () => {
          const open: string[] = []
          for (const a of accounts) {
            const sends = await api(
              'GET',
              '/api/v2/transaction?srcMethods=svcpay&txnStatuses=srccreated,destsent&time=1d',
              a.token,
            )
            const hooks = (await api('GET', '/api/v2/webhook', a.token)).body.data
            const pending = await api(
              'GET',
              `/api/v2/webhook/${hooks[0].id}/deliveries?status=pending&limit=5`,
              a.token,
            )
            open.push(
              ...sends.body.data.map(
                (t: any) =>
                  `${t.txnId} ${t.txnState} ${t.destReq.method} updated ${Date.now() - t.sourceReq.updatedAt} ms ago`,
              ),
              ...pending.body.data.map(
                (d: any) =>
                  `delivery ${d.id} ${d.txnState} attempts ${d.attempts} ${d.lastError} next in ${d.nextAttemptAt - Date.now()} ms`,
              ),
            )
          }
          return open
        },
      })
      expect(open, 'sends and webhook deliveries settle after the last restart').toEqual([])
      timings.push(`settled in ${Date.now() - settleStart} ms`)

      // Stop the process and look at what it left behind (PGlite's data directory can only be opened
      // by one process at a time).
      await server.stop('SIGTERM')
      server = undefined
      const db: Db = store.databaseUrl
        ? createPostgresDb(store.databaseUrl)
        : await createPgliteDb(store.dataDir)
      try {
        expect(await historyProblems(db)).toEqual([])
        expect(await moneyProblems(db)).toEqual([])
        expect(await stuckTransactions(db)).toEqual([])
        const seen = receiver.received.map((r) => ({
          eventId: String(r.headers['x-svcpay-event-id']),
          body: r.body,
        }))
        expect(receiver.received.every((r) => r.signatureValid)).toBe(true)
        expect(await undeliveredEvents(db, seen)).toEqual([])
        const { rows } = await db.query<{ state: string; n: bigint }>(
          'SELECT state, count(*)::int8 AS n FROM transactions GROUP BY state ORDER BY state',
        )
        const byState = rows.map((r) => `${r.state} ${r.n}`).join(', ')
        await finishCase('crash recovery', db, {
          ops: stats.finished,
          detail:
            `${opsStarted(stats)} begun, ${stats.answered} requests answered (kills after ${kills.join('/')} answers; ` +
            `${stats.networkErrors} refused while down), ${receiver.received.length} webhook requests received, ` +
            `transactions: ${byState}; ${timings.join(', ')}; ${ENGINE}`,
        })
      } finally {
        await db.close()
      }
    },
  )
})
