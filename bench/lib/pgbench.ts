import { existsSync, readdirSync } from 'node:fs'
import { baseEnv, run } from './proc.js'
import { postgresCpuMs } from './context.js'
import { PG_ADMIN_URL, backendCpuMs, dbUrl, dropDatabase, recreateDatabase, withClient } from './pg.js'
import { cpuDelta } from './stats.js'

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
  /** The CPU time of the backends connected to pgbench's database per transaction. */
  dbBackendCpuMsPerTxn: number | undefined
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
    // Both every postgres process on the machine, and the backends connected to pgbench's database
    // alone (pg_stat_activity), as the svcpay scenarios measure both.
    const sampled: Array<Promise<{ all: number; backends: Map<number, number> }>> = []
    const sample = (atS: number) =>
      setTimeout(() => {
        const all = postgresCpuMs()
        sampled.push(backendCpuMs(dbUrl(name)).then((backends) => ({ all, backends })))
      }, atS * 1000)
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
    const samples = await Promise.all(sampled)
    const txns = (opts.durationS - 1 - fromS) * Number(tps[1])
    const perTxn = (ms: number) => Math.round((ms / txns) * 1000) / 1000
    const dbCpuMsPerTxn = samples.length === 2 ? perTxn(samples[1]!.all - samples[0]!.all) : undefined
    const dbBackendCpuMsPerTxn =
      samples.length === 2 ? perTxn(cpuDelta(samples[0]!.backends, samples[1]!.backends)) : undefined
    return {
      tps: Number(tps[1]),
      dbCpuMsPerTxn,
      dbBackendCpuMsPerTxn,
      clients: opts.clients,
      scale: opts.scale,
      durationS: opts.durationS,
      latencyAvgMs: lat ? Number(lat[1]) : 0,
    }
  } finally {
    await dropDatabase(name)
  }
}
