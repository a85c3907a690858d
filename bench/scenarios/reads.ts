import { fromLoad, measure, type BenchContext } from '../lib/context.js'
import { dbUrl } from '../lib/pg.js'
import type { ScenarioResult } from '../lib/report.js'
import { api, bulkTransactions, createAccounts, fund, type BenchAccount } from '../lib/seed.js'
import type { ServerHandle } from '../lib/server.js'
import { SWAP_BODY } from './swaps.js'

/** GET /api/v2/transaction/{txnId} of one completed swap, over and over. */
export async function getTxnScenario(
  ctx: BenchContext,
  server: ServerHandle,
  input: { id: string; title: string } = { id: 'get-txn', title: 'GET /api/v2/transaction/{txnId}' },
): Promise<ScenarioResult> {
  const [a] = await createAccounts(server, 1, { name: 'Reader' })
  await fund(server, a!.accountId, 'BTC', '1')
  // A completed swap for each connection, so that concurrent requests ask for different rows.
  const paths: string[] = []
  for (let i = 0; i < ctx.settings.httpConnections; i++) {
    const quote = await api<{ txnId: string }>(server, 'POST', '/api/v2/transaction', {
      token: a!.token,
      body: JSON.parse(SWAP_BODY),
    })
    await api(server, 'PUT', `/api/v2/transaction/${quote.txnId}/confirm`, { token: a!.token })
    paths.push(`/api/v2/transaction/${quote.txnId}`)
  }
  const m = await measure(ctx, server, {
    url: server.url,
    connections: ctx.settings.httpConnections,
    mode: 'get',
    paths,
    tokens: [a!.token],
  })
  return fromLoad({ ...input, details: { connections: ctx.settings.httpConnections } }, m)
}

/** The list query the list scenarios send: the default 30-day window with status and method filters. */
export const LIST_QUERY =
  '/api/v2/transaction?time=30d&txnStatuses=completed,failed&srcMethods=svcpay,lightning&limit=20'

export interface ListAccounts {
  big: BenchAccount
  small: BenchAccount
  seedMs: { big: number; small: number }
}

/** Two accounts with a history written in bulk: `bigListRows` and `smallListRows` transactions over two years. */
export async function seedListAccounts(
  ctx: BenchContext,
  server: ServerHandle,
  dbName: string,
): Promise<ListAccounts> {
  const [big, small] = await createAccounts(server, 2, { name: 'History' })
  const now = Date.now()
  const url = dbUrl(dbName)
  ctx.log(`seeding ${ctx.settings.bigListRows.toLocaleString('en-US')} transactions with generate_series ...`)
  const bigMs = await bulkTransactions(url, {
    accountId: big!.accountId,
    count: ctx.settings.bigListRows,
    spanDays: 730,
    tag: 'b',
    now,
  })
  const smallMs = await bulkTransactions(url, {
    accountId: small!.accountId,
    count: ctx.settings.smallListRows,
    spanDays: 730,
    tag: 's',
    now,
  })
  ctx.log(`seeded in ${(bigMs / 1000).toFixed(1)} s and ${(smallMs / 1000).toFixed(1)} s`)
  return { big: big!, small: small!, seedMs: { big: bigMs, small: smallMs } }
}

/** The list query for one account. */
export async function listScenario(
  ctx: BenchContext,
  server: ServerHandle,
  input: { id: string; title: string; account: BenchAccount; rows: number },
): Promise<ScenarioResult> {
  const sample = await api<{ data: unknown[]; pagination: { total: number } }>(server, 'GET', LIST_QUERY, {
    token: input.account.token,
  })
  const m = await measure(ctx, server, {
    url: server.url,
    connections: ctx.settings.httpConnections,
    mode: 'get',
    path: LIST_QUERY,
    tokens: [input.account.token],
  })
  return fromLoad(
    {
      id: input.id,
      title: input.title,
      details: {
        rows: input.rows,
        query: LIST_QUERY,
        pageRows: sample.data.length,
        total: sample.pagination.total,
        connections: ctx.settings.httpConnections,
      },
    },
    m,
  )
}
