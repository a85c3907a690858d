import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from './server.js'

/**
 * The package as a user gets it: `npm pack` (which builds it through `prepack`), the tarball
 * installed into an empty project outside this repository, and programs run there by plain Node
 * against a live service: an ES module, a CommonJS script, and a TypeScript program type-checked
 * by the compiler against the packed declarations alone; then the packed ES module in Chromium
 * (skipped where there is none). Nothing here resolves into the workspace.
 */

const run = promisify(execFile)
const PKG = new URL('..', import.meta.url).pathname
const ROOT = new URL('../../..', import.meta.url).pathname
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
// Builds, packs and installs: npm is slow on a busy machine.
const SLOW_MS = 180_000
const CHROMIUM =
  process.env.CHROMIUM_PATH ??
  ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(existsSync)

/** The same calls in each program: token, account, sandbox funding, an exact amount, a typed error, a webhook. */
const PROGRAM_BODY = `
const svcpay = SvcpayClient.fromEnv()
const token = await svcpay.authenticate()
const account = await svcpay.getAccount()
const funded = await svcpay.sandbox.fund({ ccy: 'BTC', amount: '0.00012345' })
const wallets = await svcpay.listWallets()
let notFound = ''
try {
  await svcpay.getTransaction('txn_does_not_exist')
} catch (err) {
  if (err instanceof SvcpayNotFoundError) notFound = err.code
}
const secret = 'whsec_packed_sdk_test'
const body = JSON.stringify({ txnId: 't1', extRefId: '', txnState: 'completed', msg: '', updatedAt: 1 })
const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(body)))
const signature = Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('')
const event = await verifyWebhook(body, { 'x-svcpay-signature': signature }, secret)
let forged = false
try {
  await verifyWebhook(body, { 'x-svcpay-signature': '00'.repeat(32) }, secret)
} catch (err) {
  forged = err instanceof SvcpayWebhookError
}
console.log(JSON.stringify({
  accountId: token.accountId === account.id ? account.id : 'MISMATCH',
  funded: funded.amount,
  btc: wallets.find((w) => w.ccy === 'BTC')?.amount ?? null,
  minor: String(toMinor('0.00012345', 'BTC')),
  notFound,
  event: event.txnState,
  forged,
}))
`

const IMPORTS = `import { SvcpayClient, SvcpayNotFoundError, SvcpayWebhookError, toMinor, verifyWebhook } from '@svcpay/sdk'\n`

/** Lines that must not compile: the packed declarations carry real types, not `any`. */
const TYPE_CHECKS = `
import type { Transaction, Wallet, ErrorCode } from '@svcpay/sdk'
declare const wallet: Wallet
declare const bigWallet: Wallet<'minor'>
declare const txn: Transaction
const code: ErrorCode = 'not_found'
const minor: bigint = bigWallet.amount
const state: string = txn.txnState
// @ts-expect-error amounts are decimal strings by default, never numbers
const asNumber: number = wallet.amount
// @ts-expect-error a transaction has no such field
void txn.noSuchField
export { code, minor, state, asNumber }
`

describe('the packed SDK, installed from its tarball', () => {
  let server: TestServer
  let work: string
  let app: string
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'svcpay-sdk-pack-'))
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: PKG,
      env: cleanNpmEnv(),
    })
    const [tarball] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[]
    const filename = tarball!.filename
    app = join(work, 'app')
    mkdirSync(app)
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
    )
    // From the tarball alone: the package has no dependencies, so no registry is needed.
    await run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', join(work, filename)],
      { cwd: app, env: cleanNpmEnv() },
    )
    server = await startServer()
    env = {
      PATH: process.env.PATH,
      SVCPAY_URL: server.baseUrl,
      SVCPAY_API_KEY: server.account.apiKey,
      SVCPAY_API_SECRET: server.account.apiSecret,
    }
  }, SLOW_MS)

  afterAll(async () => {
    await server?.close()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('ships built JavaScript and declarations, and nothing that imports a node: module', () => {
    const installed = join(app, 'node_modules', '@svcpay', 'sdk')
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    expect(manifest.dependencies ?? {}).toEqual({})
    expect(readdirSync(join(installed, 'dist', 'esm')).sort()).toEqual(
      expect.arrayContaining(['index.js', 'index.d.ts', 'wire.d.ts']),
    )
    expect(readdirSync(installed)).not.toContain('src')
    for (const file of ['dist/esm/index.js', 'dist/cjs/index.js']) {
      const js = readFileSync(join(installed, file), 'utf8')
      expect(js).not.toMatch(/["']node:/)
      expect(js).not.toMatch(/require\(["'](?:crypto|buffer|fs|http|https)["']\)/)
    }
    for (const file of readdirSync(join(installed, 'dist', 'esm')).filter((f) => f.endsWith('.d.ts'))) {
      const text = readFileSync(join(installed, 'dist', 'esm', file), 'utf8')
      // Declarations name only each other: not the server's sources, not TypeBox.
      expect(text, file).not.toMatch(/from ['"](?!\.\/)/)
    }
  })

  it('runs a plain ES module against the live service', async () => {
    writeFileSync(join(app, 'program.mjs'), IMPORTS + PROGRAM_BODY)
    const { stdout } = await run(process.execPath, ['program.mjs'], { cwd: app, env })
    expect(JSON.parse(stdout)).toEqual(expected(server, '0.00012345'))
  })

  it('runs a CommonJS script (require) against the live service', async () => {
    writeFileSync(
      join(app, 'program.cjs'),
      `const { SvcpayClient } = require('@svcpay/sdk')\n` +
        `SvcpayClient.fromEnv().getAccount().then((a) => console.log(JSON.stringify({ id: a.id })))\n`,
    )
    const { stdout } = await run(process.execPath, ['program.cjs'], { cwd: app, env })
    expect(JSON.parse(stdout)).toEqual({ id: server.account.accountId })
  })

  it(
    'type-checks a TypeScript program against the packed declarations and runs it',
    async () => {
      writeFileSync(join(app, 'program.ts'), IMPORTS + PROGRAM_BODY + '\nexport {}\n')
      writeFileSync(join(app, 'checks.ts'), TYPE_CHECKS)
      writeFileSync(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2022', 'DOM'],
            types: [],
            strict: true,
            skipLibCheck: false,
            outDir: 'out',
          },
          files: ['program.ts', 'checks.ts'],
        }),
      )
      // tsc prints its diagnostics on stdout: show them when the check fails.
      const tsc = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: app, env }).catch(
        (err: { stdout?: string }) => ({ failed: err.stdout ?? String(err) }),
      )
      expect(tsc).not.toHaveProperty('failed')
      const { stdout } = await run(process.execPath, [join('out', 'program.js')], { cwd: app, env })
      // The second funding of the same account: the wallet holds both, exactly.
      expect(JSON.parse(stdout)).toEqual(expected(server, '0.0002469'))
    },
    SLOW_MS,
  )

  it.skipIf(!CHROMIUM)(
    'runs in a browser: the client through fetch and Web Crypto, and webhook verification of a Request',
    async () => {
      const sdkFile = join(app, 'node_modules', '@svcpay', 'sdk', 'dist', 'esm', 'index.js')
      const { origin, server: pageServer } = await servePage(sdkFile, server.baseUrl)
      const browser = await chromium.launch({ executablePath: CHROMIUM })
      try {
        const page = await browser.newPage()
        await page.goto(origin + '/')
        await page.waitForFunction(() => (window as unknown as { sdkReady?: boolean }).sdkReady === true)
        const result = await page.evaluate(
          async ({ apiKey, apiSecret }) => {
            const sdk = (window as any).sdk
            const client = new sdk.SvcpayClient({ baseUrl: location.origin, apiKey, apiSecret })
            const account = await client.getAccount()
            const wallets = await client.listWallets()
            const secret = 'whsec_browser'
            const body = JSON.stringify({
              txnId: 't2',
              extRefId: '',
              txnState: 'failed',
              msg: 'x',
              updatedAt: 2,
            })
            const key = await crypto.subtle.importKey(
              'raw',
              new TextEncoder().encode(secret),
              { name: 'HMAC', hash: 'SHA-256' },
              false,
              ['sign'],
            )
            const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(body)))
            const signature = Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('')
            const request = new Request(location.origin + '/hook', {
              method: 'POST',
              headers: { 'x-svc-signature': signature },
              body,
            })
            const event = await sdk.verifyWebhookRequest(request, secret)
            return {
              id: account.id,
              btc: wallets.find((w: any) => w.ccy === 'BTC')?.amount,
              state: event.txnState,
            }
          },
          { apiKey: server.account.apiKey, apiSecret: server.account.apiSecret },
        )
        expect(result).toEqual({ id: server.account.accountId, btc: '0.0002469', state: 'failed' })
      } finally {
        await browser.close()
        await new Promise((r) => pageServer.close(r))
      }
    },
    SLOW_MS,
  )
})

/**
 * A page and the packed ES module served from one loopback origin, which forwards every other
 * request to the live service: the browser runs the SDK as a web application would, same-origin.
 */
async function servePage(sdkFile: string, upstream: string): Promise<{ origin: string; server: Server }> {
  const page = `<!doctype html><meta charset="utf-8"><title>sdk</title>
<script type="module">
import * as sdk from '/sdk.js'
window.sdk = sdk
window.sdkReady = true
</script>`
  const server = createServer(async (req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(page)
      return
    }
    if (req.url === '/sdk.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(sdkFile))
      return
    }
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const headers: Record<string, string> = {}
    for (const name of ['authorization', 'content-type', 'x-api-key', 'x-api-signature'])
      if (typeof req.headers[name] === 'string') headers[name] = req.headers[name]
    const answer = await fetch(upstream + req.url, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    })
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
    res.end(Buffer.from(await answer.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

function expected(server: TestServer, balance: string) {
  return {
    accountId: server.account.accountId,
    funded: balance,
    btc: balance,
    minor: '12345',
    notFound: 'not_found',
    event: 'completed',
    forged: true,
  }
}

/** This process's environment without what `npm test` set for its own run (workspace, prefix, ...). */
function cleanNpmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('npm_')) env[k] = v
  return env
}
