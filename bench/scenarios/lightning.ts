import { join } from 'node:path'
import type { BenchContext } from '../lib/context.js'
import { cpuMs } from '../lib/context.js'
import { baseEnv, exited, spawnTs, tail } from '../lib/proc.js'
import type { ScenarioResult } from '../lib/report.js'
import { normalise, perOp } from '../lib/stats.js'
import { createAccounts } from '../lib/seed.js'
import type { ServerHandle } from '../lib/server.js'
import type { LnResult, LnSpec } from '../ln-client.js'

const BASE = { id: 'ln-receive-webhook', title: 'Lightning receive: pay to webhook delivered' }
/** Merchants paid at once, each with its own webhook (one worker of the client each). */
const LN_WORKERS = 8
export const PAY_TO_WEBHOOK_P99_TARGET_MS = 250

/**
 * Lightning receives created, confirmed and paid in the sandbox, each ending `completed` with its
 * signed webhook delivered to a receiver on loopback (bench/ln-client.ts, a separate process);
 * reports the time from pay to delivery. Pending, with the reason, while the service lacks a piece.
 */
export async function lightningScenario(ctx: BenchContext, server: ServerHandle): Promise<ScenarioResult> {
  const missing = await missingPieces(server)
  if (missing.length) return { ...BASE, status: 'pending', note: `not measured: ${missing.join('; ')}` }
  const accounts = await createAccounts(server, LN_WORKERS, { name: 'Merchant' })
  const spec: LnSpec = {
    url: server.url,
    tokens: accounts.map((a) => a.token),
    payments: ctx.settings.lightningPayments,
    amountBtc: '0.0001',
    webhookTimeoutMs: 10_000,
  }
  server.rss.reset()
  const cpuBefore = cpuMs(server.pid)
  const result = await runLnClient(spec, ctx.workDir)
  const cpuAfter = cpuMs(server.pid)
  const p99 = result.payToWebhookMs.p99
  const serverCpuMsPerOp =
    cpuBefore !== undefined && cpuAfter !== undefined
      ? perOp(cpuBefore, cpuAfter, result.completed)
      : undefined
  // The client's CPU per HTTP exchange (its requests and the webhooks it answered): the control.
  const clientCpuMsPerRequest =
    result.clientCpuMs !== undefined ? perOp(0, result.clientCpuMs, result.httpRequests, 4) : undefined
  return {
    ...BASE,
    status: 'ok',
    unit: 'receives/s',
    throughput: result.perSec,
    latencyMs: result.payToWebhookMs,
    errors: result.errors + result.badSignatures,
    peakRssMb: server.rss.peakMb(),
    ...(serverCpuMsPerOp !== undefined ? { serverCpuMsPerOp } : {}),
    ...(clientCpuMsPerRequest !== undefined ? { clientCpuMsPerRequest } : {}),
    serverCpuNorm: normalise(serverCpuMsPerOp, clientCpuMsPerRequest),
    target: {
      text: `pay-to-webhook p99 < ${PAY_TO_WEBHOOK_P99_TARGET_MS} ms`,
      met: result.completed > 0 && p99 < PAY_TO_WEBHOOK_P99_TARGET_MS,
    },
    note:
      `${result.completed} of ${result.payments} receives by ${LN_WORKERS} merchants at once; latency is pay to webhook ` +
      `(create to webhook: p50 ${result.receiveMs.p50} ms, p99 ${result.receiveMs.p99} ms); ${result.webhooksReceived} webhooks received`,
    details: { ...result, workers: LN_WORKERS },
  }
}

async function runLnClient(spec: LnSpec, logDir: string): Promise<LnResult> {
  const logFile = join(logDir, 'ln-client.log')
  const child = spawnTs('bench/ln-client.ts', {
    env: baseEnv(),
    logFile,
    args: [JSON.stringify(spec)],
    stdout: 'pipe',
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  const code = await exited(child)
  const line = out.trim().split('\n').pop() ?? ''
  if (code !== 0 || !line.startsWith('{'))
    throw new Error(`Lightning client failed (exit ${code}):\n${tail(logFile)}`)
  return JSON.parse(line) as LnResult
}

/** What the scenario needs that the service does not have yet. */
async function missingPieces(server: ServerHandle): Promise<string[]> {
  const missing: string[] = []
  if (!(await routeExists(server, 'POST', '/sandbox/lightning/pay')))
    missing.push('no POST /sandbox/lightning/pay')
  if (!(await routeExists(server, 'POST', '/api/v2/webhook'))) missing.push('no POST /api/v2/webhook')
  return missing
}

/** An unknown route answers 404 with `No route for <method> <path>`. */
async function routeExists(server: ServerHandle, method: string, path: string): Promise<boolean> {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  if (res.status !== 404) return true
  return !/No route for/.test(await res.text())
}
