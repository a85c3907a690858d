import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type pino from 'pino'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/config.js'
import { createContainer, type Container } from '../../src/container.js'
import type { ResolveHost } from '../../src/events/http-deliver.js'
import { createLogger } from '../../src/logger.js'
import { createTestDb, type TestAccount } from './harness.js'

/**
 * The service in process, like test/helpers/harness.ts, with what the security suites need on top:
 * the logger's destination (to read what was logged), a resolver for webhook host names (so that no
 * test ever asks a real DNS server), and the raw inject for requests the JSON helper cannot make.
 * Test code only.
 */
export interface AppHarness {
  c: Container
  app: FastifyInstance
  adminToken: string
  /** Inject with an optional Bearer token; the body is sent as given when it is a string. */
  api(
    method: string,
    url: string,
    token: string | undefined,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; raw: string; headers: Record<string, any> }>
  admin(method: string, url: string, body?: unknown): Promise<any>
  createAccount(opts?: { name?: string; parentId?: string }): Promise<TestAccount>
  tokenFor(apiKey: string, apiSecret: string): Promise<string>
  close(): Promise<void>
}

export async function createAppHarness(
  opts: {
    env?: Record<string, string>
    logLevel?: string
    logDestination?: pino.DestinationStream
    resolveHost?: ResolveHost
  } = {},
): Promise<AppHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-app-'))
  const adminToken = 'adm_' + randomBytes(16).toString('hex')
  const { db, drop } = await createTestDb()
  const config = loadConfig({
    DATA_DIR: dataDir,
    MASTER_KEY: randomBytes(32).toString('hex'),
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: opts.logLevel ?? 'silent',
    PUBLIC_BASE_URL: 'http://localhost:8080',
    RATE_LIMITS_ENABLED: 'false',
    // The tests call the operator API with the admin token on every route, real rails or not (issue 32).
    ADMIN_TOKEN_ROUTES: 'all',
    ...opts.env,
  })
  // A resolver that knows no names unless the test gives one: nothing leaves this machine.
  const resolveHost: ResolveHost = opts.resolveHost ?? (async () => [])
  const c = await createContainer(config, createLogger(config.logLevel, opts.logDestination), {
    db,
    resolveHost,
  })
  const app = await buildApp(c)
  await app.ready()

  const api: AppHarness['api'] = async (method, url, token, body, headers = {}) => {
    const res = await app.inject({
      method: method as any,
      url,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined || method === 'PUT' ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
    let parsed: any
    try {
      parsed = res.body ? JSON.parse(res.body) : undefined
    } catch {
      parsed = res.body
    }
    return { status: res.statusCode, body: parsed, raw: res.body, headers: res.headers }
  }
  const admin: AppHarness['admin'] = async (method, url, body) => {
    const r = await api(method, url, adminToken, body ?? (method === 'GET' ? undefined : {}))
    if (r.status !== 200) throw new Error(`${method} ${url}: ${r.status} ${r.raw}`)
    return r.body
  }
  const tokenFor: AppHarness['tokenFor'] = async (apiKey, apiSecret) => {
    const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
    const signature = createHmac('sha256', apiSecret).update(`${apiKey}&payload=${body}`).digest('hex')
    const r = await api('POST', '/api/v2/authentication/token-signature', undefined, body, {
      'x-api-key': apiKey,
      'x-api-signature': signature,
    })
    if (r.status !== 200) throw new Error(`token exchange failed: ${r.status} ${r.raw}`)
    return r.body.accessToken as string
  }
  return {
    c,
    app,
    adminToken,
    api,
    admin,
    tokenFor,
    async createAccount(o = {}) {
      const r = await admin('POST', '/admin/accounts', {
        name: o.name ?? 'Test account',
        ...(o.parentId ? { parentId: o.parentId } : {}),
      })
      return {
        accountId: r.accountId,
        apiKey: r.apiKey,
        apiSecret: r.apiSecret,
        token: await tokenFor(r.apiKey, r.apiSecret),
      }
    },
    async close() {
      await app.close()
      await c.close()
      await db.close()
      await drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
