import pg from 'pg'
import { PGlite } from '@electric-sql/pglite'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
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
  /** Subscribe to a NOTIFY channel; returns an unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>
  close(): Promise<void>
}

const RETRYABLE_SQLSTATES = new Set(['40001', '40P01'])
const TX_ATTEMPTS_MAX = 5

export function isRetryableDbError(err: unknown): boolean {
  return RETRYABLE_SQLSTATES.has((err as { code?: string })?.code ?? '')
}

/** Connection-level failures mean the database is unreachable: 503, not 500. */
export function isDbUnavailableError(err: unknown): boolean {
  const code = (err as { code?: string })?.code ?? ''
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      '57P01',
      '57P02',
      '57P03',
      '08006',
      '08001',
      '08003',
    ].includes(code) ||
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(
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

export function createPostgresDb(url: string, opts: { poolMax?: number } = {}): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolMax ?? 20,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  })
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {})

  const listeners = new Map<string, Set<(p: string) => void>>()
  let listenClient: pg.Client | null = null
  let listenConnecting: Promise<void> | null = null
  let closed = false

  async function connectListener(): Promise<void> {
    const client = new pg.Client({ connectionString: url })
    client.on('notification', (msg) => {
      for (const fn of listeners.get(msg.channel) ?? []) fn(msg.payload ?? '')
    })
    client.on('error', () => {
      listenClient = null
      if (!closed) setTimeout(() => void ensureListener().catch(() => {}), 500).unref()
    })
    await client.connect()
    for (const channel of listeners.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`)
    listenClient = client
  }

  async function ensureListener(): Promise<void> {
    if (listenClient || closed) return
    listenConnecting ??= connectListener().finally(() => (listenConnecting = null))
    await listenConnecting
  }

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
  const connectNotifyClient = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: url })
    client.on('error', () => {
      if (notifyClient === client) notifyClient = undefined
    })
    await client.connect()
    await client.query('SET synchronous_commit TO off')
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
      try {
        const r = await pool.query(statement(sql, params))
        return { rows: r.rows, rowCount: r.rowCount ?? 0 }
      } catch (err) {
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
        const client = await pool.connect()
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
          if (attempt < TX_ATTEMPTS_MAX && (isRetryableDbError(err) || renamingAfter(err))) continue
          throw err
        }
      }
    },
    async listen(channel, onPayload) {
      let set = listeners.get(channel)
      const isNew = !set
      if (!set) listeners.set(channel, (set = new Set()))
      set.add(onPayload)
      await ensureListener()
      if (isNew && listenClient) await listenClient.query(`LISTEN ${quoteIdent(channel)}`)
      return async () => {
        set!.delete(onPayload)
      }
    },
    async close() {
      await notifySending
      closed = true
      await notifyClient?.end().catch(() => {})
      await listenClient?.end().catch(() => {})
      await pool.end()
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
