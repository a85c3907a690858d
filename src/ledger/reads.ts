import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'

/**
 * Reads of the ledger's tables (holds, journal entries, postings, ledger accounts) for the flows,
 * the console, the exports and reconciliation, named by what they answer. Finding a wallet, and the
 * statements that write, are in ledger.ts.
 */

/** The sum of a transaction's open holds, in its wallet's minor units (0 for none). */
export async function heldMinor(q: Queryable, txnId: string): Promise<bigint> {
  const { rows } = await q.query<{ held: string }>(
    sql`SELECT coalesce(sum(amount), 0)::text AS held FROM holds WHERE txn_id = ${txnId} AND status = 'pending'`,
  )
  return BigInt(rows[0]?.held ?? '0')
}

/** Whether a transaction has a journal entry (money moved). */
export async function hasEntry(q: Queryable, txnId: string): Promise<boolean> {
  const { rows } = await q.query(sql`SELECT 1 FROM journal_entries WHERE txn_id = ${txnId} LIMIT 1`)
  return rows.length > 0
}

export interface EntryPostingRow {
  entry_id: string
  kind: string
  created_at: string
  ledger_account_id: string
  ccy: string
  amount: string
}

/** A transaction's journal entries, one row per posting, in order; at most `limit` rows. */
export async function entryPostingsOf(
  q: Queryable,
  txnId: string,
  limit: number,
): Promise<EntryPostingRow[]> {
  const { rows } = await q.query<EntryPostingRow>(
    sql`SELECT j.id AS entry_id, j.kind, j.created_at, p.ledger_account_id, p.ccy, p.amount
       FROM journal_entries j JOIN postings p ON p.entry_id = j.id
      WHERE j.txn_id = ${txnId} ORDER BY j.id, p.id LIMIT ${sql.int(limit)}`,
  )
  return rows
}

export interface HoldRow {
  id: string
  ledger_account_id: string
  ccy: string
  amount: string
  status: string
  created_at: string
  updated_at: string
}

/** A transaction's holds, open or closed, with their wallet's currency; at most `limit`. */
export async function holdsOf(q: Queryable, txnId: string, limit: number): Promise<HoldRow[]> {
  const { rows } = await q.query<HoldRow>(
    sql`SELECT h.id, h.ledger_account_id, la.ccy, h.amount, h.status, h.created_at, h.updated_at
       FROM holds h JOIN ledger_accounts la ON la.id = h.ledger_account_id
      WHERE h.txn_id = ${txnId} ORDER BY h.id LIMIT ${sql.int(limit)}`,
  )
  return rows
}

/**
 * One batch of the accountants' ledger export: postings of entries made in [fromMs, toMs), of one
 * account's ledger accounts or of all, in (entry time, entry id, posting id) order after `after`.
 */
export async function exportPostingBatch(
  q: Queryable,
  range: { fromMs: number; toMs: number; accountId?: string },
  after: [createdAt: bigint, entryId: bigint, postingId: bigint] | undefined,
  limit: number,
): Promise<any[]> {
  const account = range.accountId !== undefined ? sql` AND la.account_id = ${range.accountId}` : sql.empty
  let seek = sql.empty
  if (after) {
    const [createdAt, entryId] = [sql.param(after[0]), sql.param(after[1])]
    // The entry's part of the key alone bounds the scan of the entries' index; the posting's id
    // then skips the postings of the last entry already sent.
    seek = sql` AND (e.created_at, e.id) >= (${createdAt}, ${entryId})
               AND ((e.created_at, e.id) > (${createdAt}, ${entryId}) OR p.id > ${after[2]})`
  }
  const { rows } = await q.query(
    sql`SELECT p.id AS posting_id, e.id AS entry_id, e.created_at, e.txn_id, e.kind AS entry_kind,
                      p.ledger_account_id, la.account_id, la.kind AS ledger_account_kind, p.ccy, p.amount
                 FROM journal_entries e
                 JOIN postings p ON p.entry_id = e.id
                 JOIN ledger_accounts la ON la.id = p.ledger_account_id
                WHERE e.created_at >= ${range.fromMs} AND e.created_at < ${range.toMs}${account}${seek} ORDER BY e.created_at, e.id, p.id LIMIT ${sql.int(limit)}`,
  )
  return rows
}

/** The sum of all postings of each of `ledgerAccountIds` that has any (a system account's balance). */
export async function postingSums(
  q: Queryable,
  ledgerAccountIds: readonly string[],
): Promise<Map<string, bigint>> {
  const { rows } = await q.query<{ id: string; total: unknown }>(
    sql`SELECT ledger_account_id AS id, SUM(amount)::int8 AS total FROM postings
      WHERE ledger_account_id = ANY(${[...ledgerAccountIds]}::text[]) GROUP BY ledger_account_id`,
  )
  return new Map(rows.map((r) => [r.id, BigInt(r.total as bigint)]))
}

/** What the wallets hold in each currency: the sum of their posted balances. */
export async function walletTotalsByCurrency(q: Queryable): Promise<Map<string, bigint>> {
  const { rows } = await q.query<{ ccy: string; total: unknown }>(
    sql`SELECT ccy, SUM(posted)::int8 AS total FROM ledger_accounts WHERE kind = 'wallet' GROUP BY ccy`,
  )
  return new Map(rows.map((r) => [r.ccy, BigInt(r.total as bigint)]))
}

/**
 * The postings of a transaction's first entry that moved money out of one of `networkAccounts`
 * (the entry that brought a receive's money in); empty when it has none.
 */
export async function firstNetworkCreditOf(
  q: Queryable,
  txnId: string,
  networkAccounts: readonly string[],
): Promise<Array<{ entry_id: unknown; ledger_account_id: string; ccy: string; amount: unknown }>> {
  const { rows } = await q.query<{
    entry_id: unknown
    ledger_account_id: string
    ccy: string
    amount: unknown
  }>(
    sql`SELECT p.entry_id, p.ledger_account_id, p.ccy, p.amount FROM postings p
            WHERE p.entry_id = (
              SELECT e.id FROM journal_entries e JOIN postings x ON x.entry_id = e.id
               WHERE e.txn_id = ${txnId} AND x.ledger_account_id = ANY(${[...networkAccounts]}::text[]) AND x.amount < 0
               ORDER BY e.id LIMIT 1)`,
  )
  return rows
}
