import { readFileSync } from 'node:fs'
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
  if (ctx.settings.warmupS > 0) await runLoad({ ...spec, durationS: ctx.settings.warmupS }, ctx.workDir)
  const loadAverage = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])
  const cpuBefore = server ? cpuMs(server.pid) : undefined
  const load = await runLoad({ ...spec, durationS: ctx.settings.durationS }, ctx.workDir)
  const cpuAfter = server ? cpuMs(server.pid) : undefined
  const done = load.ops ? load.ops.count : load.requests
  const serverCpuMsPerOp =
    cpuBefore !== undefined && cpuAfter !== undefined && done > 0
      ? Math.round(((cpuAfter - cpuBefore) / done) * 1000) / 1000
      : undefined
  return { load, peakRssMb: server?.rss.peakMb(), serverCpuMsPerOp, loadAverage }
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
    loadAverage: m.loadAverage,
    load: m.load,
    ...base,
  }
}

export const MEMORY_TARGET_MB = 200
