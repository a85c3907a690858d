import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/config.js'
import { createContainer, type Container } from '../../src/container.js'
import type { Db } from '../../src/db/db.js'
import { createLogger } from '../../src/logger.js'

/** The service built in this process, with one funded account signed in: what the counting tools share. */
export interface InProcessService {
  c: Container
  app: FastifyInstance
  adminToken: string
  accountId: string
  /** The account's access token. */
  token: string
  /** A request through the app; anything but 200 throws. */
  call(method: string, url: string, token: string, body?: unknown): Promise<any>
  close(): Promise<void>
}

/**
 * Build the service on `db` (PGlite in the process when left out), with 1 BTC in a new account;
 * `env` adds settings (the limits, say).
 */
export async function startInProcess(db?: Db, env: Record<string, string> = {}): Promise<InProcessService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-inproc-'))
  const adminToken = 'adm_' + randomBytes(16).toString('hex')
  const config = loadConfig({
    DATA_DIR: dataDir,
    MASTER_KEY: randomBytes(32).toString('hex'),
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'silent',
    RATE_LIMITS_ENABLED: 'false',
    ...env,
  })
  const c = await createContainer(config, createLogger('silent'), db ? { db } : {})
  const app = await buildApp(c)
  await app.ready()
  const call = async (method: string, url: string, token: string, body?: unknown) => {
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    })
    if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return JSON.parse(res.body)
  }
  const close = async () => {
    await app.close()
    await c.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const a = await call('POST', '/admin/accounts', adminToken, { name: 'Bench' })
    const nonce = JSON.stringify({ nonce: '1' })
    const sig = createHmac('sha256', a.apiSecret).update(`${a.apiKey}&payload=${nonce}`).digest('hex')
    const tokenRes = await app.inject({
      method: 'POST',
      url: '/api/v2/authentication/token-signature',
      headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey, 'x-api-signature': sig },
      payload: nonce,
    })
    const token = JSON.parse(tokenRes.body).accessToken as string
    await call('POST', '/admin/sandbox/fund', adminToken, { accountId: a.accountId, ccy: 'BTC', amount: '1' })
    return { c, app, adminToken, accountId: a.accountId, token, call, close }
  } catch (err) {
    await close()
    throw err
  }
}
