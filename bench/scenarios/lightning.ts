import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { BenchContext } from '../lib/context.js'
import { ROOT } from '../lib/proc.js'
import type { ScenarioResult } from '../lib/report.js'
import type { ServerHandle } from '../lib/server.js'

const BASE = { id: 'ln-receive-webhook', title: 'Lightning receive: pay to webhook delivered' }

/**
 * Lightning receive created, confirmed and paid in the sandbox, ending `completed`, with the
 * webhook delivered to a local receiver; reports the time from pay to delivery. Reported as pending
 * while the Lightning flow or webhook delivery is not in the service yet.
 */
export async function lightningScenario(_ctx: BenchContext, server: ServerHandle): Promise<ScenarioResult> {
  const missing = await missingPieces(server)
  if (missing.length) return { ...BASE, status: 'pending', note: `not measured: ${missing.join('; ')}` }
  return { ...BASE, status: 'pending', note: 'not measured yet' }
}

/** What the scenario needs that the service does not have yet. */
async function missingPieces(server: ServerHandle): Promise<string[]> {
  const missing: string[] = []
  if (!existsSync(join(ROOT, 'src/transactions/lightning.ts')))
    missing.push('no Lightning flow (src/transactions/lightning.ts)')
  if (!(await routeExists(server, 'POST', '/sandbox/lightning/pay')))
    missing.push('no POST /sandbox/lightning/pay')
  if (!(await routeExists(server, 'POST', '/api/v2/webhook'))) missing.push('no POST /api/v2/webhook')
  return missing
}

/** An unknown route answers 404 with `No route for <method> <path>`. */
async function routeExists(server: ServerHandle, method: string, path: string): Promise<boolean> {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  if (res.status !== 404) return true
  return !/No route for/.test(await res.text())
}
