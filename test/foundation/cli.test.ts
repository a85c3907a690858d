import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDb, ENGINE } from '../helpers/harness.js'

/**
 * The real process: `src/server.ts` started as a child on a free loopback port with a fresh
 * DATA_DIR, and the `svcpay` command line run against it as an operator would.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const STARTUP_TIMEOUT_MS = 60_000

// Variables of the test process that must not leak into the service or the command line.
const SCRUBBED = [
  'DATABASE_URL',
  'ADMIN_TOKEN',
  'MASTER_KEY',
  'JWT_SECRET',
  'PORT',
  'HOST',
  'SVCPAY_URL',
  'DATA_DIR',
  'PUBLIC_BASE_URL',
  'RATES_PROVIDER',
  'ROLE',
  'RAILS',
]

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of SCRUBBED) delete env[name]
  return { ...env, ...extra }
}

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as { port: number }
  await new Promise((resolve) => srv.close(resolve))
  return port
}

interface RunningServer {
  proc: ChildProcess
  output(): string
  stop(): Promise<number | null>
}

async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: baseEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  proc.stdout!.on('data', (d) => (out += d))
  proc.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), STARTUP_TIMEOUT_MS)
    const check = () => {
      if (
        /svcpay is running at .*\n\n/.test(out) &&
        (!/A demo account was created/.test(out) || /Operator commands/.test(out))
      ) {
        clearTimeout(timer)
        resolve()
      }
    }
    proc.stdout!.on('data', check)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}:\n${out}`))
    })
  })
  return {
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM')
      return exited
    },
  }
}

interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

function runProcess(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, args, {
      cwd: ROOT,
      env: baseEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d) => (stdout += d))
    proc.stderr.on('data', (d) => (stderr += d))
    proc.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

const sign = (apiKey: string, secret: string, body: string) =>
  createHmac('sha256', secret).update(`${apiKey}&payload=${body}`).digest('hex')

describe('svcpay server and command line', () => {
  let tmp: string
  let dataDir: string
  let port: number
  let base: string
  let serverEnv: Record<string, string>
  let server: RunningServer | undefined
  let dropDb: (() => Promise<void>) | undefined
  let firstOutput = ''

  const cli = (args: string[], env: Record<string, string> = {}) =>
    runProcess(['--import', 'tsx', 'src/cli/main.ts', ...args], {
      SVCPAY_URL: base,
      DATA_DIR: dataDir,
      ...env,
    })
  const cliJson = async (args: string[]) => {
    const r = await cli(args)
    expect(r.code, r.stderr).toBe(0)
    return JSON.parse(r.stdout)
  }
  const token = async (apiKey: string, apiSecret: string) => {
    const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
    const res = await fetch(`${base}/api/v2/authentication/token-signature`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': apiKey,
        'x-api-signature': sign(apiKey, apiSecret, body),
      },
      body,
    })
    return { status: res.status, body: (await res.json()) as any }
  }
  const get = async (path: string, accessToken: string) => {
    const res = await fetch(base + path, { headers: { authorization: `Bearer ${accessToken}` } })
    const text = await res.text()
    return { status: res.status, body: JSON.parse(text), text }
  }

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'svcpay-cli-'))
    dataDir = join(tmp, 'data')
    port = await freePort()
    base = `http://127.0.0.1:${port}`
    serverEnv = { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
    if (ENGINE === 'postgres') {
      const t = await createTestDb()
      await t.db.close()
      serverEnv.DATABASE_URL = t.url!
      dropDb = t.drop
    }
    server = await startServer(serverEnv)
    firstOutput = server.output()
  }, STARTUP_TIMEOUT_MS + 10_000)

  afterAll(async () => {
    await server?.stop()
    await dropDb?.()
    if (tmp) rmSync(tmp, { recursive: true, force: true })
  })

  it('creates DATA_DIR with its secrets on the first start and prints demo credentials that work', async () => {
    expect(existsSync(dataDir)).toBe(true)
    for (const file of ['admin-token', 'master.key'])
      expect(statSync(join(dataDir, file)).mode & 0o777).toBe(0o600)
    // On the embedded default the database itself lives there too.
    if (ENGINE === 'pglite') expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true)
    expect(firstOutput).toContain(`svcpay is running at http://localhost:${port}`)
    expect(firstOutput).toContain('A demo account was created')
    const accountId = /accountId:\s+(acc_\w+)/.exec(firstOutput)?.[1]
    const apiKey = /API key:\s+(key_\w+)/.exec(firstOutput)?.[1]
    const apiSecret = /API secret:\s+(sk_[\w-]+)/.exec(firstOutput)?.[1]
    expect(accountId && apiKey && apiSecret, firstOutput).toBeTruthy()
    const t = await token(apiKey!, apiSecret!)
    expect(t.status).toBe(200)
    expect(t.body.accountId).toBe(accountId)
    const wallets = await get(`/api/v2/account/${accountId}/wallet/`, t.body.accessToken)
    expect(wallets.status).toBe(200)
    expect(wallets.body.data.map((w: any) => w.ccy)).toEqual(['BTC', 'USDT', 'VND', 'USD', 'CAD'])
  })

  const hasShellTools = ['bash', 'curl', 'openssl'].every(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0,
  )
  it.skipIf(!hasShellTools)('prints a token example that works when pasted into a shell, once', async () => {
    const lines = firstOutput.split('\n')
    const from = lines.findIndex((l) => l.trim().startsWith("BODY='"))
    const to = lines.findIndex((l, i) => i > from && l.includes('-d "$BODY"'))
    expect(from, firstOutput).toBeGreaterThan(0)
    expect(to).toBeGreaterThan(from)
    // The example names localhost; the server here listens on 127.0.0.1 only.
    const script = lines
      .slice(from, to + 1)
      .join('\n')
      .replaceAll(`http://localhost:${port}`, base)
    const first = spawnSync('bash', ['-c', script], { encoding: 'utf8' })
    expect(JSON.parse(first.stdout)).toMatchObject({
      accessToken: expect.any(String),
      expiredAt: expect.any(Number),
    })
    const second = spawnSync('bash', ['-c', script], { encoding: 'utf8' })
    expect(JSON.parse(second.stdout)).toMatchObject({ error: 'signature_reused' })
  })

  it('account create --json prints exactly one JSON object with working credentials', async () => {
    const r = await cli(['account', 'create', '--name', 'CLI Parent', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
    const created = JSON.parse(r.stdout)
    expect(Object.keys(created).sort()).toEqual(['accountId', 'apiKey', 'apiSecret'])
    expect(created).toEqual({
      accountId: expect.stringMatching(/^acc_/),
      apiKey: expect.stringMatching(/^key_/),
      apiSecret: expect.stringMatching(/^sk_/),
    })
    expect((await token(created.apiKey, created.apiSecret)).status).toBe(200)
  })

  it('creates sub-accounts, keys, tiers and sandbox funds, and revokes keys, with effects seen through the API', async () => {
    const parent = await cliJson(['account', 'create', '--name', 'CLI Parent 2', '--json'])
    const child = await cliJson([
      'account',
      'create',
      '--name',
      'CLI Child',
      '--parent',
      parent.accountId,
      '--json',
    ])
    const parentToken = (await token(parent.apiKey, parent.apiSecret)).body.accessToken
    expect((await get(`/api/v2/account/${child.accountId}`, parentToken)).body.data).toMatchObject({
      displayName: 'CLI Child',
      parentId: parent.accountId,
      tier: 'standard',
    })

    // Independent commands run side by side: each is a process start.
    const [premium, funded, keyCreated] = await Promise.all([
      cli(['account', 'tier', child.accountId, 'premium']),
      cli(['sandbox', 'fund', '--account', child.accountId, '--ccy', 'BTC', '--amount', '0.5']),
      cli(['key', 'create', '--account', child.accountId, '--json']),
    ])
    expect(premium.code, premium.stderr).toBe(0)
    expect(premium.stdout).toContain('premium')
    expect((await get(`/api/v2/account/${child.accountId}`, parentToken)).body.data.tier).toBe('premium')

    expect(funded.code, funded.stderr).toBe(0)
    const wallets = await get(`/api/v2/account/${child.accountId}/wallet/`, parentToken)
    expect(wallets.text).toContain('"ccy":"BTC","amount":0.5,"availableBalance":0.5')

    expect(keyCreated.code, keyCreated.stderr).toBe(0)
    const key = JSON.parse(keyCreated.stdout)
    expect(key).toEqual({
      accountId: child.accountId,
      apiKey: expect.stringMatching(/^key_/),
      apiSecret: expect.stringMatching(/^sk_/),
    })
    const keyToken = (await token(key.apiKey, key.apiSecret)).body.accessToken
    expect((await get(`/api/v2/account/${child.accountId}/wallet/`, keyToken)).status).toBe(200)
    const childToken = (await token(child.apiKey, child.apiSecret)).body.accessToken

    const revoked = await cli(['key', 'revoke', key.apiKey])
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(revoked.stdout).toContain('revoked')
    expect((await get(`/api/v2/account/${child.accountId}/wallet/`, keyToken)).status).toBe(401)
    expect((await token(key.apiKey, key.apiSecret)).status).toBe(401)
    expect((await get(`/api/v2/account/${child.accountId}/wallet/`, childToken)).status).toBe(200)

    const list = await cliJson(['account', 'list', '--json'])
    expect(list.map((a: any) => a.id)).toEqual(expect.arrayContaining([parent.accountId, child.accountId]))
    const human = await runProcess(['bin/svcpay.js', 'account', 'list'], {
      SVCPAY_URL: base,
      DATA_DIR: dataDir,
    })
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(
      new RegExp(`${child.accountId}\\s+premium\\s+${parent.accountId}\\s+CLI Child`),
    )
  })

  it('finds the admin token in ADMIN_TOKEN or DATA_DIR and says clearly what is wrong', async () => {
    const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()
    const elsewhere = join(tmp, 'empty')
    const [viaEnv, viaPort, noToken, wrongToken, unreachable, unknown, missingFlag] = await Promise.all([
      cli(['account', 'list', '--json'], { DATA_DIR: elsewhere, ADMIN_TOKEN: adminToken }),
      // An empty SVCPAY_URL counts as unset: the server is then looked for at localhost:$PORT.
      cli(['account', 'list', '--json'], { SVCPAY_URL: '', PORT: String(port) }),
      cli(['account', 'list'], { DATA_DIR: elsewhere }),
      cli(['account', 'list'], { ADMIN_TOKEN: 'adm_not_the_right_token' }),
      cli(['account', 'list'], { SVCPAY_URL: `http://127.0.0.1:${await freePort()}` }),
      cli(['frobnicate']),
      cli(['account', 'create']),
    ])
    expect(viaEnv.code, viaEnv.stderr).toBe(0)
    expect(Array.isArray(JSON.parse(viaEnv.stdout))).toBe(true)
    expect(viaPort.code, viaPort.stderr).toBe(0)
    expect(JSON.parse(viaPort.stdout)).toEqual(JSON.parse(viaEnv.stdout))
    expect(noToken).toMatchObject({ code: 1, stderr: expect.stringContaining('No admin token') })
    expect(wrongToken).toMatchObject({ code: 1, stderr: expect.stringContaining('unauthorized') })
    expect(unreachable).toMatchObject({ code: 1, stderr: expect.stringContaining('Cannot reach svcpay') })
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toContain('account create --name NAME')
    expect(missingFlag).toMatchObject({ code: 1, stderr: expect.stringContaining('--name is required') })
  })

  it('does not create another demo account on the next start', async () => {
    const before = await cliJson(['account', 'list', '--json'])
    expect(before.filter((a: any) => a.displayName === 'Demo account')).toHaveLength(1)
    expect(await server!.stop()).toBe(0)
    server = await startServer(serverEnv)
    expect(server.output()).toContain('svcpay is running at')
    expect(server.output()).not.toContain('A demo account was created')
    const after = await cliJson(['account', 'list', '--json'])
    expect(after.filter((a: any) => a.displayName === 'Demo account')).toHaveLength(1)
    expect(after).toHaveLength(before.length)
  })

  it('fails fast with a clear message on a configuration error', async () => {
    const env = { DATA_DIR: join(tmp, 'bad'), HOST: '127.0.0.1' }
    const [badPort, badRails] = await Promise.all([
      runProcess(['--import', 'tsx', 'src/server.ts'], { ...env, PORT: 'eighty' }),
      runProcess(['--import', 'tsx', 'src/server.ts'], { ...env, PORT: String(port), RAILS: 'production' }),
    ])
    expect(badPort.code).toBe(2)
    expect(badPort.stderr).toContain(
      'svcpay: configuration error: PORT: expected a whole number from 0 to 65535, got "eighty"',
    )
    expect(badRails.code).toBe(2)
    expect(badRails.stderr).toContain('configuration error: RAILS: expected one of sandbox, real')
    expect(existsSync(env.DATA_DIR)).toBe(false)
  })
})
