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
} from '../helpers/invariants.js'
import { opsStarted, startLoad, type Load } from '../helpers/load.js'
import { settle } from '../helpers/settle.js'
import { canRunPostgresCluster, startPostgresCluster } from '../helpers/postgres-process.js'
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
 * Dependencies failing under load, against the real server process: PostgreSQL restarted (and
 * stopped for a moment), during which the service answers 503 service_unavailable and afterwards
 * recovers by itself; and Redis killed and started again, during which the API keeps answering on
 * per-instance limits. Afterwards the usual invariants hold.
 *
 * Both servers that are stopped are the suite's own: a PostgreSQL cluster made for it (restarting
 * the shared one on 5432 would break every other test file running at the same moment, CI's
 * included) and a Redis on its own port. The shared servers are never touched.
 */

const SECRET = 'dependencies-webhook-secret-01'

interface Probe {
  answers: Array<{ at: number; path: string; status: number; body: any }>
  stop(): Promise<void>
}

/** Reads a few routes every 25 ms, recording every answer; no answer at all is recorded as status 0. */
function probe(client: ServiceClient, token: string): Probe {
  const answers: Probe['answers'] = []
  let stopped = false
  const paths = ['/api/v2/transaction?limit=1', '/api/v2/rate', '/readyz', '/healthz']
  const running = (async () => {
    for (let i = 0; !stopped; i++) {
      const path = paths[i % paths.length]!
      const r = await client
        .call('GET', path, path.startsWith('/api') ? token : undefined)
        .catch((err: Error) => ({
          status: 0,
          body: String(err.cause ?? err.message),
        }))
      answers.push({ at: Date.now(), path, status: r.status, body: r.body })
      await sleep(25)
    }
  })()
  return {
    answers,
    async stop() {
      stopped = true
      await running
    },
  }
}

/** The common start: a receiver, a store, one server process, funded accounts with webhooks. */
async function setUp(env: Record<string, string>, databaseUrl?: string) {
  const receiver = await startReceiver(SECRET)
  const store = await createServiceStore(
    { ALLOW_HTTP_WEBHOOKS: 'true', WEBHOOK_BACKOFF_BASE_MS: '20', QUOTE_TTL_S: '600', ...env },
    databaseUrl ? { databaseUrl } : {},
  )
  const server = await startServiceProcess(store.env)
  const client = serviceClient(server.base, store.adminToken)
  const accounts: RemoteAccount[] = []
  for (let i = 0; i < 3; i++) {
    const a = await client.createAccount(`Dependencies ${i}`, 'premium')
    await client.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy: 'BTC', amount: '0.5' })
    await client.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy: 'USD', amount: '10000' })
    expect(
      (await client.call('POST', '/api/v2/webhook', a.token, { callback: receiver.url, secret: SECRET }))
        .status,
    ).toBe(200)
    accounts.push(a)
  }
  return { receiver, store, server, client, accounts }
}

/** After the load: let the worker finish, then check everything the service left behind. */
async function settleAndCheck(opts: {
  name: string
  client: ServiceClient
  accounts: RemoteAccount[]
  server: ServiceProcess
  store: ServiceStore
  receiver: Receiver
  load: Load
  detail: string
}) {
  const { client, accounts } = opts
  const open = await settle({
    timeoutMs: 75_000,
    mine: async () => {
      await client.call('POST', '/sandbox/onchain/mine', accounts[0]!.token, { blocks: 1 })
    },
    look: async () => {
      const open: string[] = []
      for (const a of accounts) {
        const sends = await client.call(
          'GET',
          '/api/v2/transaction?srcMethods=svcpay&txnStatuses=srccreated,destsent&time=1d',
          a.token,
        )
        const hooks = (await client.call('GET', '/api/v2/webhook', a.token)).body.data
        const pending = await client.call(
          'GET',
          `/api/v2/webhook/${hooks[0].id}/deliveries?status=pending&limit=5`,
          a.token,
        )
        open.push(...(sends.body.data ?? []).map((t: any) => `${t.txnId} ${t.txnState}`))
        open.push(...(pending.body.data ?? []).map((d: any) => `delivery ${d.id} ${d.lastError}`))
      }
      return open
    },
  })
  expect(open, 'sends and deliveries settle without a restart of the service').toEqual([])
  await opts.server.stop('SIGTERM')
  const db: Db = opts.store.databaseUrl
    ? createPostgresDb(opts.store.databaseUrl)
    : await createPgliteDb(opts.store.dataDir)
  try {
    expect(await historyProblems(db)).toEqual([])
    expect(await moneyProblems(db)).toEqual([])
    expect(await stuckTransactions(db)).toEqual([])
    const seen = opts.receiver.received.map((r) => ({
      eventId: String(r.headers['x-svcpay-event-id']),
      body: r.body,
    }))
    expect(await undeliveredEvents(db, seen)).toEqual([])
    await finishCase(opts.name, db, { ops: opsStarted(opts.load.stats), detail: opts.detail })
  } finally {
    await db.close()
  }
}

describe('dependencies failing under load', () => {
  const cleanups: Array<() => Promise<unknown>> = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  })

  it.skipIf(ENGINE !== 'postgres' || !canRunPostgresCluster())(
    'PostgreSQL restarted and briefly stopped: 503 service_unavailable while it is away, then recovery by itself',
    { timeout: 300_000 },
    async () => {
      const cluster = await startPostgresCluster()
      cleanups.push(() => cluster.destroy())
      const { receiver, store, server, client, accounts } = await setUp(
        {},
        await cluster.createDatabase('svcpay'),
      )
      cleanups.push(
        () => receiver.close(),
        () => server.stop(),
        () => store.cleanup(),
      )
      const alive = (when: string) =>
        expect(
          server.proc.exitCode,
          `the service exited ${when}:\n${server.output().slice(-4000)}`,
        ).toBeNull()
      const load = startLoad({ client: () => client, accounts, concurrency: 4, pauseMs: 20 })
      const watch = probe(client, accounts[0]!.token)
      await sleep(2_000)
      let started = Date.now()
      await cluster.restart()
      const restartMs = Date.now() - started
      await sleep(3_000)
      alive('after the restart')
      // A stop long enough to be seen by every probe, then a start.
      started = Date.now()
      await cluster.stop()
      const stoppedAt = Date.now()
      await sleep(2_000)
      const startedAt = Date.now()
      await cluster.start()
      const awayMs = Date.now() - started
      alive('while PostgreSQL was stopped')
      // Recovery without any help: the same process answers again within a few seconds.
      let recoveredMs = -1
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
        const r = await client.call('GET', '/api/v2/transaction?limit=1', accounts[1]!.token)
        if (r.status === 200) {
          recoveredMs = Date.now() - startedAt
          break
        }
      }
      expect(recoveredMs).toBeGreaterThanOrEqual(0)
      await sleep(2_000)
      await watch.stop()
      await load.stop()

      // While it was away, what needs the database answered 503 with the contract's body; liveness
      // stayed up, readiness said not ready, and the rates (static, behind a cached token check)
      // may well have kept answering.
      const away = watch.answers.filter((a) => a.at > stoppedAt + 200 && a.at < startedAt)
      expect(away.length).toBeGreaterThan(10)
      for (const a of away) {
        if (a.path === '/healthz') expect(a.status, a.path).toBe(200)
        else if (a.path === '/api/v2/rate') expect([200, 503], a.path).toContain(a.status)
        else expect([a.path, a.status]).toEqual([a.path, 503])
      }
      for (const a of [
        ...watch.answers,
        ...load.stats.serverErrors.map((e) => ({ path: e.what, status: e.status, body: e.body })),
      ]) {
        if (a.status >= 500) {
          expect([a.path, a.status]).toEqual([a.path, 503])
          expect(a.body).toEqual({ error: 'service_unavailable', message: expect.any(String) })
        }
      }
      const unavailable =
        watch.answers.filter((a) => a.status === 503).length + load.stats.serverErrors.length
      await settleAndCheck({
        name: 'PostgreSQL restarted under load',
        client,
        accounts,
        server,
        store,
        receiver,
        load,
        detail: `restart took ${restartMs} ms, stopped for ${awayMs} ms, answering again ${recoveredMs} ms after the start; ${unavailable} answers were 503 service_unavailable, ${watch.answers.length} probes`,
      })
    },
  )

  it(
    'Redis killed and started again: the API keeps answering, then limits are shared again',
    { timeout: 300_000 },
    async () => {
      const redis: RedisProcess = await startRedisProcess()
      cleanups.push(() => redis.stop())
      const { receiver, store, server, client, accounts } = await setUp({
        REDIS_URL: redis.url,
        RATE_LIMITS_ENABLED: 'true',
      })
      cleanups.push(
        () => receiver.close(),
        () => server.stop(),
        () => store.cleanup(),
      )
      const backend = async () =>
        /^svcpay_rate_limit_backend_redis (\d)$/m.exec((await client.call('GET', '/metrics')).body)?.[1]
      expect(await backend()).toBe('1')
      // The checks below use an account the load and the probe never touch: with limits on, the
      // load spends its own accounts' windows, and a 429 there would say nothing about Redis.
      const quiet = await client.createAccount('Dependencies quiet', 'premium')
      const load = startLoad({ client: () => client, accounts, concurrency: 3, pauseMs: 50 })
      const watch = probe(client, accounts[0]!.token)
      await sleep(2_000)
      await redis.stop()
      const killedAt = Date.now()
      await sleep(4_000)
      const memoryMetric = await backend()
      // A request while Redis is down is answered promptly, on per-instance limits.
      const t = Date.now()
      const during = await client.call('GET', '/api/v2/rate', quiet.token)
      const duringMs = Date.now() - t
      expect(during.status).toBe(200)
      expect(Number(during.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0)
      const restartedAt = Date.now()
      await redis.start()
      let sharedAgainMs = -1
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(200)) {
        // Limits are consulted per request; a request lets the limiter see Redis answer again.
        await client.call('GET', '/api/v2/rate', quiet.token)
        if ((await backend()) === '1') {
          sharedAgainMs = Date.now() - restartedAt
          break
        }
      }
      await sleep(1_000)
      await watch.stop()
      await load.stop()
      expect(memoryMetric).toBe('0')
      expect(sharedAgainMs).toBeGreaterThanOrEqual(0)
      expect(duringMs).toBeLessThan(2_000)
      // Every answer, during the outage too, came and was below 500.
      const whileDown = watch.answers.filter((a) => a.at > killedAt && a.at < restartedAt)
      // A probe every 25 ms plus its own time: at least a handful even on a busy machine.
      expect(whileDown.length).toBeGreaterThan(5)
      for (const a of watch.answers)
        expect([a.path, a.status]).toEqual([a.path, a.status < 500 ? a.status : 'not 5xx'])
      expect(load.stats.serverErrors).toEqual([])
      expect(load.stats.networkErrors).toBe(0)
      await settleAndCheck({
        name: 'Redis killed and restarted under load',
        client,
        accounts,
        server,
        store,
        receiver,
        load,
        detail: `${whileDown.length} probes while Redis was down (a request during the outage took ${duringMs} ms), shared again ${sharedAgainMs} ms after its start; ${ENGINE}`,
      })
    },
  )
})
