import { createHmac, randomBytes } from 'node:crypto'
import type { ServerHandle } from './server.js'
import { withClient } from './pg.js'

/** An account the bench made through the admin API, with a live access token. */
export interface BenchAccount {
  accountId: string
  apiKey: string
  apiSecret: string
  token: string
}

/** One JSON request to the server; throws on a non-2xx answer, naming it. */
export async function api<T = any>(
  server: ServerHandle,
  method: string,
  path: string,
  opts: { token?: string; admin?: boolean; body?: unknown } = {},
): Promise<T> {
  const bearer = opts.admin ? server.adminToken : opts.token
  const res = await fetch(server.url + path, {
    method,
    headers: {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(opts.body !== undefined || method === 'PUT' ? { 'content-type': 'application/json' } : {}),
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return (text ? JSON.parse(text) : undefined) as T
}

/** The token exchange of the API: an HMAC over `<key>&payload=<body>`, one signature per token. */
export async function tokenFor(server: ServerHandle, apiKey: string, apiSecret: string): Promise<string> {
  const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
  const signature = createHmac('sha256', apiSecret).update(`${apiKey}&payload=${body}`).digest('hex')
  const res = await fetch(`${server.url}/api/v2/authentication/token-signature`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-api-signature': signature },
    body,
  })
  if (!res.ok) throw new Error(`token exchange: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { accessToken: string }).accessToken
}

/** Creates `count` accounts with keys and tokens, a few at a time. */
export async function createAccounts(
  server: ServerHandle,
  count: number,
  opts: { name: string; tier?: 'standard' | 'premium' },
): Promise<BenchAccount[]> {
  const out: BenchAccount[] = []
  const one = async (i: number) => {
    const a = await api<{ accountId: string; apiKey: string; apiSecret: string }>(
      server,
      'POST',
      '/admin/accounts',
      {
        admin: true,
        body: { name: `${opts.name} ${i + 1}`, tier: opts.tier ?? 'premium', withKey: true },
      },
    )
    out[i] = { ...a, token: await tokenFor(server, a.apiKey, a.apiSecret) }
  }
  for (let i = 0; i < count; i += 8)
    await Promise.all(Array.from({ length: Math.min(8, count - i) }, (_, k) => one(i + k)))
  return out
}

/** Credits test money through the sandbox funding endpoint of the admin API. */
export async function fund(
  server: ServerHandle,
  accountId: string,
  ccy: string,
  amount: string,
): Promise<void> {
  await api(server, 'POST', '/admin/sandbox/fund', { admin: true, body: { accountId, ccy, amount } })
}

/**
 * Writes `count` historical transactions of one account straight into the transactions table with
 * generate_series: spread evenly over the last `spanDays` days and written oldest first, as a history
 * grows (so rows of one period sit together on disk), with a mix of methods and final states like
 * a busy merchant's history. They are settled history only (no holds, no ledger
 * rows, nothing for the worker), which is all the list query reads. Ids are `txn_<tag><n>`.
 */
export async function bulkTransactions(
  url: string,
  input: { accountId: string; count: number; spanDays: number; tag: string; now: number },
): Promise<number> {
  if (!/^[a-z]$/.test(input.tag)) throw new Error('tag must be one letter')
  const started = Date.now()
  await withClient(url, async (c) => {
    // A bulk import: the per-row trigger that keeps the per-day counts (migration 010) is off for this
    // session, and the account's counts are recounted in one pass afterwards.
    await c.query(`SET session_replication_role = replica`)
    await c.query('SELECT setseed(0.42)')
    await c.query(
      `INSERT INTO transactions (
         id, account_id, request_hash, kind, state, msg, src_ccy, src_method, src_amount, src_fee,
         src_settled, src_details, src_created_at, src_updated_at, dest_ccy, dest_method, dest_amount,
         dest_settled, dest_details, dest_created_at, dest_updated_at, fx_rate, expires_at, created_at, updated_at)
       SELECT 'txn_' || $3::text || lpad(x.g::text, 24, '0'), $1, md5(x.g::text), m.kind, s.state, s.msg,
              m.src_ccy, m.src_method, x.amount, x.amount / 200, CASE WHEN s.state = 'completed' THEN x.amount END,
              '{}', x.t, x.t + 1500, m.dest_ccy, m.dest_method, x.amount * m.fx,
              CASE WHEN s.state = 'completed' THEN x.amount * m.fx END, '{}', x.t, x.t + 1500,
              m.fx::text, x.t + 120000, x.t, x.t + 1500
         FROM (SELECT g, random() AS rm, random() AS rs,
                      (1000 + floor(random() * 5000000))::int8 AS amount,
                      ($4::int8 - $5::int8 + floor((g - 1 + random()) * $5::int8 / $2::int))::int8 AS t
                 FROM generate_series(1, $2::int) g) x
         JOIN (VALUES
                ('ln_receive', 'lightning', 'BTC', 'svcpay', 'BTC', 1, 0.00, 0.30),
                ('ln_send', 'svcpay', 'BTC', 'lightning', 'BTC', 1, 0.30, 0.50),
                ('swap', 'svcpay', 'BTC', 'svcpay', 'VND', 24, 0.50, 0.62),
                ('swap', 'svcpay', 'BTC', 'svcpay', 'USD', 1, 0.62, 0.70),
                ('swap', 'svcpay', 'USDT', 'svcpay', 'BTC', 1, 0.70, 0.75),
                ('onchain_receive', 'on-chain', 'BTC', 'svcpay', 'BTC', 1, 0.75, 0.85),
                ('onchain_send', 'svcpay', 'BTC', 'on-chain', 'BTC', 1, 0.85, 0.91),
                ('tron_payout', 'svcpay', 'USDT', 'tron', 'USDT', 1, 0.91, 0.96),
                ('vnd_payout', 'svcpay', 'VND', 'vnd-instant', 'VND', 1, 0.96, 1.01)
              ) m(kind, src_method, src_ccy, dest_method, dest_ccy, fx, lo, hi)
           ON x.rm >= m.lo AND x.rm < m.hi
         JOIN (VALUES
                ('completed', '', 0.00, 0.82),
                ('expired', 'quote_expired', 0.82, 0.91),
                ('failed', 'insufficient_funds', 0.91, 0.96),
                ('usercanceled', 'user_canceled', 0.96, 0.99),
                ('rejected', 'rejected', 0.99, 1.01)
              ) s(state, msg, lo, hi)
           ON x.rs >= s.lo AND x.rs < s.hi`,
      [input.accountId, input.count, input.tag, input.now, input.spanDays * 86_400_000],
    )
    await c.query(`SET session_replication_role = DEFAULT`)
    // A server from before migration 010 (a before-and-after comparison) has no per-day counts.
    const counts = await c.query(`SELECT to_regproc('transaction_day_counts_refresh') IS NOT NULL AS present`)
    if (counts.rows[0].present) await c.query('SELECT transaction_day_counts_refresh($1)', [input.accountId])
    // Autovacuum would have seen tables that grew over two years; here they have just been written.
    await c.query('VACUUM ANALYZE transactions')
    if (counts.rows[0].present) await c.query('VACUUM ANALYZE transaction_day_counts')
  })
  return Date.now() - started
}
