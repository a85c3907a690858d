import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SvcpayClient } from '@svcpay/sdk'
import { createTestDb, ENGINE } from './helpers/harness.js'

/**
 * The scripts in examples/, run as a user runs them (`tsx examples/x.ts`), against the real
 * service started as `npm start` starts it: its own process, a fresh data directory (or a fresh
 * PostgreSQL database when TEST_DATABASE_URL is set), the sandbox networks and the workers.
 */

const ROOT = new URL('..', import.meta.url).pathname
const EXAMPLE_TIMEOUT_MS = 60_000

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

/** Starts a TypeScript file with tsx, as its own process. */
function start(
  file: string,
  env: Record<string, string>,
): ChildProcess & { out: () => string; err: () => string } {
  const child = spawn(process.execPath, ['--conditions=svcpay-source', '--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...process.env, ...env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => (stdout += d))
  child.stderr!.on('data', (d) => (stderr += d))
  return Object.assign(child, { out: () => stdout, err: () => stderr })
}

/** Runs a script to its end. */
async function run(file: string, env: Record<string, string>): Promise<Run> {
  const child = start(file, env)
  const timer = setTimeout(() => child.kill('SIGKILL'), EXAMPLE_TIMEOUT_MS)
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
  clearTimeout(timer)
  return { code, stdout: child.out(), stderr: child.err() }
}

async function until<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 60_000,
) {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    const value = await check()
    if (value) return value
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('docs/sdk.md', () => {
  it('shows examples/receive-lightning.ts as it is, so the walk-through runs as the test runs it', () => {
    const doc = readFileSync(join(ROOT, 'docs/sdk.md'), 'utf8')
    const firstTsBlock = /```ts\n([\s\S]*?)```/.exec(doc)?.[1]
    expect(firstTsBlock).toBe(readFileSync(join(ROOT, 'examples/receive-lightning.ts'), 'utf8'))
    expect(firstTsBlock!.trimEnd().split('\n').length).toBeLessThan(30)
  })
})

describe('README.md', () => {
  it('shows examples/eth-payout.ts as it is, so the quick start runs as the test runs it', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    expect(readme).toContain('```ts\n' + readFileSync(join(ROOT, 'examples/eth-payout.ts'), 'utf8') + '```')
  })
})

describe('examples/ against the service in its own process', () => {
  let server: ReturnType<typeof start>
  let baseUrl: string
  let dataDir: string
  let dropDb: () => Promise<void> = async () => {}
  const adminToken = 'adm_' + randomBytes(16).toString('hex')

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    expect(res.status, `${method} ${path}`).toBe(200)
    return res.json()
  }

  /** A fresh account with a key, as `svcpay account create` makes one, in the examples' environment variables. */
  const account = async (name: string) => {
    const r = await admin('POST', '/admin/accounts', { name })
    return {
      SVCPAY_URL: baseUrl,
      SVCPAY_API_KEY: r.apiKey as string,
      SVCPAY_API_SECRET: r.apiSecret as string,
      accountId: r.accountId as string,
    }
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svcpay-examples-'))
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    const env: Record<string, string> = {
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: baseUrl,
      DATA_DIR: dataDir,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      SANDBOX_PAYOUT_DELAY_MS: '200',
    }
    if (ENGINE === 'postgres') {
      const db = await createTestDb()
      await db.db.close()
      env.DATABASE_URL = db.url!
      dropDb = db.drop
    }
    server = start('src/server.ts', env)
    await until('the service to be ready', async () => {
      if (server.exitCode !== null) throw new Error(`the service exited: ${server.err()}`)
      return (await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.status === 200
    })
  }, 90_000)

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM')
      await new Promise((resolve) => server.on('exit', resolve))
    }
    await dropDb()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('receive-lightning: an invoice, paid, announced by verified webhooks', async () => {
    const env = await account('Lightning example')
    const r = await run('examples/receive-lightning.ts', { ...env, WEBHOOK_PORT: String(await freePort()) })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^invoice: lnbcrt100u1\w+$/m)
    const states = [...r.stdout.matchAll(/^webhook: (\w+)$/gm)].map((m) => m[1])
    expect(states).toEqual(['quoted', 'srccreated', 'completed'])
    const client = new SvcpayClient({ baseUrl, apiKey: env.SVCPAY_API_KEY, apiSecret: env.SVCPAY_API_SECRET })
    expect((await client.walletFor('BTC'))?.amount).toBe('0.0001')
  })

  it('swap: a quote with its rate and fee, confirmed, and the wallets after', async () => {
    const env = await account('Swap example')
    const r = await run('examples/swap.ts', env)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const quote = /^quote: 0\.001 BTC -> (\d+(?:\.\d{1,6})?) USDT$/m.exec(r.stdout)
    expect(quote).not.toBeNull()
    expect(r.stdout).toMatch(/^rate \d+(\.\d+)? USDT\/BTC, fee 0\.000005 BTC, valid until \d{4}-/m)
    expect(r.stdout).toMatch(/^state: completed$/m)
    // 0.01 funded, less 0.001 and its 0.5% fee.
    expect(r.stdout).toMatch(/^BTC wallet: 0\.008995 available of 0\.008995$/m)
    expect(r.stdout).toContain(`USDT wallet: ${quote![1]} available of ${quote![1]}`)
  })

  it('onchain-send: refused below the minimum, then sent, broadcast and confirmed', async () => {
    const env = await account('On-chain example')
    const r = await run('examples/onchain-send.ts', env)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^refused: amount_below_minimum \(destReq\.amtRequested\)$/m)
    expect(r.stdout).toMatch(/^sending 0\.001 BTC, fees \d+(\.\d+)? \+ \d+(\.\d+)? BTC$/m)
    // The stream starts with the state at the time it opens: srccreated, or destsent if the worker was quicker.
    const states = [...r.stdout.matchAll(/^state: (\w+)/gm)].map((m) => m[1])
    expect(states.slice(-2)).toEqual(['destsent', 'completed'])
    expect(['srccreated,destsent,completed', 'destsent,completed']).toContain(states.join(','))
    expect(r.stdout).toMatch(/^txid: [0-9a-f]{64}$/m)
  })

  it('vnd-payout: bank and codes looked up, paid out and completed', async () => {
    const env = await account('VND payout example')
    const r = await run('examples/vnd-payout.ts', env)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^bank: Vietcombank \(970436\)$/m)
    expect(r.stdout).toMatch(/^paying 2000000 VND, fee \d+ VND$/m)
    expect(r.stdout).toMatch(/^state: completed {2}bankRef: \S+$/m)
  })

  it('vnd-payout: an account the sandbox bank rejects ends rejected, with its reason', async () => {
    const env = await account('VND payout rejected')
    const r = await run('examples/vnd-payout.ts', { ...env, BANK_ACCOUNT: '1234560000' })
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^state: rejected \w+/m)
  })

  it('eth-payout: USDT quoted with its gas fee, paid out over Ethereum and final, with its hash', async () => {
    const env = await account('Ethereum payout example')
    const r = await run('examples/eth-payout.ts', env)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(
      /^paying 25 USDT to 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed, fees 0\.05 \+ \d+(\.\d{1,6})? USDT$/m,
    )
    expect(r.stdout).toMatch(/^state: completed {2}txHash: 0x[0-9a-f]{64}$/m)
    const client = new SvcpayClient({ baseUrl, apiKey: env.SVCPAY_API_KEY, apiSecret: env.SVCPAY_API_SECRET })
    const fees = /fees 0\.05 \+ (\S+) USDT/.exec(r.stdout)![1]!
    // 50 funded, less 25, the 0.05 service fee and the network fee, to the micro-USDT.
    const left = 50_000_000 - 25_000_000 - 50_000 - Math.round(Number(fees) * 1e6)
    expect((await client.walletFor('USDT'))?.amount).toBe((left / 1e6).toString())
  })

  it('webhook-receiver: registers itself, logs verified events once, refuses forgeries', async () => {
    const env = await account('Webhook receiver example')
    const port = await freePort()
    const receiver = start('examples/webhook-receiver.ts', {
      ...env,
      PORT: String(port),
      WEBHOOK_SECRET: 'receiver-secret-0123456789',
    })
    try {
      await until('the receiver to register', () => receiver.out().includes('registered webhook'), 30_000)
      expect(receiver.out()).toContain(`listening on http://127.0.0.1:${port}/svcpay/webhook`)
      const client = new SvcpayClient({
        baseUrl,
        apiKey: env.SVCPAY_API_KEY,
        apiSecret: env.SVCPAY_API_SECRET,
      })
      await client.sandbox.fund({ ccy: 'BTC', amount: '0.01' })
      const quote = await client.createTransaction({
        sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001', reqDetails: {} },
        destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
      })
      await client.confirmTransaction(quote.txnId)
      await until(
        'the completed event',
        () => receiver.out().includes(`event: ${quote.txnId} completed [POST]`),
        30_000,
      )
      expect(receiver.out()).toContain(`event: ${quote.txnId} quoted [POST]`)

      const forged = await fetch(`http://127.0.0.1:${port}/svcpay/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svcpay-signature': '0'.repeat(64) },
        body: JSON.stringify({
          txnId: quote.txnId,
          extRefId: '',
          txnState: 'failed',
          msg: '',
          updatedAt: Date.now(),
        }),
      })
      expect(forged.status).toBe(401)
      await until('the rejection to be logged', () => receiver.out().includes('rejected:'))
      expect(receiver.out()).not.toContain(`${quote.txnId} failed`)
      expect((await fetch(`http://127.0.0.1:${port}/svcpay/webhook`)).status).toBe(405)
      expect(receiver.err()).toBe('')
    } finally {
      receiver.kill('SIGTERM')
    }
  })

  it('leaves the books balanced', async () => {
    const report = await admin('GET', '/admin/ledger/check')
    expect(report).toMatchObject({ ok: true })
  })
})
