import type { Queryable } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'

/**
 * The ledger's side of reconciling a rail's payments (src/reconcile): the journal entries on a
 * rail's system account, each with the reference the rail knows its payment by. How that reference
 * is read is reconciliation's knowledge (src/reconcile/refs.ts): it hands it in as `RefSql`, the
 * expression over `journal_entries e` and `transactions t` and the joins it needs, fragments of
 * constant text of our code (never request or row data), so the ledger does not import reconciliation.
 */
export interface RefSql {
  /** The reference of the entry `e` (entryRef of the rail, src/reconcile/refs.ts). */
  expr: Sql
  /** The joins the expression needs after `LEFT JOIN transactions t ON t.id = e.txn_id`. */
  joins: Sql
}

export interface RailAccountEntry {
  entry_id: unknown
  txn_id: string | null
  rail_ref: string | null
  /** The status of the bank credit this entry put in suspense, if it is one. */
  suspense: string | null
  /** Whether the reference is a bank transfer in. */
  is_credit: boolean
  /** What the entry posted on the account. */
  total: unknown
  at: unknown
}

/** Every entry on `account` since `sinceMs` (operator capital aside), with its reference, by id. */
export async function railAccountEntries(
  q: Queryable,
  input: { account: string; sinceMs: number; ref: RefSql },
): Promise<RailAccountEntry[]> {
  const ref = input.ref.expr
  const { rows } = await q.query<RailAccountEntry>(
    sql`SELECT e.id AS entry_id, e.txn_id, ${ref} AS rail_ref, sc.status AS suspense,
            EXISTS (SELECT 1 FROM bank_credits bc WHERE bc.bank_ref = ${ref}) AS is_credit,
            SUM(p.amount)::int8 AS total, e.created_at AS at
       FROM postings p JOIN journal_entries e ON e.id = p.entry_id LEFT JOIN transactions t ON t.id = e.txn_id
       ${input.ref.joins}
      WHERE p.ledger_account_id = ${input.account} AND e.created_at >= ${input.sinceMs} AND e.kind <> 'operator_capital'
      GROUP BY e.id, e.txn_id, t.id, o.rail_ref, t.rail_ref, sc.bank_ref, sc.status, e.created_at ORDER BY e.id`,
  )
  return rows
}

/** Which of `refs` an entry on `account` carries, at any time. */
export async function refsWithEntries(
  q: Queryable,
  input: { account: string; refs: readonly string[]; ref: RefSql },
): Promise<Set<string>> {
  const ref = input.ref.expr
  const { rows } = await q.query<{ rail_ref: string }>(
    sql`SELECT DISTINCT ${ref} AS rail_ref
         FROM journal_entries e JOIN postings p ON p.entry_id = e.id AND p.ledger_account_id = ${input.account}
         LEFT JOIN transactions t ON t.id = e.txn_id ${input.ref.joins}
        WHERE ${ref} = ANY(${[...input.refs]}::text[])`,
  )
  return new Set(rows.map((r) => r.rail_ref))
}

/**
 * What the entries on `account` posted per reference of `refs`, over every time, with the first
 * transaction id of each: the figure a rail's payment is matched against by amount.
 */
export async function postedByRef(
  q: Queryable,
  input: { account: string; refs: readonly string[]; ref: RefSql },
): Promise<Array<{ rail_ref: string; txn_id: string; total: unknown }>> {
  const ref = input.ref.expr
  const { rows } = await q.query<{ rail_ref: string; txn_id: string; total: unknown }>(
    sql`SELECT ${ref} AS rail_ref, MIN(t.id) AS txn_id, SUM(p.amount)::int8 AS total
       FROM journal_entries e JOIN postings p ON p.entry_id = e.id AND p.ledger_account_id = ${input.account}
       LEFT JOIN transactions t ON t.id = e.txn_id ${input.ref.joins}
      WHERE ${ref} = ANY(${[...input.refs]}::text[])
      GROUP BY 1`,
  )
  return rows
}
