import pg from 'pg'
import { cpuMs } from './proc.js'

/** The PostgreSQL the bench uses: trust auth on loopback, as in CI. BENCH_PG_URL overrides it. */
export const PG_ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/test'

/** The URL of database `name` on the same server as PG_ADMIN_URL. */
export function dbUrl(name: string): string {
  const u = new URL(PG_ADMIN_URL)
  u.pathname = `/${name}`
  return u.toString()
}

/** Drops `name` (closing its connections) and creates it empty; returns its URL. */
export async function recreateDatabase(name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`)
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  return dbUrl(name)
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  } finally {
    await admin.end()
  }
}

/** Runs `fn` with one connection to `url`, closed afterwards. */
export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await fn(c)
  } finally {
    await c.end()
  }
}

/** Whether PostgreSQL answers at all (the bench needs it for everything but the embedded run). */
export async function pgReachable(): Promise<string | undefined> {
  try {
    return await withClient(
      PG_ADMIN_URL,
      async (c) => (await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v,
    )
  } catch {
    return undefined
  }
}

/**
 * The CPU time so far (from /proc) of each backend connected to the database of `url`, by pid,
 * from pg_stat_activity; the asking connection is left out. Unlike every postgres process on the
 * machine, this leaves out the backends of other databases (other people's tests on a shared
 * server) and the server's shared processes (WAL writer, checkpointer, autovacuum launcher).
 */
export async function backendCpuMs(url: string): Promise<Map<number, number>> {
  const pids = await withClient(url, async (c) =>
    (
      await c.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
    ).rows.map((r) => r.pid),
  )
  const out = new Map<number, number>()
  for (const pid of pids) {
    const ms = cpuMs(pid)
    if (ms !== undefined) out.set(pid, ms)
  }
  return out
}
