import { spawn, type ChildProcess } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

import { createTestDb, ENGINE } from '../../test/helpers/harness.js'
import { startReceiver, type Receiver } from '../../test/helpers/webhooks.js'

const ROOT = resolve(import.meta.dirname, '../..')
const SECRET = 'restart-secret-0123456789'
const STARTUP_TIMEOUT_MS = 60_000

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((done) => srv.listen(0, '127.0.0.1', done))
  const { port } = srv.address() as { port: number }
  await new Promise((done) => srv.close(done))
  return port
}

interface Server {
  proc: ChildProcess
  output(): string
  exited: Promise<unknown>
}

/** The real service as its own process (`tsx src/server.ts`), ready once /readyz answers 200. */
async function startServer(env: Record<string, string>, port: number): Promise<Server> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  proc.stdout!.on('data', (d) => (out += d))
  proc.stderr!.on('data', (d) => (out += d))
  const exited = new Promise((done) => proc.on('exit', done))
  const deadline = Date.now() + STARTUP_TIMEOUT_MS
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}:\n${out}`)
    if (Date.now() > deadline) throw new Error(`server did not start:\n${out}`)
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    )
    if (ready) return { proc, output: () => out, exited }
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('webhook delivery across a crash of the process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-restart-'))
  const cleanups: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
    rmSync(dataDir, { recursive: true, force: true })
  })

  it(
    'delivers events committed before a SIGKILL once the process is back',
    { timeout: 180_000 },
    async () => {
      const port = await freePort()
      const adminToken = 'adm_' + randomBytes(16).toString('hex')
      const env: Record<string, string> = {
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        DATA_DIR: dataDir,
        MASTER_KEY: randomBytes(32).toString('hex'),
        ADMIN_TOKEN: adminToken,
        LOG_LEVEL: 'error',
        RATE_LIMITS_ENABLED: 'false',
        QUOTE_TTL_S: '600',
        // Retries start after 10-20 ms instead of 2.5-5 s, so that the test does not wait for the schedule.
        WEBHOOK_BACKOFF_BASE_MS: '20',
      }
      if (ENGINE === 'postgres') {
        const { db, url, drop } = await createTestDb()
        await db.close()
        env.DATABASE_URL = url!
        cleanups.push(drop)
      }

      // The receiver's port is known, but nothing listens on it yet: every attempt is refused.
      const receiverPort = await freePort()
      let server = await startServer(env, port)
      cleanups.push(async () => {
        server.proc.kill('SIGKILL')
        await server.exited
      })
      const base = `http://127.0.0.1:${port}`
      const admin = async (path: string, body: unknown) => {
        const r = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
        expect(r.status, await r.clone().text()).toBe(200)
        return r.json()
      }
      const account = await admin('/admin/accounts', { name: 'Restart' })
      await admin('/admin/sandbox/fund', { accountId: account.accountId, ccy: 'BTC', amount: '0.01' })
      const tokenBody = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
      const signature = createHmac('sha256', account.apiSecret)
        .update(`${account.apiKey}&payload=${tokenBody}`)
        .digest('hex')
      const token = (
        await fetch(`${base}/api/v2/authentication/token-signature`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': account.apiKey,
            'x-api-signature': signature,
          },
          body: tokenBody,
        }).then((r) => r.json())
      ).accessToken as string
      const api = async (method: string, path: string, body?: unknown) => {
        const r = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
        return { status: r.status, body: r.status === 204 ? undefined : await r.json() }
      }

      const hook = await api('POST', '/api/v2/webhook', {
        callback: `http://127.0.0.1:${receiverPort}/hook`,
        secret: SECRET,
      })
      expect(hook.status).toBe(200)
      const swap = {
        sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
        destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
      }
      const first = await api('POST', '/api/v2/transaction', swap)
      expect((await api('PUT', `/api/v2/transaction/${first.body.txnId}/confirm`)).body.txnState).toBe(
        'completed',
      )
      const second = await api('POST', '/api/v2/transaction', { ...swap, extRefId: 'after-crash' })
      expect(second.status).toBe(200)

      // The worker has tried and been refused, so the deliveries are pending with a retry scheduled.
      let pending: any[] = []
      for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
        pending = (await api('GET', `/api/v2/webhook/${hook.body.id}/deliveries`)).body.data
        if (pending.length === 3 && pending.every((d: any) => d.lastError === 'connection_refused')) break
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(pending.map((d: any) => [d.status, d.lastError])).toEqual(
        Array(3).fill(['pending', 'connection_refused']),
      )

      server.proc.kill('SIGKILL')
      await server.exited

      const receiver: Receiver = await startReceiver(SECRET, { port: receiverPort })
      cleanups.push(() => receiver.close())
      server = await startServer(env, port)

      const got = await receiver.waitFor(3, 30_000)
      expect(got.every((r) => r.signatureValid && r.method === 'POST')).toBe(true)
      expect(got.map((r) => `${r.body.txnId}:${r.body.txnState}`).sort()).toEqual(
        [`${first.body.txnId}:quoted`, `${first.body.txnId}:completed`, `${second.body.txnId}:quoted`].sort(),
      )
      expect(got.find((r) => r.body.txnId === second.body.txnId)!.body.extRefId).toBe('after-crash')
      // Each was tried before the crash, so none goes out as attempt 1 now.
      expect(got.every((r) => Number(r.headers['x-svcpay-delivery-attempt']) >= 2)).toBe(true)
      for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
        pending = (await api('GET', `/api/v2/webhook/${hook.body.id}/deliveries`)).body.data
        if (pending.every((d: any) => d.status === 'succeeded')) break
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(pending.map((d: any) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded'])
      server.proc.kill('SIGTERM')
      await server.exited
    },
  )
})
