import { existsSync, readdirSync } from 'node:fs'
import { baseEnv, run } from './proc.js'
import { postgresCpuMs } from './context.js'
import { PG_ADMIN_URL, dbUrl, dropDatabase, recreateDatabase, withClient } from './pg.js'

/** Where pgbench is: on PATH, or in a PostgreSQL bin directory; undefined when absent. */
export async function findPgbench(): Promise<string | undefined> {
  const onPath = await run('sh', ['-c', 'command -v pgbench']).catch(() => undefined)
  const found = onPath?.stdout.trim()
  if (onPath?.code === 0 && found) return found
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  for (const version of readdirSync(root).sort().reverse()) {
    const path = `${root}/${version}/bin/pgbench`
    if (existsSync(path)) return path
  }
  return undefined
}

export interface PgbenchResult {
  tps: number
  /** PostgreSQL's CPU time per transaction. */
  dbCpuMsPerTxn: number | undefined
  clients: number
  scale: number
  durationS: number
  latencyAvgMs: number
}

/**
 * The database's own ceiling: pgbench's TPC-B-like script (five statements and a commit per
 * transaction) on a scratch database of the same server, with the same number of clients as the
 * swap load has connections.
 */
export async function runPgbench(
  pgbench: string,
  opts: { clients: number; scale: number; durationS: number },
): Promise<PgbenchResult> {
  const name = 'svcpay_bench_pgbench'
  await recreateDatabase(name)
  const u = new URL(PG_ADMIN_URL)
  const conn = ['-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres')]
  const env = { ...baseEnv(), ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}) }
  try {
    const init = await run(pgbench, ['-i', '-q', '-s', String(opts.scale), ...conn, name], {
      env,
      timeoutMs: 300_000,
    })
    if (init.code !== 0) throw new Error(`pgbench -i failed: ${init.stderr.trim()}`)
    // As before every svcpay measurement: the initialisation's WAL must not force a checkpoint into the run.
    await withClient(dbUrl(name), (c) => c.query('CHECKPOINT'))
    // pgbench's backends end with it, taking their CPU time along, so the rate is sampled while it
    // runs, from its second second to a second before its end (from its first second in a run of
    // 4 s or less, the quick run's, so that its figure is there to normalise by).
    const sampled: number[] = []
    const sample = (atS: number) => setTimeout(() => sampled.push(postgresCpuMs()), atS * 1000)
    const fromS = opts.durationS > 4 ? 2 : 1
    const samplers = opts.durationS >= 3 ? [sample(fromS), sample(opts.durationS - 1)] : []
    const r = await run(
      pgbench,
      ['-c', String(opts.clients), '-j', '2', '-T', String(opts.durationS), ...conn, name],
      { env, timeoutMs: (opts.durationS + 120) * 1000 },
    )
    if (r.code !== 0) throw new Error(`pgbench failed: ${r.stderr.trim()}`)
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(r.stdout)
    const lat = /latency average = ([\d.]+) ms/.exec(r.stdout)
    if (!tps) throw new Error(`pgbench printed no tps:\n${r.stdout}`)
    samplers.forEach(clearTimeout)
    const sampledS = opts.durationS - 1 - fromS
    const dbCpuMsPerTxn =
      sampled.length === 2
        ? Math.round(((sampled[1]! - sampled[0]!) / sampledS / Number(tps[1])) * 1000) / 1000
        : undefined
    return {
      tps: Number(tps[1]),
      dbCpuMsPerTxn,
      clients: opts.clients,
      scale: opts.scale,
      durationS: opts.durationS,
      latencyAvgMs: lat ? Number(lat[1]) : 0,
    }
  } finally {
    await dropDatabase(name)
  }
}
