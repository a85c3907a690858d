import { spawn, type ChildProcess } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createTestDb, ENGINE } from './harness.js'

/**
 * The real service as child processes (`tsx src/server.ts`), for the suites that kill, restart and
 * multiply it: crash recovery, several instances, dependencies going away. Test code only.
 */

const ROOT = resolve(import.meta.dirname, '../..')
const STARTUP_TIMEOUT_MS = 90_000

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((done) => srv.listen(0, '127.0.0.1', done))
  const { port } = srv.address() as { port: number }
  await new Promise((done) => srv.close(done))
  return port
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Where one test's service keeps its state: a temp DATA_DIR (PGlite) or a fresh PostgreSQL database. */
export interface ServiceStore {
  /** The environment every process of this service shares (database, secrets, admin token). */
  env: Record<string, string>
  adminToken: string
  dataDir: string
  /** The PostgreSQL URL of the database, on the PostgreSQL engine. */
  databaseUrl: string | undefined
  cleanup(): Promise<void>
}

/**
 * A fresh store for one test's service. `databaseUrl` puts it in that (empty) PostgreSQL database
 * instead, whatever the engine of the run, and leaves the database to its owner.
 */
export async function createServiceStore(
  extra: Record<string, string> = {},
  opts: { databaseUrl?: string } = {},
): Promise<ServiceStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-rel-'))
  const adminToken = 'adm_' + randomBytes(16).toString('hex')
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    MASTER_KEY: randomBytes(32).toString('hex'),
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'error',
    RATE_LIMITS_ENABLED: 'false',
    // The tests call the operator API with the admin token on every route, real rails or not (issue 32).
    ADMIN_TOKEN_ROUTES: 'all',
    ...extra,
  }
  let drop = async () => {}
  let databaseUrl: string | undefined
  if (opts.databaseUrl) {
    databaseUrl = opts.databaseUrl
    env.DATABASE_URL = databaseUrl
  } else if (ENGINE === 'postgres') {
    const made = await createTestDb()
    await made.db.close()
    databaseUrl = made.url!
    env.DATABASE_URL = databaseUrl
    drop = made.drop
  }
  return {
    env,
    adminToken,
    dataDir,
    databaseUrl,
    async cleanup() {
      await drop().catch(() => {})
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

export interface ServiceProcess {
  proc: ChildProcess
  /** The HTTP port, when the process serves the API. */
  port: number | undefined
  base: string
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string
  exited: Promise<number | null>
  /** Sends `signal` and waits for the process to be gone. */
  stop(signal?: NodeJS.Signals): Promise<void>
}

/**
 * Starts one process of the service. An API process (ROLE all or api) is ready once /readyz answers
 * 200; a worker-only process once it has run for `workerSettleMs` without exiting.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  opts: {
    port?: number
    role?: 'all' | 'api' | 'worker'
    workerSettleMs?: number
    /** Node's arguments; `--import tsx src/server.ts` (as `npm start`) unless given. */
    nodeArgs?: string[]
  } = {},
): Promise<ServiceProcess> {
  const role = opts.role ?? 'all'
  const port = role === 'worker' ? undefined : (opts.port ?? (await freePort()))
  const proc = spawn(process.execPath, opts.nodeArgs ?? ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      ROLE: role,
      ...(port === undefined ? {} : { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  proc.stdout!.on('data', (d) => (out += d))
  proc.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((done) => proc.on('exit', (code) => done(code)))
  const base = port === undefined ? '' : `http://127.0.0.1:${port}`
  const handle: ServiceProcess = {
    proc,
    port,
    base,
    output: () => out,
    exited,
    async stop(signal = 'SIGKILL') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal)
      await exited
    },
  }
  const deadline = Date.now() + STARTUP_TIMEOUT_MS
  if (role === 'worker') {
    await sleep(opts.workerSettleMs ?? 3_000)
    if (proc.exitCode !== null) throw new Error(`worker exited with ${proc.exitCode}:\n${out}`)
    return handle
  }
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}:\n${out}`)
    if (Date.now() > deadline) {
      await handle.stop()
      throw new Error(`server did not start:\n${out}`)
    }
    const ready = await fetch(`${base}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    )
    if (ready) return handle
    await sleep(150)
  }
}

export interface RemoteAccount {
  accountId: string
  apiKey: string
  apiSecret: string
  token: string
}

export interface HttpResult {
  status: number
  body: any
  headers: Headers
}

/** A small client of a running service over real HTTP. Network failures reject (the caller decides). */
export interface ServiceClient {
  base: string
  call(method: string, path: string, token?: string, body?: unknown): Promise<HttpResult>
  admin(method: string, path: string, body?: unknown): Promise<any>
  createAccount(name: string, tier?: 'standard' | 'premium'): Promise<RemoteAccount>
  token(apiKey: string, apiSecret: string): Promise<string>
}

export function serviceClient(base: string | (() => string), adminToken: string): ServiceClient {
  const baseOf = typeof base === 'string' ? () => base : base
  const call: ServiceClient['call'] = async (method, path, token, body) => {
    const r = await fetch(`${baseOf()}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined || method === 'PUT' ? { 'content-type': 'application/json' } : {}),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      signal: AbortSignal.timeout(20_000),
    })
    const text = await r.text()
    let parsed: any = text
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      // Left as text: the caller's assertions say what was expected.
    }
    return { status: r.status, body: parsed, headers: r.headers }
  }
  const client: ServiceClient = {
    get base() {
      return baseOf()
    },
    call,
    async admin(method, path, body) {
      const r = await call(method, path, adminToken, body ?? (method === 'GET' ? undefined : {}))
      if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`)
      return r.body
    },
    async token(apiKey, apiSecret) {
      const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
      const signature = createHmac('sha256', apiSecret).update(`${apiKey}&payload=${body}`).digest('hex')
      const r = await fetch(`${baseOf()}/api/v2/authentication/token-signature`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-api-signature': signature },
        body,
      })
      const json = (await r.json()) as any
      if (r.status !== 200) throw new Error(`token exchange: ${r.status} ${JSON.stringify(json)}`)
      return json.accessToken as string
    },
    async createAccount(name, tier) {
      const r = await client.admin('POST', '/admin/accounts', { name, ...(tier ? { tier } : {}) })
      return {
        accountId: r.accountId,
        apiKey: r.apiKey,
        apiSecret: r.apiSecret,
        token: await client.token(r.apiKey, r.apiSecret),
      }
    },
  }
  return client
}
