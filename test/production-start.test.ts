import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINE } from './helpers/harness.js'
import {
  createServiceStore,
  sleep,
  startServiceProcess,
  type ServiceProcess,
  type ServiceStore,
} from './helpers/service-process.js'

/**
 * The production start: `npm run build` compiles src/ to dist/, and both `npm run start:prod` and
 * `svcpay serve` run that compiled server with plain node (bin/svcpay.js loads no tsx for `serve`), which then serves the API as `npm start` does.
 */

const run = promisify(execFile)
const ROOT = new URL('..', import.meta.url).pathname
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

describe('the compiled production start', () => {
  let store: ServiceStore
  let proc: ServiceProcess | undefined

  beforeAll(async () => {
    const built = await run('npm', ['run', 'build'], { cwd: ROOT })
    expect(built.stdout).toContain('dist/src/server.js')
    store = await createServiceStore()
  }, 120_000)
  afterAll(async () => {
    await proc?.stop('SIGTERM')
    await store?.cleanup()
  })

  it('has start:prod run the compiled server with plain node', () => {
    expect(pkg.scripts['start:prod']).toBe('node dist/src/server.js')
    expect(pkg.scripts.build).toBe('tsx scripts/build.ts')
  })

  for (const [name, nodeArgs] of [
    ['npm run start:prod', ['dist/src/server.js']],
    ['svcpay serve', ['bin/svcpay.js', 'serve']],
  ] as const) {
    it(`${name} serves the API from the compiled dist/`, async () => {
      proc = await startServiceProcess({ ...store.env, NODE_OPTIONS: '' }, { nodeArgs: [...nodeArgs] })
      const health = await fetch(`${proc.base}/healthz`)
      expect(health.status).toBe(200)
      if (ENGINE === 'pglite' && name === 'npm run start:prod') {
        // The embedded default on a new DATA_DIR (this is its first start, initdb included) stays
        // light: under 400 MB resident once idle, where it held some 850 MB (docs/memory.md).
        await sleep(3_000)
        const status = readFileSync(`/proc/${proc.proc.pid}/status`, 'utf8')
        const rssMb = Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024
        const hwmMb = Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024
        expect(rssMb).toBeLessThan(400)
        expect(hwmMb).toBeLessThan(500)
      }
      // A real API answer through the compiled routes: the token exchange refuses a bad signature.
      const token = await fetch(`${proc.base}/api/v2/authentication/token-signature`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payload: 'key_x&payload={}', signature: '00' }),
      })
      expect([400, 401]).toContain(token.status)
      await proc.stop('SIGTERM')
      expect(await proc.exited).toBe(0)
      proc = undefined
    }, 120_000)
  }
})
