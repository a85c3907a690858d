import type { AddressInfo } from 'node:net'
import { createHarness, type Harness, type TestAccount } from '../../../test/helpers/harness.js'
import { startWorkers } from '../../../src/worker.js'

/** A real svcpay service listening on a loopback port, with one funded-on-demand account. */
export interface TestServer {
  h: Harness
  baseUrl: string
  account: TestAccount
  close(): Promise<void>
}

/**
 * Starts the app on 127.0.0.1 with a free port; with `workers`, the worker loops too (invoices
 * settle, webhooks are delivered), as `npm start` runs them.
 */
export async function startServer(
  env: Record<string, string> = {},
  opts: { shareDbWith?: Harness; workers?: boolean } = {},
): Promise<TestServer> {
  const h = await createHarness(env, opts)
  await h.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = h.app.server.address() as AddressInfo
  const workers = opts.workers ? startWorkers(h.c) : undefined
  const account = await h.createAccount({ name: 'SDK test' })
  return {
    h,
    baseUrl: `http://127.0.0.1:${port}`,
    account,
    async close() {
      await workers?.stop()
      await h.close()
    },
  }
}

/** The platform's fetch, counting what went out and what came back (it changes nothing). */
export function countingFetch() {
  const calls: { method: string; path: string; status: number }[] = []
  const fetchFn: typeof fetch = async (input, init) => {
    const res = await fetch(input, init)
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url)
    calls.push({ method: init?.method ?? 'GET', path: url.pathname, status: res.status })
    return res
  }
  return { fetch: fetchFn, calls }
}
