import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../helpers/harness.js'
import { startBankStandin, type BankStandin } from '../standins/bank.js'

/**
 * `GET /admin/rails` and `svcpay rails check`, the command line run as a process against the
 * service listening on a loopback port: on the sandbox configuration (ready), and on real rails
 * pointed at stand-ins that are down or refuse our credentials (not ready, exit code 1).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const API_KEY = 'partner-key-check'
const SIGNING = 'check-signing-secret-0123456789'
const NOTIFY = 'check-notify-secret-0123456789'

async function closedPort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as { port: number }
  await new Promise((resolve) => srv.close(resolve))
  return port
}

/** Run `svcpay ...` as an operator would, against `h` listening at `url`. */
async function cli(h: Harness, url: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['DATABASE_URL', 'RAILS', 'PORT', 'DATA_DIR', 'ADMIN_TOKEN', 'MASTER_KEY'])
    delete env[name]
  const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-cli-'))
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...env, SVCPAY_URL: url, ADMIN_TOKEN: h.adminToken, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  proc.stdout.on('data', (d) => (out += d))
  proc.stderr.on('data', (d) => (out += d))
  const code = await new Promise<number | null>((resolve) => proc.on('close', resolve))
  rmSync(dataDir, { recursive: true, force: true })
  return { code, out }
}

async function listen(h: Harness): Promise<string> {
  return h.app.listen({ port: 0, host: '127.0.0.1' })
}

const rails = async (h: Harness) => {
  const r = await h.app.inject({
    method: 'GET',
    url: '/admin/rails',
    headers: { authorization: `Bearer ${h.adminToken}` },
  })
  expect(r.statusCode, r.body).toBe(200)
  return r.json()
}

describe('rails check on the sandbox configuration', () => {
  let h: Harness
  let url: string
  beforeAll(async () => {
    h = await createHarness()
    url = await listen(h)
  }, 120_000)
  afterAll(async () => {
    await h?.close()
  })

  it('reports every rail as sandbox, ready; the command line exits 0', async () => {
    const result = await rails(h)
    expect(result.ok).toBe(true)
    expect(result.rails.map((e: any) => [e.rail, e.adapter, e.verdict])).toEqual([
      ['lightning', 'sandbox', 'sandbox'],
      ['onchain', 'sandbox', 'sandbox'],
      ['tron', 'sandbox', 'sandbox'],
      ['bank', 'sandbox', 'sandbox'],
      ['ethereum', 'sandbox', 'sandbox'],
    ])
    const { code, out } = await cli(h, url, ['rails', 'check'])
    expect(code, out).toBe(0)
    expect(out).toMatch(/^RAIL\s+ADAPTER\s+VERDICT/m)
    expect(out).toMatch(/^bank\s+sandbox\s+sandbox/m)
    expect(out).toMatch(/^ethereum\s+sandbox\s+sandbox\s+-\s+sandbox \(chain id 1337\)\s+yes\s+0 USDT$/m)
    expect(out).toContain('All rails ready.')
  }, 60_000)

  it('is for operators only', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/admin/rails' })
    expect(r.statusCode).toBe(401)
  })

  it('svcpay transactions stuck lists what is stuck (nothing, here)', async () => {
    const human = await cli(h, url, ['transactions', 'stuck'])
    expect([human.code, human.out.trim()]).toEqual([0, '(0 of 0 stuck)'])
    const json = await cli(h, url, ['transactions', 'stuck', '--limit', '5', '--json'])
    expect(json.code, json.out).toBe(0)
    expect(JSON.parse(json.out)).toEqual({ data: [], pagination: { page: 1, limit: 5, total: 0 } })
  }, 60_000)
})

describe('rails check on real rails that are down or misconfigured', () => {
  let h: Harness
  let url: string
  let bank: BankStandin
  beforeAll(async () => {
    bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING, balance: '120000000' })
    h = await createHarness({
      // A Lightning node that is not there.
      LIGHTNING: 'lnd',
      LND_REST_URL: `http://127.0.0.1:${await closedPort()}`,
      LND_MACAROON_HEX: '0201036c6e64',
      // A bank partner that does not know our key.
      VND: 'bank-http',
      BANK_PAYOUT_URL: bank.url,
      BANK_PAYOUT_API_KEY: 'not-our-key',
      BANK_PAYOUT_SIGNING_SECRET: SIGNING,
      BANK_PAYOUT_WEBHOOK_SECRET: NOTIFY,
      RAILS_CHECK_TIMEOUT_MS: '2000',
    })
    url = await listen(h)
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  it('names each problem; the command line exits 1, in a table and in JSON', async () => {
    const result = await rails(h)
    expect(result.ok).toBe(false)
    const byRail = Object.fromEntries(result.rails.map((e: any) => [e.rail, e]))
    expect(byRail.bank).toMatchObject({
      adapter: 'bank-http',
      verdict: 'problem',
      problems: ['the bank partner refused our credentials (HTTP 401: unauthorized)'],
      report: { reachable: true },
    })
    // Whether or not the LND adapter can check itself yet, an absent node is never ready.
    expect(['problem', 'not_checked']).toContain(byRail.lightning.verdict)
    expect(byRail.lightning.problems.length).toBeGreaterThan(0)
    expect([byRail.onchain.verdict, byRail.tron.verdict]).toEqual(['sandbox', 'sandbox'])
    // No secret in the report.
    expect(JSON.stringify(result)).not.toMatch(/not-our-key|secret-0123|0201036c6e64/)

    const table = await cli(h, url, ['rails', 'check'])
    expect(table.code, table.out).toBe(1)
    expect(table.out).toMatch(/^bank\s+bank-http\s+problem/m)
    expect(table.out).toContain('bank: the bank partner refused our credentials (HTTP 401: unauthorized)')
    expect(table.out).toContain('NOT READY')
    const json = await cli(h, url, ['rails', 'check', '--json'])
    expect(json.code, json.out).toBe(1)
    expect(JSON.parse(json.out)).toMatchObject({ ok: false, rails: expect.any(Array) })
  }, 60_000)

  it('a partner that hangs is a problem within the time limit; one that is down, too', async () => {
    bank.failNext('hang')
    const started = Date.now()
    const slow = (await rails(h)).rails.find((e: any) => e.rail === 'bank')
    expect(slow.problems).toEqual(['no answer within 2000 ms'])
    expect(Date.now() - started).toBeLessThan(10_000)
    await bank.stop()
    const down = (await rails(h)).rails.find((e: any) => e.rail === 'bank')
    expect(down.verdict).toBe('problem')
    expect(down.problems).toEqual(['the bank partner did not answer (bank_unreachable)'])
    expect(down.report.reachable).toBe(false)
    await bank.start()
  }, 30_000)
})
