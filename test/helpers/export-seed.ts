import type { Db, Queryable } from '../../src/db/db.js'

/**
 * Many rows for the export tests, written by a few INSERT … SELECT generate_series statements:
 * `n` transactions of one account (one a second from `baseMs`), and n/2 journal entries, each a
 * balanced pair of postings (the account's BTC wallet +, the sandbox funding account −), with the
 * wallet's running balance moved by their sum, as the ledger keeps it. Row g (from 1):
 *  - transaction `txn_<prefix, default exp><g padded to 20>`, created at baseMs + g s, src 123457·g sats, fee g mod 7
 *    sats, dest g US cents (settled), ext ref `ref,<g>`, a formula-like note on every 1000th;
 *  - entry g: wallet +(1000·g + 1) sats, system −(1000·g + 1) sats. Test code only.
 */
export async function seedExportRows(
  db: Db,
  opts: { accountId: string; n: number; baseMs: number; prefix?: string },
): Promise<{ walletId: string }> {
  return db.tx(async (q) => {
    // As a bulk import does (migration 010): the per-day counts' trigger off for these rows, which
    // would rewrite the same few count rows once per transaction, and the counts recomputed after.
    await q.query('SET LOCAL session_replication_role = replica')
    const seeded = await seed(q, opts)
    await q.query('SET LOCAL session_replication_role = origin')
    await q.query('SELECT transaction_day_counts_refresh($1)', [opts.accountId])
    return seeded
  })
}

async function seed(
  q: Queryable,
  opts: { accountId: string; n: number; baseMs: number; prefix?: string },
): Promise<{ walletId: string }> {
  const { accountId, n, baseMs } = opts
  const txn = `txn_${opts.prefix ?? 'exp'}`
  const walletId = `wal_export_${accountId}`
  await q.query(
    `INSERT INTO accounts (id, display_name, tier, created_at) VALUES ($1, 'Export test', 'standard', $2)
     ON CONFLICT (id) DO NOTHING`,
    [accountId, baseMs],
  )
  await q.query(
    `INSERT INTO ledger_accounts (id, account_id, kind, ccy, created_at, updated_at)
     VALUES ($1, $2, 'wallet', 'BTC', $3, $3), ('sys:sandbox-funding:BTC', NULL, 'system', 'BTC', $3, $3)
     ON CONFLICT DO NOTHING`,
    [walletId, accountId, baseMs],
  )
  const { rows } = await q.query("SELECT id FROM ledger_accounts WHERE account_id = $1 AND ccy = 'BTC'", [
    accountId,
  ])
  const wallet = rows[0].id as string
  await q.query(
    `INSERT INTO transactions (id, account_id, ext_ref_id, request_hash, kind, state, note, src_ccy, src_method,
       src_amount, src_fee, src_created_at, src_updated_at, dest_ccy, dest_method, dest_amount, dest_settled,
       dest_created_at, dest_updated_at, fx_rate, expires_at, created_at, updated_at)
     SELECT $4::text || lpad(g::text, 20, '0'), $1, 'ref,' || g, 'h', 'swap', 'completed',
            CASE WHEN g % 1000 = 0 THEN '=1+' || g END, 'BTC', 'svcpay', 123457::bigint * g, g % 7, t, t,
            'USD', 'svcpay', g, g, t, t, '0.0001', t, t, t
       FROM generate_series(1, $2::int) AS g, LATERAL (SELECT $3::bigint + g * 1000 AS t) AS at`,
    [accountId, n, baseMs, txn],
  )
  await q.query(
    `INSERT INTO journal_entries (txn_id, kind, created_at)
     SELECT $3::text || lpad(g::text, 20, '0'), 'export_test', $2::bigint + g * 1000
       FROM generate_series(1, $1::int) AS g ORDER BY g`,
    [Math.floor(n / 2), baseMs, txn],
  )
  await q.query(
    `INSERT INTO postings (entry_id, ledger_account_id, ccy, amount)
     SELECT entry_id, account, 'BTC', amount FROM (
       SELECT e.id AS entry_id, 0 AS side, $1 AS account, (e.created_at - $2::bigint) + 1 AS amount
         FROM journal_entries e WHERE e.kind = 'export_test' AND e.txn_id LIKE $3::text || '%'
       UNION ALL
       SELECT e.id, 1, 'sys:sandbox-funding:BTC', -((e.created_at - $2::bigint) + 1)
         FROM journal_entries e WHERE e.kind = 'export_test' AND e.txn_id LIKE $3::text || '%'
     ) AS p ORDER BY entry_id, side`,
    [wallet, baseMs, txn],
  )
  // The wallet's running balance moves by the sum of its postings: Σ (1000·g + 1) for g = 1..m.
  const m = BigInt(Math.floor(n / 2))
  await q.query('UPDATE ledger_accounts SET posted = posted + $2 WHERE id = $1', [
    wallet,
    (1000n * m * (m + 1n)) / 2n + m,
  ])
  return { walletId: wallet }
}
