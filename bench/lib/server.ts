import { cpus } from 'node:os'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { baseEnv, exited, freePort, sampleRss, spawnTs, stopChild, tail, type RssSampler } from './proc.js'

/** A svcpay server started by the bench, in its own process. */
export interface ServerHandle {
  name: string
  url: string
  pid: number
  adminToken: string
  logFile: string
  rss: RssSampler
  /** Resident memory once started and idle (START_SETTLE_MS after /healthz first answered). */
  startRssMb: number
  stop(): Promise<void>
}

export interface ServerOptions {
  name: string
  /** Where the server's log goes (and its CPU profile, with `profileDir`). */
  logDir: string
  dataDir: string
  /** Variables on top of the bench defaults (DATABASE_URL, REDIS_URL, limits, ...). */
  env: Record<string, string>
  /** Write a V8 CPU profile (`node --cpu-prof`) into this directory when the server stops. */
  profileDir?: string
  /** The compiled entry point (see build.ts); without it, `src/server.ts` through tsx, as `npm start` runs. */
  entry?: string
}

/**
 * Starts svcpay as one production process (API and workers together), on a free loopback port, with
 * warn-level logging, and waits until /healthz answers.
 */
export async function startServer(opts: ServerOptions): Promise<ServerHandle> {
  const port = await freePort()
  const adminToken = 'adm_bench_' + randomBytes(16).toString('hex')
  const url = `http://127.0.0.1:${port}`
  const logFile = join(opts.logDir, `server-${opts.name}.log`)
  const env: Record<string, string> = {
    ...baseEnv(),
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: url,
    LOG_LEVEL: 'warn',
    ADMIN_TOKEN: adminToken,
    MASTER_KEY: randomBytes(32).toString('hex'),
    DATA_DIR: opts.dataDir,
    RATE_LIMITS_ENABLED: 'false',
    // The pool sized to the database's cores (twice as many connections), as docs/configuration.md
    // advises: 16 busy connections to a 2-core PostgreSQL only made its backends take turns.
    DB_POOL_MAX: String(2 * cpus().length),
    // Quotes outlive the longest run, so none expires under the load.
    QUOTE_TTL_S: '3600',
    ...opts.env,
  }
  const nodeArgs = opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`] : []
  const child = spawnTs(opts.entry ?? 'src/server.ts', { env, logFile, nodeArgs })
  const started = Date.now()
  const gone = exited(child).then(() => true)
  for (;;) {
    if (await Promise.race([gone, sleep(100).then(() => false)])) {
      throw new Error(`server ${opts.name} exited during start:\n${tail(logFile)}`)
    }
    try {
      const res = await fetch(`${url}/healthz`)
      if (res.ok) break
    } catch {
      // Not listening yet.
    }
    if (Date.now() - started > 60_000) {
      await stopChild(child)
      throw new Error(`server ${opts.name} did not become healthy in 60 s:\n${tail(logFile)}`)
    }
  }
  const rss = sampleRss(child.pid!)
  // Start-up work that outlasts the first /healthz (workers' first passes, the welcome) settles first.
  await sleep(START_SETTLE_MS)
  const startRssMb = rss.nowMb()
  return {
    name: opts.name,
    url,
    pid: child.pid!,
    adminToken,
    logFile,
    rss,
    startRssMb,
    async stop() {
      rss.stop()
      await stopChild(child)
    },
  }
}

/** How long a started server is left idle before its start-up memory is read. */
export const START_SETTLE_MS = 3_000

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
