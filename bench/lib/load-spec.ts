/**
 * What the bench asks of the load client (a separate process, so that generating load and serving
 * it are measured as two programs, as they would be in production), and what it answers.
 */
export interface LoadSpec {
  /** Base URL of the target, e.g. http://127.0.0.1:41234. */
  url: string
  connections: number
  durationS: number
  /**
   * `get`: the same GET on every connection, prebuilt once (the cheapest client work, so that it
   * can be compared with the bare Fastify ceiling under identical client settings).
   * `swap`: create a swap quote, then confirm it; one operation is the pair.
   */
  mode: 'get' | 'swap'
  /** For `get`: the path and query. */
  path?: string
  /** For `get`, instead of `path`: connection i asks for path i mod n, all through its life. */
  paths?: string[]
  /** Bearer tokens. `get` uses the first; `swap` gives connection i the token i mod n. */
  tokens?: string[]
  /** For `swap`: the JSON body of the create request. */
  swapBody?: string
}

export interface LatencyMs {
  p50: number
  p99: number
  max: number
  mean: number
}

export interface LoadResult {
  durationS: number
  /** HTTP requests that completed (any status). */
  requests: number
  requestsPerSec: number
  /** Per HTTP request. */
  latencyMs: LatencyMs
  /** For `swap`: create + confirm pairs that ended `completed`, timed from create sent to confirm answered. */
  ops?: { count: number; perSec: number; latencyMs: LatencyMs; failed: number }
  /** Transport errors and timeouts, plus non-2xx answers (`get`) or failed operations (`swap`). */
  errors: number
  statusCodes: Record<string, number>
  /** A few answers that were not what the scenario expected, to explain errors. */
  errorSamples: string[]
  /**
   * The load client's own CPU time (user + system, from /proc/self/stat) over the measured run, from
   * just before autocannon starts to just after it ends: the control the server's CPU is divided by.
   */
  clientCpuMs?: number
}

/** Percentiles of a list of millisecond figures (sorted in place). */
export function latencyOf(values: number[]): LatencyMs {
  if (values.length === 0) return { p50: 0, p99: 0, max: 0, mean: 0 }
  values.sort((a, b) => a - b)
  const at = (p: number) =>
    values[Math.min(values.length - 1, Math.max(0, Math.ceil(p * values.length) - 1))]!
  const sum = values.reduce((a, b) => a + b, 0)
  return {
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    max: round(values[values.length - 1]!),
    mean: round(sum / values.length),
  }
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits
