import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createServiceStore,
  freePort,
  startServiceProcess,
  type ServiceStore,
} from './helpers/service-process.js'

/**
 * A start that fails says why in terms an operator can act on: the setting to look at, and for a
 * master key that cannot open the stored secrets, that this is what happened and what to do. Each
 * case starts the real server (`tsx src/server.ts`) as its own process, on the suite's engine.
 */

const ROOT = new URL('..', import.meta.url).pathname

interface Exit {
  code: number | null
  stderr: string
  stdout: string
}

/** Starts the server and waits for it to exit by itself (a failed start); kills it after 90 s. */
function startExpectingFailure(env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'error',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d) => (stdout += d))
    proc.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => proc.kill('SIGKILL'), 90_000)
    proc.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

describe('start-up failures name their setting', () => {
  let store: ServiceStore
  let scratch: string

  beforeAll(async () => {
    store = await createServiceStore()
    scratch = mkdtempSync(join(tmpdir(), 'svcpay-start-'))
  })
  afterAll(async () => {
    await store?.cleanup()
    if (scratch) rmSync(scratch, { recursive: true, force: true })
  })

  it('stops a start whose MASTER_KEY cannot open the stored secrets, saying so and what to do', async () => {
    // A first start seals the database's secrets (token signing key, node and wallet keys).
    const first = await startServiceProcess(store.env)
    await first.stop('SIGTERM')
    const otherKey = randomBytes(32).toString('hex')
    const run = await startExpectingFailure({
      ...store.env,
      MASTER_KEY: otherKey,
      PORT: String(await freePort()),
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(
      'svcpay: configuration error: MASTER_KEY does not open the secrets stored in',
    )
    expect(run.stderr).toContain('sealed under another master key')
    expect(run.stderr).toContain('What to do: start with the MASTER_KEY this database was first started with')
    expect(run.stderr).not.toContain('Unsupported state')
    // Neither key is ever printed.
    expect(run.stderr).not.toContain(otherKey)
    expect(run.stderr).not.toContain(store.env.MASTER_KEY!)
    // The right key still opens everything: nothing was lost by the refused start.
    const again = await startServiceProcess(store.env)
    expect((await fetch(`${again.base}/readyz`)).status).toBe(200)
    await again.stop('SIGTERM')
  }, 240_000)

  it('names PORT when the port is taken', async () => {
    const taken: Server = createServer()
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)),
    )
    try {
      const run = await startExpectingFailure({ ...store.env, PORT: String(port) })
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(`svcpay: configuration error: PORT: 127.0.0.1:${port} is already in use`)
    } finally {
      await new Promise((r) => taken.close(r))
    }
  }, 120_000)

  it('names DATABASE_URL when PostgreSQL cannot be reached, without its password', async () => {
    const closed = await freePort()
    const run = await startExpectingFailure({
      ...store.env,
      DATABASE_URL: `postgres://svcpay:hunter2-secret@127.0.0.1:${closed}/svcpay`,
      PORT: String(await freePort()),
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(
      `svcpay: configuration error: DATABASE_URL: cannot use the PostgreSQL database at svcpay@127.0.0.1:${closed}/svcpay`,
    )
    expect(run.stderr + run.stdout).not.toContain('hunter2-secret')
  }, 120_000)

  it('names DATA_DIR when the embedded database or the local secrets cannot be kept there', async () => {
    // A file where the directory should be.
    const notADir = join(scratch, 'not-a-directory')
    writeFileSync(notADir, 'x')
    const run = await startExpectingFailure({
      DATA_DIR: notADir,
      PORT: String(await freePort()),
      RATE_LIMITS_ENABLED: 'false',
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(
      `svcpay: configuration error: DATA_DIR: cannot keep the generated master key`,
    )
    expect(run.stderr).toContain(notADir)
  }, 120_000)
})
