import pg from 'pg'
import { PGlite } from '@electric-sql/pglite'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { parseDbUrl, sessionCheck, type DbHost, type DbUrl, type TargetSessionAttrs } from './hosts.js'
import { Sql, toQuery } from './sql.js'

/**
 * One query interface over both engines: PostgreSQL through node-postgres, and embedded
 * PostgreSQL (PGlite). Both run the same SQL. int8 columns come back as bigint on both.
 */
export interface Queryable {
  /** A statement as text with its parameters, or as a fragment of the `sql` tag (src/db/sql.ts). */
  query<R = any>(sql: string | Sql, params?: unknown[]): Promise<{ rows: R[]; rowCount: number }>
  /**
   * Tell the listeners of `channel` (src/events/channels.ts). Inside a transaction the notification
   * is sent only if the transaction commits; on PostgreSQL it leaves right after the commit, from a
   * connection of its own (see createPostgresDb), rather than inside the transaction.
   */
  notify(channel: string, payload?: string): Promise<void>
}

export type Engine = 'postgres' | 'pglite'

export interface Db extends Queryable {
  readonly engine: Engine
  /** Run `fn` in one database transaction; retried on serialization failures and deadlocks. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>
  /**
   * Subscribe to a NOTIFY channel; returns an unsubscribe function. Notifications sent while the
   * listening connection was down are lost: `onReconnect` is called once it is back (PostgreSQL
   * only; the embedded engine's listener cannot break), for the listener to re-read what it missed.
   */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    options?: ListenOptions,
  ): Promise<() => Promise<void>>
  close(): Promise<void>
}

const RETRYABLE_SQLSTATES = new Set(['40001', '40P01'])
const TX_ATTEMPTS_MAX = 5

export function isRetryableDbError(err: unknown): boolean {
  return RETRYABLE_SQLSTATES.has((err as { code?: string })?.code ?? '')
}

/**
 * Connection-level failures mean the database is unreachable: 503, not 500. So does 25006
 * (read_only_sql_transaction): the service never opens read-only transactions, so a write refused
 * as read-only means the server it reached is no longer the primary (a failover under way).
 */
export function isDbUnavailableError(err: unknown): boolean {
  const code = (err as { code?: string })?.code ?? ''
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'EHOSTUNREACH',
      'ENETUNREACH',
      '25006',
      '57P01',
      '57P02',
      '57P03',
      '08006',
      '08001',
      '08003',
    ].includes(code) ||
    /Connection terminated|connection timeout|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
      (err as Error)?.message ?? '',
    )
  )
}

pg.types.setTypeParser(20, (v: string) => BigInt(v))

/** Statements worth preparing: queries and data changes, not utility commands. */
const PREPARABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i
// Distinct statement texts remembered (dynamic SQL has a bounded number of shapes).
const STATEMENT_NAMES_MAX = 5_000
// Notifications sent by one statement at most, and how long the first of a batch waits for others.
const NOTIFY_BATCH_MAX = 500
const NOTIFY_GATHER_MS = 2

/** PostgreSQL refusing a prepared statement whose table changed shape under it (a migration). */
function isStalePlanError(err: unknown): boolean {
  const e = err as { code?: string; message?: string }
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '')
}

/** Options of a subscription (see {@link Db.listen}). */
export interface ListenOptions {
  /**
   * Called after the LISTEN connection was lost and made again (the server restarted, or a standby
   * took over): notifications sent meanwhile were lost, so the listener re-reads what it watches.
   */
  onReconnect?: () => void
}

// How long a failed search for a usable host is remembered: requests during an outage get their
// 503 at once instead of each probing every host again.
const HOST_SEARCH_BACKOFF_MS = 250
// A pool left for another host is ended this long after, once the checkouts it had begun are done.
const RETIRED_POOL_GRACE_MS = 10_000
// The LISTEN connection's reconnect delays: from the first to the last, doubling.
const LISTEN_RETRY_FIRST_MS = 100
const LISTEN_RETRY_MAX_MS = 2_000
// Checkouts tried before giving up: a stale idle connection, then one on a freshly found host.
const CHECKOUT_ATTEMPTS_MAX = 3

/** No host of the URL gave a session of the kind asked for (SQLSTATE 08001: no connection made). */
export class NoUsableHostError extends Error {
  override name = 'NoUsableHostError'
  readonly code = '08001'
}

/**
 * Opens one session on the first host of `parsed`, in its order, that answers and whose session is
 * of the kind `target_session_attrs` asks for, as libpq does (src/db/hosts.ts says which rules).
 */
export async function openSession(
  parsed: DbUrl,
  config: Omit<pg.ClientConfig, 'connectionString'> = {},
): Promise<{ client: pg.Client; host: DbHost }> {
  const passes: TargetSessionAttrs[] =
    parsed.targetSessionAttrs === 'prefer-standby' ? ['prefer-standby', 'any'] : [parsed.targetSessionAttrs]
  const failures: string[] = []
  for (const attrs of passes) {
    for (const host of parsed.hosts) {
      const client = new pg.Client({
        connectionTimeoutMillis: 5_000,
        keepAlive: true,
        ...config,
        connectionString: host.url,
      })
      // A connection that breaks while being checked must not end the process.
      client.on('error', () => {})
      try {
        await client.connect()
        const refusal = await sessionRefusal(client, attrs)
        if (refusal === undefined) return { client, host }
        failures.push(`${host.label}: ${refusal}`)
      } catch (err) {
        failures.push(`${host.label}: ${(err as Error).message}`)
      }
      await client.end().catch(() => {})
    }
  }
  throw new NoUsableHostError(
    `no usable database host (${parsed.targetSessionAttrs}): ${failures.join('; ')}`,
  )
}

/** Why this session is not of the kind asked for, or undefined when it is. */
async function sessionRefusal(client: pg.ClientBase, attrs: TargetSessionAttrs): Promise<string | undefined> {
  const check = sessionCheck(attrs)
  if (!check) return undefined
  const r = await client.query({ text: check.query, rowMode: 'array' })
  const value = String((r.rows[0] as unknown[] | undefined)?.[0] ?? '')
  return check.accept(value) ? undefined : check.refusal
}

/**
 * The pool of the host now in use, found as libpq would find it, and given up for another when
 * that host vanishes or turns read-only: the next checkout then searches the hosts again, so a
 * promoted standby is found without a restart.
 */
interface HostRouter {
  readonly parsed: DbUrl
  /** One host of any kind: nothing to search, nowhere to move. */
  readonly fixed: boolean
  /** The pool of the current host (searching for one first if needed). */
  pool(): Promise<pg.Pool>
  /** The host now in use, if one was found. */
  readonly current: DbHost | undefined
  /** The failure of `pool` means its host is gone or no longer of the right kind. */
  giveUp(pool: pg.Pool): void
  /** Calls `fn` whenever another host is taken after the first. */
  onMove(fn: (host: DbHost) => void): void
  close(): Promise<void>
}

function createHostRouter(parsed: DbUrl, poolMax: number): HostRouter {
  // One host that may be of any kind: nothing to search and nowhere to move.
  const fixed = parsed.hosts.length === 1 && parsed.targetSessionAttrs === 'any'
  const attrs = parsed.targetSessionAttrs === 'prefer-standby' ? 'any' : parsed.targetSessionAttrs
  let current: { host: DbHost; pool: pg.Pool } | undefined
  let searching: Promise<{ host: DbHost; pool: pg.Pool }> | undefined
  let lastFailure: { at: number; err: Error } | undefined
  const retired = new Set<pg.Pool>()
  const movers: Array<(host: DbHost) => void> = []
  let closed = false

  const makePool = (host: DbHost): pg.Pool => {
    const pool = new pg.Pool({
      connectionString: host.url,
      max: poolMax,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      // Every new connection is checked as libpq checks it: a host that turned into a standby
      // since it was chosen is noticed at the next connection, not only at the next write.
      ...(fixed || attrs === 'any'
        ? {}
        : {
            verify: (client: pg.PoolClient, done: (err?: Error) => void) => {
              sessionRefusal(client, attrs).then(
                (refusal) =>
                  done(
                    refusal === undefined ? undefined : new NoUsableHostError(`${host.label}: ${refusal}`),
                  ),
                (err: Error) => done(err),
              )
            },
          }),
    })
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => {})
    return pool
  }

  const search = async (): Promise<{ host: DbHost; pool: pg.Pool }> => {
    const { client, host } = await openSession(parsed)
    await client.end().catch(() => {})
    return { host, pool: makePool(host) }
  }

  if (fixed) current = { host: parsed.hosts[0]!, pool: makePool(parsed.hosts[0]!) }
  let moves = 0

  return {
    parsed,
    fixed,
    get current() {
      return current?.host
    },
    async pool() {
      if (current) return current.pool
      if (closed) throw new Error('the database is closed')
      if (!searching) {
        if (lastFailure && Date.now() - lastFailure.at < HOST_SEARCH_BACKOFF_MS) throw lastFailure.err
        searching = search().then(
          (found) => {
            searching = undefined
            lastFailure = undefined
            if (closed) {
              void found.pool.end().catch(() => {})
              throw new Error('the database is closed')
            }
            const moved = moves++ > 0
            current = found
            if (moved) for (const fn of movers) fn(found.host)
            return found
          },
          (err: Error) => {
            searching = undefined
            lastFailure = { at: Date.now(), err }
            throw err
          },
        )
      }
      return (await searching).pool
    },
    giveUp(pool) {
      if (fixed || current?.pool !== pool) return
      current = undefined
      retired.add(pool)
      // Checkouts already begun on it finish (and fail) there; its idle connections go with it.
      setTimeout(() => {
        retired.delete(pool)
        void pool.end().catch(() => {})
      }, RETIRED_POOL_GRACE_MS).unref()
    },
    onMove(fn) {
      movers.push(fn)
    },
    async close() {
      closed = true
      await searching?.catch(() => {})
      const pools = [...retired, ...(current ? [current.pool] : [])]
      current = undefined
      retired.clear()
      await Promise.all(pools.map((p) => p.end().catch(() => {})))
    },
  }
}

/** An error that says the host is gone or is no longer the primary: look for another. */
function meansHostLost(err: unknown): boolean {
  return isDbUnavailableError(err)
}

export function createPostgresDb(url: string, opts: { poolMax?: number } = {}): Db {
  const parsed = parseDbUrl(url)
  const router = createHostRouter(parsed, opts.poolMax ?? 20)

  /**
   * A connection of the current host's pool. A checkout that fails for want of a host (an idle
   * connection that died with its server, or a host that is no longer the primary) gives the host
   * up and tries once more on a freshly found one: nothing of the caller's work has been sent yet.
   */
  const checkout = async (): Promise<{ client: pg.PoolClient; pool: pg.Pool }> => {
    for (let attempt = 1; ; attempt++) {
      const pool = await router.pool()
      try {
        return { client: await pool.connect(), pool }
      } catch (err) {
        if (meansHostLost(err)) router.giveUp(pool)
        if (attempt >= CHECKOUT_ATTEMPTS_MAX || !meansHostLost(err) || router.fixed) throw err
      }
    }
  }

  // The LISTEN connection: one per process, on the host the pool uses. When it breaks (the server
  // restarted, or the primary died and a standby took over), it is made again, with growing delays,
  // until a usable host answers; the listeners are then told (`onReconnect`) so that they re-read
  // what they watch from the database, since notifications sent meanwhile are lost. When the pool
  // moves to another host while this connection still stands (the old primary alive but demoted),
  // the connection is closed and made again there.
  const listeners = new Map<string, Set<(p: string) => void>>()
  const reconnectHooks = new Set<() => void>()
  let listenClient: pg.Client | null = null
  let listenHost: DbHost | undefined
  let listenConnecting: Promise<void> | null = null
  let listenRetry: NodeJS.Timeout | undefined
  let listenRetryMs = LISTEN_RETRY_FIRST_MS
  let listenLost = false
  let closed = false

  const scheduleListenerRetry = (): void => {
    if (closed || listenRetry) return
    listenRetry = setTimeout(() => {
      listenRetry = undefined
      ensureListener().catch(() => {
        listenRetryMs = Math.min(listenRetryMs * 2, LISTEN_RETRY_MAX_MS)
        scheduleListenerRetry()
      })
    }, listenRetryMs)
    listenRetry.unref()
  }

  const dropListener = (client: pg.Client): void => {
    if (listenClient !== client) return
    listenClient = null
    listenHost = undefined
    listenLost = true
    void client.end().catch(() => {})
    scheduleListenerRetry()
  }

  async function connectListener(): Promise<void> {
    const { client, host } = await openSession(parsed)
    client.removeAllListeners('error')
    client.on('notification', (msg) => {
      for (const fn of listeners.get(msg.channel) ?? []) fn(msg.payload ?? '')
    })
    client.on('error', () => dropListener(client))
    client.on('end', () => dropListener(client))
    try {
      for (const channel of listeners.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`)
    } catch (err) {
      await client.end().catch(() => {})
      throw err
    }
    if (closed) {
      await client.end().catch(() => {})
      return
    }
    listenClient = client
    listenHost = host
    listenRetryMs = LISTEN_RETRY_FIRST_MS
    if (listenLost) {
      listenLost = false
      for (const hook of reconnectHooks) {
        try {
          hook()
        } catch {
          // A listener's own failure is its own; the others are still told.
        }
      }
    }
  }

  async function ensureListener(): Promise<void> {
    if (listenClient || closed) return
    listenConnecting ??= connectListener().finally(() => (listenConnecting = null))
    await listenConnecting
  }

  router.onMove((host) => {
    if (listenClient && listenHost && listenHost.url !== host.url) dropListener(listenClient)
    if (notifyClient && notifyHost && notifyHost.url !== host.url) {
      void notifyClient.end().catch(() => {})
      notifyClient = undefined
    }
  })

  // Prepared statements. Each statement is prepared once per connection, under a name derived from
  // its text, and from then on only bound and executed: PostgreSQL skips parsing and planning, which
  // for our short statements costs more than running them (a read by primary key went from about
  // 13,000 to 29,000 a second on the bench machine). Utility statements (BEGIN, LISTEN, DDL) stay
  // unnamed. A migration that changes a table under a prepared `SELECT *` makes PostgreSQL refuse
  // the old plan; the names then change (a new generation) and the work is tried again.
  const statementNames = new Map<string, string>()
  let generation = 0
  const statement = (given: string | Sql, params: unknown[] | undefined): pg.QueryConfig => {
    const { text: sql, values } = textAndValues(given, params)
    if (!PREPARABLE.test(sql)) return { text: sql, values }
    let name = statementNames.get(sql)
    if (name === undefined) {
      name = `s${generation}_${createHash('sha256').update(sql).digest('base64url').slice(0, 24)}`
      if (statementNames.size >= STATEMENT_NAMES_MAX) statementNames.clear()
      statementNames.set(sql, name)
    }
    return { name, text: sql, values }
  }
  const renamingAfter = (err: unknown): boolean => {
    if (!isStalePlanError(err)) return false
    generation++
    statementNames.clear()
    return true
  }

  // Notifications after commit. PostgreSQL serialises the commits of transactions that NOTIFY
  // (a database-wide lock held through the commit's WAL flush, which keeps the notification queue
  // in commit order), so a NOTIFY inside every state change made every commit wait its turn: pgbench's
  // TPC-B with one NOTIFY added went from 2,200 to 675 transactions a second on the bench machine.
  // Instead the notifications of a committed transaction are queued and sent in batches from one
  // connection whose transactions do not wait for the WAL flush (a notification is not data; nothing
  // is lost when one is). A process that dies between a commit and its notification loses that
  // notification: listeners also re-check on their own timers (the delivery worker's poll, the
  // status stream's heartbeat).
  const notifyQueue: Array<[string, string]> = []
  let notifySending: Promise<void> | undefined
  let notifyClient: pg.Client | undefined
  let notifyHost: DbHost | undefined
  const connectNotifyClient = async (): Promise<pg.Client> => {
    const { client, host } = await openSession(parsed)
    client.removeAllListeners('error')
    client.on('error', () => {
      if (notifyClient === client) notifyClient = undefined
    })
    await client.query('SET synchronous_commit TO off')
    notifyHost = host
    return client
  }
  const sendNotifications = async (): Promise<void> => {
    while (notifyQueue.length > 0 && !closed) {
      const batch = notifyQueue.splice(0, NOTIFY_BATCH_MAX)
      try {
        notifyClient ??= await connectNotifyClient()
        await notifyClient.query(
          'SELECT pg_notify(n.channel, n.payload) FROM unnest($1::text[], $2::text[]) AS n(channel, payload)',
          [batch.map((b) => b[0]), batch.map((b) => b[1])],
        )
      } catch {
        // Dropped: listeners catch up on their own timers. The next batch connects afresh.
        notifyClient?.end().catch(() => {})
        notifyClient = undefined
      }
    }
    notifySending = undefined
  }
  const notifyAfterCommit = (items: Array<[string, string]>): void => {
    if (items.length === 0 || closed) return
    notifyQueue.push(...items)
    // A short wait gathers the notifications of commits finishing together into one statement.
    notifySending ??= new Promise<void>((resolve) => setTimeout(resolve, NOTIFY_GATHER_MS)).then(
      sendNotifications,
    )
  }
  const query: Queryable['query'] = async (sql, params) => {
    for (let attempt = 1; ; attempt++) {
      const { client, pool } = await checkout()
      let broken: Error | undefined
      const onError = (err: Error) => {
        broken = err
      }
      client.on('error', onError)
      try {
        const r = await client.query(statement(sql, params))
        client.off('error', onError)
        client.release(broken)
        return { rows: r.rows, rowCount: r.rowCount ?? 0 }
      } catch (err) {
        client.off('error', onError)
        // A failed statement leaves its connection behind (as pool.query does); a lost host or a
        // primary turned read-only also sends the next checkout looking for the new primary. The
        // statement is not sent again: it may have run before the connection broke.
        client.release(broken ?? (err as Error))
        if (meansHostLost(err)) router.giveUp(pool)
        if (attempt === 1 && renamingAfter(err)) continue
        throw err
      }
    }
  }

  return {
    engine: 'postgres',
    query,
    async notify(channel, payload = '') {
      notifyAfterCommit([[channel, payload]])
    },
    async tx(fn) {
      for (let attempt = 1; ; attempt++) {
        const { client, pool } = await checkout()
        // The pool stops listening for errors on a client it hands out. A connection that breaks
        // between two queries of this transaction (the server restarting) emits 'error' on the
        // client, which unheard would end the process; heard, the next query fails and the client
        // is discarded below.
        let broken: Error | undefined
        const onError = (err: Error) => {
          broken = err
        }
        client.on('error', onError)
        const notifications: Array<[string, string]> = []
        const q: Queryable = {
          query: async (sql, params) => {
            const r = await client.query(statement(sql, params))
            return { rows: r.rows, rowCount: r.rowCount ?? 0 }
          },
          async notify(channel, payload = '') {
            notifications.push([channel, payload])
          },
        }
        try {
          await client.query('BEGIN')
        } catch (err) {
          // Nothing of `fn` was sent: a connection that died idle in the pool (its server gone) is
          // left, and the transaction starts again on a fresh one, on whichever host is now usable.
          client.off('error', onError)
          client.release(broken ?? (err as Error))
          if (meansHostLost(err)) router.giveUp(pool)
          if (attempt < TX_ATTEMPTS_MAX && meansHostLost(err)) continue
          throw err
        }
        try {
          const result = await fn(q)
          await client.query('COMMIT')
          client.off('error', onError)
          client.release(broken)
          notifyAfterCommit(notifications)
          return result
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {})
          client.off('error', onError)
          client.release(broken ?? (isDbUnavailableError(err) ? (err as Error) : undefined))
          // A lost host or a read-only one (the primary demoted) sends the next checkout looking for
          // the new primary. The transaction is not run again here: its COMMIT may have reached the
          // old primary (and its standby) before the connection broke; the caller answers 503 and the
          // client's retry, with the same extRefId, finds what was committed.
          if (broken || meansHostLost(err)) router.giveUp(pool)
          if (attempt < TX_ATTEMPTS_MAX && (isRetryableDbError(err) || renamingAfter(err))) continue
          throw err
        }
      }
    },
    async listen(channel, onPayload, options) {
      let set = listeners.get(channel)
      const isNew = !set
      if (!set) listeners.set(channel, (set = new Set()))
      set.add(onPayload)
      // Each subscription's own hook, so that one function given twice is still told twice.
      const hook = options?.onReconnect ? () => options.onReconnect!() : undefined
      if (hook) reconnectHooks.add(hook)
      try {
        await ensureListener()
        if (isNew && listenClient) await listenClient.query(`LISTEN ${quoteIdent(channel)}`)
      } catch (err) {
        // Not subscribed: the caller is told, and nothing of this subscription stays behind to be
        // called after a later connection.
        set.delete(onPayload)
        if (set.size === 0 && listeners.get(channel) === set) listeners.delete(channel)
        if (hook) reconnectHooks.delete(hook)
        throw err
      }
      return async () => {
        set!.delete(onPayload)
        if (hook) reconnectHooks.delete(hook)
      }
    },
    async close() {
      await notifySending
      closed = true
      clearTimeout(listenRetry)
      await notifyClient?.end().catch(() => {})
      const listening = listenClient
      listenClient = null
      await listening?.end().catch(() => {})
      await router.close()
    },
  }
}

/**
 * PostgreSQL settings of the embedded engine, given at every start (they override the
 * postgresql.conf that initdb wrote). PGlite is one backend in this process's WebAssembly memory,
 * and its shared memory is initialised (so resident) at start: the 128 MB shared_buffers of a
 * default initdb cost as much resident memory before the first query. 32 MB holds the working set of
 * a small deployment; the rest of the data is a read() away in the operating system's page cache.
 * WAL and temporary buffers shrink with it (one backend, no temporary tables). See docs/memory.md.
 */
export const PGLITE_SETTINGS: readonly string[] = [
  'shared_buffers=32MB',
  'wal_buffers=1MB',
  'temp_buffers=1MB',
]

const pgliteStartParams = () => [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((s) => ['-c', s])]

/**
 * Creates the embedded database cluster in `dataDir` (initdb) in a short-lived child process. initdb
 * runs in a second PGlite instance whose WebAssembly memory, compiled code and file-system images
 * (some 500 MB) the process that ran it keeps long after it closed; a child returns all of it to
 * the system when it exits, and this process then opens the cluster like on any later start.
 */
function initPgliteCluster(dataDir: string): void {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite')
  const script = [
    'const { PGlite } = require(process.argv[1])',
    'const lite = new PGlite(process.argv[2], { startParams: JSON.parse(process.argv[3]) })',
    'lite.waitReady.then(() => lite.close()).then(() => process.exit(0), (err) => {',
    '  console.error(err && err.message ? err.message : String(err)); process.exit(1) })',
  ].join('\n')
  const child = spawnSync(
    process.execPath,
    ['-e', script, entry, dataDir, JSON.stringify(pgliteStartParams())],
    { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 },
  )
  if (child.error) throw child.error
  if (child.status !== 0) {
    const err = new Error(`PGlite initdb in ${dataDir} failed: ${(child.stderr || '').trim().slice(-2000)}`)
    throw err
  }
}

export async function createPgliteDb(dataDir: string | undefined): Promise<Db> {
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true })
    if (!existsSync(join(dataDir, 'PG_VERSION'))) initPgliteCluster(dataDir)
  }
  const lite = new PGlite(dataDir, { startParams: pgliteStartParams() })
  await lite.waitReady
  // One connection, no commit queue to spare: PostgreSQL's own NOTIFY, sent on commit.
  const queryable = (run: Pick<PGlite, 'query'>): Queryable => ({
    query: async (sql, params) => {
      const { text, values } = textAndValues(sql, params)
      const r = await run.query<any>(text, values)
      return { rows: int8AsBigint(r), rowCount: r.affectedRows || r.rows.length }
    },
    async notify(channel, payload = '') {
      await run.query('SELECT pg_notify($1, $2)', [channel, payload])
    },
  })
  return {
    engine: 'pglite',
    ...queryable(lite),
    async tx(fn) {
      // PGlite is a single connection: its transaction holds it exclusively, so no retry is needed.
      return lite.transaction(async (t) => fn(queryable(t)))
    },
    async listen(channel, onPayload) {
      const unsub = await lite.listen(channel, onPayload)
      return async () => unsub()
    },
    async close() {
      await lite.close()
    },
  }
}

function textAndValues(
  sql: string | Sql,
  params: unknown[] | undefined,
): { text: string; values?: unknown[] } {
  return sql instanceof Sql ? toQuery(sql) : { text: sql, values: params }
}

/** PGlite gives int8 as a number when it fits; both engines give bigint here. */
function int8AsBigint(r: { rows: any[]; fields: Array<{ name: string; dataTypeID: number }> }): any[] {
  const int8 = r.fields.filter((f) => f.dataTypeID === 20).map((f) => f.name)
  if (int8.length === 0) return r.rows
  for (const row of r.rows) {
    for (const name of int8) if (typeof row[name] === 'number') row[name] = BigInt(row[name])
  }
  return r.rows
}

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"'
}
