import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import type { TxnState } from './state-machine.js'
import { txnFromRow, type Txn } from './txn.js'

/**
 * Reads of the transactions table for the operator console, the hosted pages and the exports. They
 * are named by what they answer so that every statement over the table stays in this folder; the
 * callers shape the rows into their pages and files.
 */

/** Completed transactions per UTC day of creation and source currency, created since `sinceMs`. */
export async function completedVolumesByDay(
  q: Queryable,
  sinceMs: number,
): Promise<Array<{ day: number; ccy: string; n: bigint; total: string }>> {
  const { rows } = await q.query<{ day: number; ccy: string; n: bigint; total: string }>(
    sql`SELECT (created_at / 86400000)::int4 AS day, src_ccy AS ccy, count(*)::int8 AS n, SUM(src_amount)::text AS total
       FROM transactions WHERE created_at >= ${sinceMs} AND state = 'completed'
      GROUP BY 1, 2 ORDER BY 2, 1`,
  )
  return rows
}

/**
 * Transactions whose id, extRefId or rail reference is `reference`, or whose details hold it under
 * one of `detailKeys` (newest first, at most `limit`). The details are read by a scan, which the
 * console can afford for an operator's search.
 */
export async function txnsByReference(
  q: Queryable,
  reference: string,
  detailKeys: readonly string[],
  limit: number,
): Promise<Txn[]> {
  const ref = sql.param(reference)
  const detailMatches = sql.join(
    detailKeys.flatMap((k) => {
      const key = sql.param(k)
      return [sql`src_details->>${key}::text = ${ref}`, sql`dest_details->>${key}::text = ${ref}`]
    }),
    sql` OR `,
  )
  const { rows } = await q.query(
    sql`SELECT * FROM transactions WHERE id = ${ref} OR ext_ref_id = ${ref} OR rail_ref = ${ref} OR ${detailMatches}
      ORDER BY created_at DESC, id DESC LIMIT ${sql.int(limit)}`,
  )
  return rows.map(txnFromRow)
}

/** The columns of a receive its hosted page shows, with its account's display name. */
export interface PageRow {
  id: string
  kind: string
  state: TxnState
  src_amount: bigint
  src_settled: bigint | null
  src_details: Record<string, unknown>
  expires_at: bigint
  display_name: string
}

/** The receive of one of `kinds` with this page id; only the page's columns are read. */
export async function pageReceive(
  q: Queryable,
  pageId: string,
  kinds: readonly string[],
): Promise<PageRow | undefined> {
  const { rows } = await q.query<PageRow>(
    sql`SELECT t.id, t.kind, t.state, t.src_amount, t.src_settled, t.src_details, t.expires_at, a.display_name
       FROM transactions t JOIN accounts a ON a.id = t.account_id
      WHERE t.page_id = ${pageId} AND t.kind = ANY(${kinds})`,
  )
  return rows[0]
}

/** The columns of a page's live status, by transaction id. */
export async function pageStatusRow(
  q: Queryable,
  txnId: string,
): Promise<Omit<PageRow, 'id' | 'display_name'> | undefined> {
  const { rows } = await q.query<Omit<PageRow, 'id' | 'display_name'>>(
    sql`SELECT kind, state, src_amount, src_settled, src_details, expires_at FROM transactions WHERE id = ${txnId}`,
  )
  return rows[0]
}

/** One batch of an accountant's export: the rows created in [fromMs, toMs) after the key `after`. */
export async function exportTxnBatch(
  q: Queryable,
  range: { fromMs: number; toMs: number; accountId?: string },
  after: [createdAt: bigint, id: string] | undefined,
  limit: number,
): Promise<any[]> {
  const account = range.accountId !== undefined ? sql` AND account_id = ${range.accountId}` : sql.empty
  const seek = after ? sql` AND (created_at, id) > (${after[0]}, ${after[1]})` : sql.empty
  const { rows } = await q.query(
    sql`SELECT id, created_at, updated_at, account_id, ext_ref_id, kind, state, src_ccy, src_method,
                      src_amount, src_fee, src_network_fee, src_settled, dest_ccy, dest_method, dest_amount,
                      dest_settled, fx_rate, rail_ref, note
                 FROM transactions WHERE created_at >= ${range.fromMs} AND created_at < ${range.toMs}${account}${seek} ORDER BY created_at, id LIMIT ${sql.int(limit)}`,
  )
  return rows
}

/**
 * What the sends of `kinds` still in flight (srccreated, destsent, error) will take out by their
 * rails, per kind, as each kind's declaration says it leaves (`reconcile.leaves`): its open hold
 * less the service fee that goes to revenue, or its destination amount (always so between two
 * currencies). Reconciliation compares it with what a rail holds.
 */
export async function inFlightSendTotals(
  q: Queryable,
  kinds: ReadonlyArray<{ kind: string; leaves: 'hold-less-fee' | 'destination' }>,
): Promise<Map<string, bigint>> {
  const lessFee = kinds.filter((k) => k.leaves === 'hold-less-fee').map((k) => k.kind)
  const { rows } = await q.query<{ kind: string; total: unknown }>(
    sql`SELECT t.kind,
            SUM(CASE WHEN t.src_ccy = t.dest_ccy AND t.kind = ANY(${lessFee}::text[])
                     THEN h.amount - t.src_fee ELSE t.dest_amount END)::int8 AS total
       FROM holds h JOIN transactions t ON t.id = h.txn_id
      WHERE h.status = 'pending' AND t.kind = ANY(${kinds.map((k) => k.kind)}::text[])
        AND t.state IN ('srccreated', 'destsent', 'error')
      GROUP BY t.kind`,
  )
  return new Map(rows.map((r) => [r.kind, BigInt(r.total as bigint)]))
}
