import { readdirSync, readFileSync } from 'node:fs'
import type { LoadSpec, LoadResult } from './load-spec.js'
import { runLoad } from './load.js'
import type { ScenarioResult } from './report.js'
import type { ServerHandle } from './server.js'

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
): Promise<Measured> {
  server?.rss.reset()
  if (server) await ctx.checkpoint?.()
  if (ctx.settings.warmupS > 0) await runLoad({ ...spec, durationS: ctx.settings.warmupS }, ctx.workDir)
  if (server) await ctx.analyze?.()
  const loadAverage = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])
  const cpuBefore = server ? cpuMs(server.pid) : undefined
  const dbBefore = postgresCpuMs()
  const load = await runLoad({ ...spec, durationS: ctx.settings.durationS }, ctx.workDir)
  const cpuAfter = server ? cpuMs(server.pid) : undefined
  const done = load.ops ? load.ops.count : load.requests
  const perOp = (before: number | undefined, after: number | undefined) =>
    before !== undefined && after !== undefined && done > 0
      ? Math.round(((after - before) / done) * 1000) / 1000
      : undefined
  return {
    load,
    peakRssMb: server?.rss.peakMb(),
    serverCpuMsPerOp: perOp(cpuBefore, cpuAfter),
    dbCpuMsPerOp: ctx.analyze ? perOp(dbBefore, postgresCpuMs()) : undefined,
    loadAverage,
  }
}

/** User + system CPU time of a process so far, in milliseconds (from /proc/<pid>/stat). */
export function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name may hold spaces; the fields after its closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12])
    return (ticks / CLOCK_TICKS_PER_S) * 1000
  } catch {
    return undefined
  }
}

/** User + system CPU time so far of every process named postgres (the server and its backends). */
export function postgresCpuMs(): number {
  let total = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres')) continue
      total += cpuMs(Number(pid)) ?? 0
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total
}

// USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK).
const CLOCK_TICKS_PER_S = 100

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
    loadAverage: m.loadAverage,
    load: m.load,
    ...base,
  }
}

export const MEMORY_TARGET_MB = 200
