import { run } from '../../src/cli/main.js'
import type { Harness } from './harness.js'

/** Runs the command line (src/cli/main.ts) in this process: what it printed, and its exit code. */
export async function runCli(...args: string[]): Promise<{ out: string; code: number }> {
  const lines: string[] = []
  process.exitCode = undefined
  await run(args, (s) => lines.push(s))
  const code = Number(process.exitCode ?? 0)
  process.exitCode = undefined
  return { out: lines.join('\n'), code }
}

/**
 * Points the command line at a harness's server (SVCPAY_URL, ADMIN_TOKEN), listening on a free
 * loopback port; returns what puts the environment back as it was.
 */
export async function pointCliAt(h: Harness): Promise<() => void> {
  const saved = { SVCPAY_URL: process.env.SVCPAY_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN }
  process.env.SVCPAY_URL = await h.app.listen({ port: 0, host: '127.0.0.1' })
  process.env.ADMIN_TOKEN = h.adminToken
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}
