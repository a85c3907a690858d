import { readFileSync } from 'node:fs'
import type { LoadSpec, LoadResult } from './load-spec.js'
import { runLoad } from './load.js'
import type { ScenarioResult } from './report.js'
import type { ServerHandle } from './server.js'
import { cpuDelta, normalise, perOp } from './stats.js'
import { statsSnapshot, walGroups, writesPerOp, type WritesPerOp } from './writes.js'
import { backendCpuMs, withClient } from './pg.js'
import { cpuMs, postgresCpuMs } from './proc.js'

/** Sizes and durations of a run; `--quick` shrinks them to fit a CI smoke run. */
export interface Settings {
  durationS: number
  warmupS: number
  /** Connections of the single-GET, list and ceiling loads. */
  httpConnections: number
  /** Connections of the swap loads, and pgbench's client count. */
  swapConnections: number
  bigListRows: number
  smallListRows: number
  pgbenchScale: number
  /** Lightning receives in the pay-to-webhook scenario. */
  lightningPayments: number
}

export const FULL: Settings = {
  durationS: 20,
  warmupS: 3,
  httpConnections: 32,
  swapConnections: 16,
  bigListRows: 1_000_000,
  smallListRows: 1_000,
  pgbenchScale: 16,
  lightningPayments: 500,
}

export const QUICK: Settings = {
  durationS: 4,
  warmupS: 1,
  httpConnections: 32,
  swapConnections: 16,
  bigListRows: 100_000,
  smallListRows: 1_000,
  pgbenchScale: 4,
  lightningPayments: 100,
}

export interface BenchContext {
  quick: boolean
  settings: Settings
  /** Scratch space for logs and data directories, removed at the end. */
  workDir: string
  /** Where CPU profiles go when `--profile` is given. */
  profileDir: string | undefined
  /**
   * Brings the planner's statistics of the server's database up to date (ANALYZE), as autovacuum
   * does on a database in service; unset for the embedded engine. Called between warm-up and
   * measurement: a freshly created bench database otherwise keeps the statistics of its empty
   * tables for the whole run, and each connection's cached plans with them.
   */
  analyze?: () => Promise<void>
  /**
   * A CHECKPOINT of the server's database before each warm-up (unset for the embedded engine): the
   * WAL that pgbench or a bulk seed wrote otherwise forces a checkpoint in the middle of the next
   * measurement, whose full-page writes that measurement then pays for.
   */
  checkpoint?: () => Promise<void>
  /**
   * Counting what a load writes to the bench database (bench/lib/writes.ts): set while svcpay runs on
   * PostgreSQL, with what the server allows (pg_walinspect, pg_stat_statements).
   */
  writes?: { url: string; walinspect: boolean; statements: boolean; notes: string[] }
  log(line: string): void
}

export interface Measured {
  load: LoadResult
  peakRssMb: number | undefined
  /**
   * The server's own CPU time (user + system) per request, or per operation for swaps. Unlike
   * throughput it hardly moves when other programs share the machine, so it is the figure to
   * compare across runs.
   */
  serverCpuMsPerOp: number | undefined
  /** The CPU time of every PostgreSQL process on the machine per request or operation. */
  dbCpuMsPerOp: number | undefined
  /** The CPU time of the bench database's own backends per request or operation (pg_stat_activity). */
  dbBackendCpuMsPerOp: number | undefined
  /** The load client's own CPU time per HTTP request it completed, in the same run: the control. */
  clientCpuMsPerRequest: number | undefined
  /** serverCpuMsPerOp / clientCpuMsPerRequest: the server's CPU per operation in client requests. */
  serverCpuNorm: number | undefined
  /** Rows, index entries, WAL and commits per operation, when asked for and on PostgreSQL. */
  writes?: WritesPerOp
  /** The 1-minute load average when the measurement started, to tell a busy machine from a slow server. */
  loadAverage: number
}

/**
 * Warm up (a short unmeasured run), then measure one load against a server: the server's peak
 * memory over both, its CPU time over the measured run.
 */
export async function measure(
  ctx: BenchContext,
  server: Pick<ServerHandle, 'rss' | 'pid'> | undefined,
  spec: Omit<LoadSpec, 'durationS'>,
  opts: { writes?: boolean } = {},
): Promise<Measured> {
  server?.rss.reset()
  if (server) await ctx.checkpoint?.()
  if (ctx.settings.warmupS > 0) await runLoad({ ...spec, durationS: ctx.settings.warmupS }, ctx.workDir)
  if (server) await ctx.analyze?.()
  const loadAverage = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])
  const counting = opts.writes && server ? ctx.writes : undefined
  const statsBefore = counting ? await withClient(counting.url, (c) => statsSnapshot(c, counting)) : undefined
  const backendsUrl = server ? ctx.writes?.url : undefined
  const backendsBefore = backendsUrl ? await backendCpuMs(backendsUrl) : undefined
  const cpuBefore = server ? cpuMs(server.pid) : undefined
  const dbBefore = postgresCpuMs()
  const load = await runLoad({ ...spec, durationS: ctx.settings.durationS }, ctx.workDir)
  const cpuAfter = server ? cpuMs(server.pid) : undefined
  const dbAfter = postgresCpuMs()
  const backendsAfter = backendsUrl ? await backendCpuMs(backendsUrl) : undefined
  const done = load.ops ? load.ops.count : load.requests
  const serverCpuMsPerOp = perOp(cpuBefore, cpuAfter, done)
  const clientCpuMsPerRequest =
    load.clientCpuMs !== undefined ? perOp(0, load.clientCpuMs, load.requests, 4) : undefined
  let writes: WritesPerOp | undefined
  if (counting && statsBefore) {
    const startedAt = Date.now()
    writes = await withClient(counting.url, async (c) => {
      const statsAfter = await statsSnapshot(c, counting)
      let groups
      let walSource = `unavailable: ${counting.notes.find((n) => n.startsWith('pg_walinspect')) ?? 'pg_walinspect not created'}`
      if (counting.walinspect) {
        try {
          groups = await walGroups(c, statsBefore.lsn, statsAfter.lsn)
          walSource =
            'pg_walinspect: records naming the bench database, and the commits of their transactions'
        } catch (err) {
          walSource = `unavailable: pg_walinspect: ${(err as Error).message}`
        }
      }
      return writesPerOp({ before: statsBefore, after: statsAfter, ops: done, walGroups: groups, walSource })
    })
    ctx.log(`writes counted in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
  }
  return {
    load,
    peakRssMb: server?.rss.peakMb(),
    serverCpuMsPerOp,
    dbCpuMsPerOp: ctx.analyze ? perOp(dbBefore, dbAfter, done) : undefined,
    dbBackendCpuMsPerOp:
      backendsBefore && backendsAfter ? perOp(0, cpuDelta(backendsBefore, backendsAfter), done) : undefined,
    clientCpuMsPerRequest,
    serverCpuNorm: normalise(serverCpuMsPerOp, clientCpuMsPerRequest),
    ...(writes ? { writes } : {}),
    loadAverage,
  }
}

export { cpuMs, postgresCpuMs } from './proc.js'

/** A scenario result from a load, throughput and latency per HTTP request (or per operation). */
export function fromLoad(
  base: Pick<ScenarioResult, 'id' | 'title'> & Partial<ScenarioResult>,
  m: Measured,
  per: 'request' | 'op' = 'request',
): ScenarioResult {
  const ops = m.load.ops
  return {
    status: 'ok',
    unit: per === 'op' ? 'ops/s' : 'req/s',
    throughput: per === 'op' ? ops?.perSec : m.load.requestsPerSec,
    latencyMs: per === 'op' ? ops?.latencyMs : m.load.latencyMs,
    errors: m.load.errors,
    peakRssMb: m.peakRssMb,
    serverCpuMsPerOp: m.serverCpuMsPerOp,
    dbCpuMsPerOp: m.dbCpuMsPerOp,
    dbBackendCpuMsPerOp: m.dbBackendCpuMsPerOp,
    clientCpuMsPerRequest: m.clientCpuMsPerRequest,
    serverCpuNorm: m.serverCpuNorm,
    ...(m.writes ? { writes: m.writes } : {}),
    loadAverage: m.loadAverage,
    load: m.load,
    ...base,
  }
}

export const MEMORY_TARGET_MB = 200
