import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { loadConfig } from '../../src/config/config.js'
import { createContainer, type Container } from '../../src/container.js'
import { buildApp } from '../../src/app.js'
import { createLogger } from '../../src/logger.js'
import { createPgliteDb, createPostgresDb, openSession, type Db } from '../../src/db/db.js'
import { parseDbUrl, withDatabase } from '../../src/db/hosts.js'
import { checkBooks } from '../../src/ledger/ledger.js'
import { asAccountId, type AccountId } from '../../src/shared/ids.js'

/**
 * The test harness: a real service on a real database. With TEST_DATABASE_URL set each harness
 * gets its own fresh PostgreSQL database; otherwise an embedded PGlite one.
 */
export const ENGINE: 'postgres' | 'pglite' = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'

export interface TestAccount {
  accountId: AccountId
  apiKey: string
  apiSecret: string
  token: string
}

export interface Harness {
  c: Container
  app: FastifyInstance
  dataDir: string
  adminToken: string
  createAccount(opts?: {
    name?: string
    parentId?: string
    tier?: 'standard' | 'premium'
  }): Promise<TestAccount>
  tokenFor(apiKey: string, apiSecret: string): Promise<string>
  fund(accountId: string, ccy: string, amount: string): Promise<void>
  /** Inject a request with a bearer token; returns status and parsed JSON. */
  api(
    method: string,
    url: string,
    token: string | undefined,
    body?: unknown,
  ): Promise<{ status: number; body: any; headers: Record<string, any> }>
  expectBooksBalanced(): Promise<void>
  close(): Promise<void>
}

export async function createTestDb(): Promise<{ db: Db; url?: string; drop(): Promise<void> }> {
  if (ENGINE === 'pglite') {
    const db = await createPgliteDb(undefined)
    return { db, drop: async () => {} }
  }
  // TEST_DATABASE_URL may name several hosts, as DATABASE_URL may (src/db/hosts.ts): the admin
  // session is opened on the one the URL's target_session_attrs picks.
  const base = process.env.TEST_DATABASE_URL!
  const name = `svcpay_t_${randomBytes(6).toString('hex')}`
  const adminSession = async () => (await openSession(parseDbUrl(base))).client
  const admin = await adminSession()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = withDatabase(base, name)
  const db = createPostgresDb(url, { poolMax: 10 })
  return {
    db,
    url,
    async drop() {
      const a = await adminSession()
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await a.end()
    },
  }
}

export async function createHarness(
  env: Record<string, string> = {},
  opts: { shareDbWith?: Harness } = {},
): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-test-'))
  const adminToken = opts.shareDbWith?.adminToken ?? 'adm_' + randomBytes(16).toString('hex')
  const shared = opts.shareDbWith
  const { db, drop } = shared ? { db: shared.c.db, drop: async () => {} } : await createTestDb()
  const config = loadConfig({
    DATA_DIR: dataDir,
    MASTER_KEY: shared?.c.config.masterKey ?? randomBytes(32).toString('hex'),
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'http://localhost:8080',
    // Limits are tested on their own; elsewhere they would only slow the suite down.
    RATE_LIMITS_ENABLED: 'false',
    // The tests call the operator API with the admin token on every route, real rails or not (issue 32).
    ADMIN_TOKEN_ROUTES: 'all',
    ...env,
  })
  const c = await createContainer(config, createLogger(config.logLevel), { db })
  const app = await buildApp(c)
  await app.ready()

  const api: Harness['api'] = async (method, url, token, body) => {
    const res = await app.inject({
      method: method as any,
      url,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined || method === 'PUT' ? { 'content-type': 'application/json' } : {}),
      },
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
    let parsed: any
    try {
      parsed = res.body ? JSON.parse(res.body) : undefined
    } catch {
      parsed = res.body
    }
    return { status: res.statusCode, body: parsed, headers: res.headers }
  }

  const tokenFor = async (apiKey: string, apiSecret: string) => {
    const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
    const signature = createHmac('sha256', apiSecret).update(`${apiKey}&payload=${body}`).digest('hex')
    const res = await app.inject({
      method: 'POST',
      url: '/api/v2/authentication/token-signature',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-api-signature': signature },
      payload: body,
    })
    if (res.statusCode !== 200) throw new Error(`token exchange failed: ${res.statusCode} ${res.body}`)
    return JSON.parse(res.body).accessToken as string
  }

  const adminCall = async (method: string, url: string, body?: unknown) => {
    const res = await app.inject({
      method: method as any,
      url,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    })
    if (res.statusCode !== 200) throw new Error(`${method} ${url} failed: ${res.statusCode} ${res.body}`)
    return JSON.parse(res.body)
  }

  return {
    c,
    app,
    dataDir,
    adminToken,
    api,
    tokenFor,
    async createAccount(opts = {}) {
      const r = await adminCall('POST', '/admin/accounts', {
        name: opts.name ?? 'Test account',
        ...(opts.parentId ? { parentId: opts.parentId } : {}),
        ...(opts.tier ? { tier: opts.tier } : {}),
      })
      return {
        accountId: asAccountId(r.accountId),
        apiKey: r.apiKey,
        apiSecret: r.apiSecret,
        token: await tokenFor(r.apiKey, r.apiSecret),
      }
    },
    async fund(accountId, ccy, amount) {
      await adminCall('POST', '/admin/sandbox/fund', { accountId, ccy, amount })
    },
    async expectBooksBalanced() {
      const report = await checkBooks(c.db)
      expect(report, JSON.stringify(report)).toMatchObject({
        ok: true,
        unbalancedEntries: 0,
        walletMismatches: 0,
        holdMismatches: 0,
      })
    },
    async close() {
      await app.close()
      await c.close()
      if (!shared) await db.close()
      await drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
