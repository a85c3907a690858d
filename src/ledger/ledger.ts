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
 * Round trips: one statement settles the holds, writes the entry with its postings and updates the
 * first wallet; then one update per further wallet. Each wallet row is updated once, its posted
 * change and its released hold together, and wallets in id order, so that two entries touching the
 * same wallets never deadlock.
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

  const wallets = new Map<string, { posted: bigint; released: bigint }>()
  const wallet = (id: string) => {
    let w = wallets.get(id)
    if (!w) wallets.set(id, (w = { posted: 0n, released: 0n }))
    return w
  }
  for (const p of postings) if (!p.accountId.startsWith('sys:')) wallet(p.accountId).posted += p.amount
  const settle = Boolean(input.settleHolds && input.txnId)
  const first = [...wallets.keys()].sort()[0]

  // $1 txn, $2 kind, $3 now; then the postings, then the first wallet's id and posted change.
  const values: unknown[] = [input.txnId, input.kind, input.now]
  const ctes: string[] = []
  if (settle) {
    ctes.push(`released AS (
       UPDATE holds SET status = 'posted', updated_at = $3 WHERE txn_id = $1 AND status = 'pending'
       RETURNING ledger_account_id, amount)`)
  }
  if (postings.length > 0) {
    const tuples = postings.map((p) => {
      values.push(p.accountId, p.ccy, p.amount)
      const n = values.length
      return `($${n - 2}::text, $${n - 1}::text, $${n}::int8)`
    })
    ctes.push(
      `entry AS (INSERT INTO journal_entries (txn_id, kind, created_at) VALUES ($1, $2, $3) RETURNING id)`,
      `lines AS (INSERT INTO postings (entry_id, ledger_account_id, ccy, amount)
         SELECT entry.id, v.account, v.ccy, v.amount FROM entry, (VALUES ${tuples.join(', ')}) AS v(account, ccy, amount))`,
    )
  }
  if (first) {
    values.push(first, wallets.get(first)!.posted)
    const n = values.length
    const release = settle
      ? `COALESCE((SELECT SUM(amount) FROM released WHERE ledger_account_id = $${n - 1}), 0)`
      : '0'
    ctes.push(`first_wallet AS (
       UPDATE ledger_accounts SET posted = posted + $${n}, pending = pending - ${release}, updated_at = $3
        WHERE id = $${n - 1} AND kind = 'wallet' RETURNING id)`)
  }
  if (ctes.length > 0) {
    // One row at least: whether the first wallet was updated, and each settled hold, for the other
    // wallets. $2 is selected so that it has a type even when no entry is written.
    const { rows } = await q.query<{
      first_updated: number
      ledger_account_id: string | null
      amount: bigint | null
    }>(
      `WITH ${ctes.join(', ')}
       SELECT ${first ? '(SELECT count(*) FROM first_wallet)::int' : '0'} AS first_updated,
              r.ledger_account_id, r.amount, $2::text AS entry_kind
         FROM (SELECT 1) AS one
         LEFT JOIN ${settle ? 'released' : '(SELECT NULL::text AS ledger_account_id, NULL::int8 AS amount WHERE false)'} AS r
           ON true`,
      values,
    )
    if (first) assert(rows[0]?.first_updated === 1, `posting to unknown wallet ${first}`)
    for (const h of rows) {
      if (h.ledger_account_id !== null && h.ledger_account_id !== first)
        wallet(h.ledger_account_id).released += h.amount!
    }
  }
  const update = `UPDATE ledger_accounts SET posted = posted + $2, pending = pending - $3, updated_at = $4
      WHERE id = $1 AND kind = 'wallet'`
  for (const id of [...wallets.keys()].sort()) {
    if (id === first) continue
    const w = wallets.get(id)!
    const r = await q.query(update, [id, w.posted, w.released, input.now])
    assert(r.rowCount === 1, `posting to unknown wallet ${id}`)
  }
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
