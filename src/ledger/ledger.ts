import type { Db, Queryable } from '../db/db.js'
import { assert } from '../shared/assert.js'

/**
 * The double-entry ledger. Every movement is a journal entry of postings that sum to zero per
 * currency. Wallets keep running `posted` and `pending` balances, updated in the same database
 * transaction as their postings and guarded by CHECK constraints and conditional updates; system
 * accounts (fees, FX liquidity, external networks) have no running balance: theirs is the sum of
 * their postings, which keeps them from becoming hot rows every transaction would queue on.
 */

export type SystemPurpose = 'fees' | 'fx' | 'lightning' | 'onchain' | 'tron' | 'bank' | 'sandbox-funding'

export const systemAccountId = (purpose: SystemPurpose, ccy: string) => `sys:${purpose}:${ccy}`

export interface Posting {
  accountId: string
  ccy: string
  /** Positive increases the account's balance, negative decreases it. */
  amount: bigint
}

export async function ensureSystemAccounts(db: Db, currencies: string[]): Promise<void> {
  const purposes: SystemPurpose[] = ['fees', 'fx', 'lightning', 'onchain', 'tron', 'bank', 'sandbox-funding']
  const now = Date.now()
  for (const ccy of currencies) {
    for (const purpose of purposes) {
      await db.query(
        `INSERT INTO ledger_accounts (id, account_id, kind, ccy, created_at, updated_at)
         VALUES ($1, NULL, 'system', $2, $3, $3) ON CONFLICT (id) DO NOTHING`,
        [systemAccountId(purpose, ccy), ccy, now],
      )
    }
  }
}

/**
 * Hold `amount` of a wallet for a transaction: availableBalance falls, the balance does not.
 * Returns false, changing nothing, when the wallet's available balance does not cover it. The wallet
 * is given by id, or by its account and currency. One statement: the conditional balance update and
 * the hold row it guards are written together (one round trip to the database).
 */
export async function placeHold(
  q: Queryable,
  input: { txnId: string; amount: bigint; now: number } & (
    { walletId: string } | { accountId: string; ccy: string }
  ),
): Promise<boolean> {
  assert(input.amount > 0n, 'a hold must be positive')
  const byId = 'walletId' in input
  const r = await q.query(
    `WITH w AS (
       UPDATE ledger_accounts SET pending = pending + $2, updated_at = $3
        WHERE ${byId ? 'id = $4' : 'account_id = $4 AND ccy = $5'} AND kind = 'wallet' AND posted - pending >= $2
        RETURNING id)
     INSERT INTO holds (txn_id, ledger_account_id, amount, status, created_at, updated_at)
     SELECT $1, w.id, $2, 'pending', $3, $3 FROM w`,
    byId
      ? [input.txnId, input.amount, input.now, input.walletId]
      : [input.txnId, input.amount, input.now, input.accountId, input.ccy],
  )
  return r.rowCount > 0
}

/**
 * placeHold as WITH items, for a statement that writes other things too (one round trip): the
 * account's wallet in `ccy` is held for `amount` when its available balance covers it, and not at
 * all otherwise. With `onlyIf`, the name of an earlier WITH item, only when that one returned a row.
 * `p` adds a parameter and returns its placeholder.
 */
export function holdCtes(
  p: (value: unknown) => string,
  input: { txnId: string; accountId: string; ccy: string; amount: bigint; now: number },
  onlyIf?: string,
): string {
  assert(input.amount > 0n, 'a hold must be positive')
  const amount = p(input.amount)
  const now = p(input.now)
  return `hold_wallet AS (
       UPDATE ledger_accounts SET pending = pending + ${amount}, updated_at = ${now}
        WHERE account_id = ${p(input.accountId)} AND ccy = ${p(input.ccy)} AND kind = 'wallet'
          AND posted - pending >= ${amount}${onlyIf ? ` AND EXISTS (SELECT 1 FROM ${onlyIf})` : ''}
        RETURNING id),
     hold_row AS (
       INSERT INTO holds (txn_id, ledger_account_id, amount, status, created_at, updated_at)
       SELECT ${p(input.txnId)}, hold_wallet.id, ${amount}, 'pending', ${now}, ${now} FROM hold_wallet)`
}

/** The transaction's open hold amount on a wallet (0 when none). */
export async function pendingHoldAmount(q: Queryable, txnId: string): Promise<bigint> {
  const { rows } = await q.query<{ total: bigint | null }>(
    `SELECT SUM(amount)::int8 AS total FROM holds WHERE txn_id = $1 AND status = 'pending'`,
    [txnId],
  )
  return rows[0]?.total ?? 0n
}

/** Release every open hold of a transaction: the funds become available again. */
export async function voidHolds(q: Queryable, txnId: string, now: number): Promise<void> {
  await closeHolds(q, txnId, 'voided', now)
}

async function closeHolds(
  q: Queryable,
  txnId: string,
  status: 'posted' | 'voided',
  now: number,
): Promise<void> {
  // One statement: the holds close and their wallets' pending balances fall together.
  await q.query(
    `WITH h AS (
       UPDATE holds SET status = $2, updated_at = $3 WHERE txn_id = $1 AND status = 'pending'
       RETURNING ledger_account_id, amount)
     UPDATE ledger_accounts la SET pending = la.pending - s.amount, updated_at = $3
       FROM (SELECT ledger_account_id, SUM(amount) AS amount FROM h GROUP BY ledger_account_id) s
      WHERE la.id = s.ledger_account_id`,
    [txnId, status, now],
  )
}

/**
 * Record a balanced journal entry. When `settleHolds` is set, the transaction's open holds are
 * marked posted in the same step (their amounts are part of these postings).
 *
 * One statement (one round trip): it settles the holds, writes the entry and its postings, locks
 * the wallets it changes in id order (so that two entries touching the same wallets never
 * deadlock) and updates each wallet row once, its posted change and its released holds together.
 */
export async function postEntry(
  q: Queryable,
  input: { txnId: string | null; kind: string; postings: Posting[]; now: number; settleHolds?: boolean },
): Promise<void> {
  const postings = input.postings.filter((p) => p.amount !== 0n)
  const sums = new Map<string, bigint>()
  for (const p of postings) sums.set(p.ccy, (sums.get(p.ccy) ?? 0n) + p.amount)
  for (const [ccy, sum] of sums) {
    assert(sum === 0n, `journal entry ${input.kind} does not balance in ${ccy}: ${sum}`)
  }
  const posted = new Map<string, bigint>()
  for (const p of postings) {
    if (!p.accountId.startsWith('sys:')) posted.set(p.accountId, (posted.get(p.accountId) ?? 0n) + p.amount)
  }
  const settle = Boolean(input.settleHolds && input.txnId)
  if (postings.length === 0 && !settle) return

  // $1 txn, $2 kind, $3 now; then the postings, then the wallets' posted changes.
  const values: unknown[] = [input.txnId, input.kind, input.now]
  const tuple = (...items: unknown[]) =>
    '(' +
    items
      .map((item) => {
        values.push(item)
        return `$${values.length}${typeof item === 'bigint' ? '::int8' : '::text'}`
      })
      .join(', ') +
    ')'
  const ctes = [
    settle
      ? `released AS (
         UPDATE holds SET status = 'posted', updated_at = $3 WHERE txn_id = $1 AND status = 'pending'
         RETURNING ledger_account_id, amount)`
      : `released AS (SELECT NULL::text AS ledger_account_id, NULL::int8 AS amount WHERE false)`,
  ]
  if (postings.length > 0) {
    const lines = postings.map((p) => tuple(p.accountId, p.ccy, p.amount))
    ctes.push(
      `entry AS (INSERT INTO journal_entries (txn_id, kind, created_at) VALUES ($1, $2, $3) RETURNING id)`,
      `lines AS (INSERT INTO postings (entry_id, ledger_account_id, ccy, amount)
         SELECT entry.id, v.account, v.ccy, v.amount FROM entry, (VALUES ${lines.join(', ')}) AS v(account, ccy, amount))`,
    )
  }
  const deltas = [...posted].map(([id, amount]) => tuple(id, amount))
  ctes.push(
    `targets AS (
       SELECT id, SUM(posted)::int8 AS posted FROM (
         ${deltas.length ? `SELECT * FROM (VALUES ${deltas.join(', ')}) AS d(id, posted) UNION ALL ` : ''}
         SELECT ledger_account_id, 0::int8 FROM released) t
       GROUP BY id)`,
    `locked AS (
       SELECT la.id FROM ledger_accounts la JOIN targets t ON t.id = la.id
        WHERE la.kind = 'wallet' ORDER BY la.id FOR UPDATE OF la)`,
    `changed AS (
       UPDATE ledger_accounts la
          SET posted = la.posted + t.posted,
              pending = la.pending - COALESCE((SELECT SUM(r.amount) FROM released r WHERE r.ledger_account_id = la.id), 0),
              updated_at = $3
         FROM targets t JOIN locked l ON l.id = t.id
        WHERE la.id = t.id
        RETURNING la.id)`,
  )
  const { rows } = await q.query<{ changed: number; targets: number; kind: string }>(
    `WITH ${ctes.join(',\n')}
     SELECT (SELECT count(*) FROM changed)::int AS changed, (SELECT count(*) FROM targets)::int AS targets,
            $2::text AS kind`,
    values,
  )
  const r = rows[0]!
  assert(r.changed === r.targets, `journal entry ${input.kind} posts to an unknown wallet`)
}

export interface BooksReport {
  ok: boolean
  unbalancedEntries: number
  walletMismatches: number
  holdMismatches: number
  /** Sum of every account's balance per currency: zero when the books balance. */
  totals: Record<string, string>
}

/** The books check: every entry balances, and every wallet's balances match its postings and holds. */
export async function checkBooks(q: Queryable): Promise<BooksReport> {
  const { rows } = await q.query<{
    unbalanced: bigint
    wallet_mismatch: bigint
    hold_mismatch: bigint
    totals: Record<string, string> | null
  }>(`
    SELECT
      (SELECT count(*) FROM (SELECT entry_id, ccy FROM postings GROUP BY entry_id, ccy HAVING SUM(amount) <> 0) u)::int8 AS unbalanced,
      (SELECT count(*) FROM ledger_accounts la
         WHERE la.kind = 'wallet'
           AND la.posted <> COALESCE((SELECT SUM(p.amount) FROM postings p WHERE p.ledger_account_id = la.id), 0))::int8 AS wallet_mismatch,
      (SELECT count(*) FROM ledger_accounts la
         WHERE la.kind = 'wallet'
           AND la.pending <> COALESCE((SELECT SUM(h.amount) FROM holds h WHERE h.ledger_account_id = la.id AND h.status = 'pending'), 0))::int8 AS hold_mismatch,
      (SELECT json_object_agg(ccy, total::text) FROM (SELECT ccy, SUM(amount) AS total FROM postings GROUP BY ccy) t) AS totals
  `)
  const r = rows[0]!
  const totals = r.totals ?? {}
  const totalsZero = Object.values(totals).every((t) => t === '0')
  return {
    ok: r.unbalanced === 0n && r.wallet_mismatch === 0n && r.hold_mismatch === 0n && totalsZero,
    unbalancedEntries: Number(r.unbalanced),
    walletMismatches: Number(r.wallet_mismatch),
    holdMismatches: Number(r.hold_mismatch),
    totals,
  }
}
