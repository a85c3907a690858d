import { measure, type BenchContext } from '../lib/context.js'
import type { ScenarioResult } from '../lib/report.js'
import type { BenchAccount } from '../lib/seed.js'
import type { ServerHandle } from '../lib/server.js'

/** The cheap authenticated GET the limiter is measured on. */
export const LIMITER_PATH = '/api/v2/rate'

/**
 * Limits high enough that nothing is refused during a run, so that what is measured is the cost of
 * counting (the account's minute and second windows, in Redis), not of refusing.
 */
export const LIMITS_ON_ENV: Record<string, string> = {
  RATE_LIMITS_ENABLED: 'true',
  RATE_LIMIT_STANDARD_PER_MINUTE: '1000000',
  RATE_LIMIT_STANDARD_PER_SECOND: '1000000',
  RATE_LIMIT_PREMIUM_PER_MINUTE: '1000000',
  RATE_LIMIT_PREMIUM_PER_SECOND: '1000000',
}

/** One side of limiter-overhead: GET /api/v2/rate with the given server's limits. */
export async function limiterRun(
  ctx: BenchContext,
  server: ServerHandle,
  input: { on: boolean; account: BenchAccount },
): Promise<ScenarioResult> {
  const m = await measure(ctx, server, {
    url: server.url,
    connections: ctx.settings.httpConnections,
    mode: 'get',
    path: LIMITER_PATH,
    tokens: [input.account.token],
  })
  return {
    id: input.on ? 'limiter-on' : 'limiter-off',
    title: input.on ? 'on (Redis)' : 'off',
    status: 'ok',
    unit: 'req/s',
    throughput: m.load.requestsPerSec,
    latencyMs: m.load.latencyMs,
    errors: m.load.errors,
    peakRssMb: m.peakRssMb,
    serverCpuMsPerOp: m.serverCpuMsPerOp,
    clientCpuMsPerRequest: m.clientCpuMsPerRequest,
    serverCpuNorm: m.serverCpuNorm,
    loadAverage: m.loadAverage,
    load: m.load,
  }
}
