import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { measure, type BenchContext } from '../lib/context.js'
import { baseEnv, exited, spawnTs, stopChild, tail, sampleRss } from '../lib/proc.js'
import { findPgbench, runPgbench } from '../lib/pgbench.js'
import type { ScenarioResult } from '../lib/report.js'

/** The bare Fastify route under the same load client settings as the single GET. */
export async function fastifyCeiling(ctx: BenchContext): Promise<ScenarioResult> {
  const logFile = join(ctx.workDir, 'fastify-bare.log')
  const child = spawnTs('bench/fastify-bare.ts', {
    env: { ...baseEnv(), NODE_ENV: 'production' },
    logFile,
    stdout: 'pipe',
  })
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = ''
      child.stdout!.on('data', (d) => {
        out += d
        const m = /listening (\d+)/.exec(out)
        if (m) resolve(Number(m[1]))
      })
      void exited(child).then(() => reject(new Error(`bare Fastify exited:\n${tail(logFile)}`)))
    })
    const rss = sampleRss(child.pid!)
    const m = await measure(
      ctx,
      { rss, pid: child.pid! },
      {
        url: `http://127.0.0.1:${port}`,
        connections: ctx.settings.httpConnections,
        mode: 'get',
        path: '/bare',
      },
    )
    rss.stop()
    return {
      id: 'ceiling-fastify',
      title: 'ceiling: bare Fastify GET',
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
      details: { connections: ctx.settings.httpConnections },
    }
  } finally {
    await stopChild(child)
  }
}

/** pgbench's TPC-B-like figure on the same PostgreSQL; skipped, with a clear line, without pgbench. */
export async function pgbenchCeiling(ctx: BenchContext): Promise<ScenarioResult> {
  const base = { id: 'ceiling-pgbench', title: 'ceiling: pgbench TPC-B-like' }
  const pgbench = await findPgbench()
  if (!pgbench) {
    const note =
      'pgbench not found (PATH, /usr/lib/postgresql/*/bin); install postgresql-contrib (or postgresql-client-<version>) to get the database ceiling'
    ctx.log(`pgbench: skipped: ${note}`)
    return { ...base, status: 'skipped', note }
  }
  const loadAverage = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])
  const r = await runPgbench(pgbench, {
    clients: ctx.settings.swapConnections,
    scale: ctx.settings.pgbenchScale,
    durationS: ctx.settings.durationS,
  })
  return {
    ...base,
    status: 'ok',
    unit: 'tps',
    throughput: r.tps,
    errors: 0,
    loadAverage,
    dbCpuMsPerOp: r.dbCpuMsPerTxn,
    dbBackendCpuMsPerOp: r.dbBackendCpuMsPerTxn,
    note: `pgbench -c ${r.clients} -j 2 -T ${r.durationS}, scale ${r.scale} (${pgbench}); average latency ${r.latencyAvgMs} ms`,
    details: { ...r, pgbench },
  }
}
