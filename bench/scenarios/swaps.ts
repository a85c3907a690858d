import { fromLoad, measure, type BenchContext } from '../lib/context.js'
import type { ScenarioResult } from '../lib/report.js'
import { api, createAccounts, fund, type BenchAccount } from '../lib/seed.js'
import type { ServerHandle } from '../lib/server.js'

/** One swap: 0.00001 BTC (1,000 sats) to USD, quoted then confirmed. */
export const SWAP_BODY = JSON.stringify({
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.00001', reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
})

/** Accounts for a swap load, each funded with `btc` BTC. */
export async function swapAccounts(
  server: ServerHandle,
  count: number,
  btc: string,
  name: string,
): Promise<BenchAccount[]> {
  const accounts = await createAccounts(server, count, { name })
  for (const a of accounts) await fund(server, a.accountId, 'BTC', btc)
  return accounts
}

/**
 * Swap create plus confirm in a loop on every connection. `accounts` decides the contention: one
 * account per connection (many wallets in parallel), or a single account (one hot wallet whose row
 * every hold and posting must lock in turn).
 */
export async function swapScenario(
  ctx: BenchContext,
  server: ServerHandle,
  input: { id: string; title: string; accounts: BenchAccount[] },
): Promise<ScenarioResult> {
  const m = await measure(
    ctx,
    server,
    {
      url: server.url,
      connections: ctx.settings.swapConnections,
      mode: 'swap',
      tokens: input.accounts.map((a) => a.token),
      swapBody: SWAP_BODY,
    },
    // Rows, index entries, WAL and commits per swap (on PostgreSQL; the embedded engine has no ctx.writes).
    { writes: true },
  )
  const r = fromLoad({ id: input.id, title: input.title, unit: 'swaps/s' }, m, 'op')
  r.details = {
    connections: ctx.settings.swapConnections,
    accounts: input.accounts.length,
    httpRequestsPerSec: m.load.requestsPerSec,
    httpLatencyMs: m.load.latencyMs,
    latencyIs: 'per swap: create sent to confirm answered',
  }
  return r
}

/** The books must still balance after the load: speed never at the price of the ledger. */
export async function checkBooks(server: ServerHandle): Promise<{ ok: boolean; report: unknown }> {
  const report = await api<{ ok: boolean }>(server, 'GET', '/admin/ledger/check', { admin: true })
  return { ok: report.ok, report }
}
