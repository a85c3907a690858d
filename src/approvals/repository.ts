/** The approvals table (migration 026): one row per transaction that waited for a second operator. */
import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import type { Txn } from '../transactions/txn.js'
import type { ApprovalReason } from './policy.js'

export type ApprovalStatus = 'waiting' | 'approved' | 'rejected' | 'expired'
export const APPROVAL_STATUSES: readonly ApprovalStatus[] = ['waiting', 'approved', 'rejected', 'expired']

export interface ApprovalRow {
  txn_id: string
  account_id: string
  status: ApprovalStatus
  reasons: ApprovalReason[]
  requested_at: bigint
  expires_at: bigint
  created_by: string | null
  reviewed_by: string | null
  reviewed_by_email: string | null
  reviewed_at: bigint | null
  review_note: string | null
  decided_by: string | null
  decided_by_email: string | null
  decided_at: bigint | null
  decision_note: string | null
}

/** Written in the confirm's own database transaction, with the move to `processing`. */
export async function insertApproval(
  q: Queryable,
  a: { txn: Txn; reasons: ApprovalReason[]; requestedAt: number; expiresAt: number },
): Promise<void> {
  await q.query(
    sql`INSERT INTO approvals (txn_id, account_id, status, reasons, requested_at, expires_at)
     VALUES (${a.txn.id}, ${a.txn.accountId}, 'waiting', ${JSON.stringify(a.reasons)}, ${a.requestedAt}, ${a.expiresAt})`,
  )
}

/** The approval of a transaction, locked for the rest of the database transaction. */
export async function lockApproval(q: Queryable, txnId: string): Promise<ApprovalRow | undefined> {
  const { rows } = await q.query<ApprovalRow>(sql`SELECT * FROM approvals WHERE txn_id = ${txnId} FOR UPDATE`)
  return rows[0]
}

/** Records the first review; the caller holds the row lock and has checked it is waiting. */
export async function recordReview(
  q: Queryable,
  txnId: string,
  by: { operatorId: string; email: string },
  note: string | null,
  at: number,
): Promise<ApprovalRow> {
  const { rows } = await q.query<ApprovalRow>(
    sql`UPDATE approvals SET reviewed_by = ${by.operatorId}, reviewed_by_email = ${by.email}, reviewed_at = ${at},
            review_note = ${note}
      WHERE txn_id = ${txnId} AND status = 'waiting' AND reviewed_by IS NULL RETURNING *`,
  )
  return rows[0]!
}

/**
 * Ends a waiting approval with a decision; undefined when it was no longer waiting (the conditional
 * update is the second guard behind the row lock: a decision is made once).
 */
export async function recordDecision(
  q: Queryable,
  txnId: string,
  status: Exclude<ApprovalStatus, 'waiting'>,
  by: { operatorId: string; email: string } | null,
  note: string | null,
  at: number,
): Promise<ApprovalRow | undefined> {
  const { rows } = await q.query<ApprovalRow>(
    sql`UPDATE approvals SET status = ${status}, decided_by = ${by?.operatorId ?? null},
            decided_by_email = ${by?.email ?? null}, decided_at = ${at}, decision_note = ${note}
      WHERE txn_id = ${txnId} AND status = 'waiting' RETURNING *`,
  )
  return rows[0]
}

/** When a transaction's approval let it go on; undefined when it never waited for one. */
export async function approvedAt(q: Queryable, txnId: string): Promise<number | undefined> {
  const { rows } = await q.query<{ decided_at: bigint }>(
    sql`SELECT decided_at FROM approvals WHERE txn_id = ${txnId} AND status = 'approved'`,
  )
  return rows[0] ? Number(rows[0].decided_at) : undefined
}

/** How many approvals have this status. */
export async function countApprovals(q: Queryable, status: ApprovalStatus): Promise<number> {
  const { rows } = await q.query<{ n: bigint }>(
    sql`SELECT count(*)::int8 AS n FROM approvals WHERE status = ${status}`,
  )
  return Number(rows[0]?.n ?? 0)
}

export const APPROVALS_PAGE_MAX = 200

/**
 * A page of approvals of one status, oldest request first (the queue's order), after the cursor
 * (`requested_at` and `txn_id` of the last row seen).
 */
export async function listApprovals(
  q: Queryable,
  f: { status: ApprovalStatus; limit: number; after?: { requestedAt: bigint; txnId: string } },
): Promise<(ApprovalRow & { txn_state: string; kind: string })[]> {
  const after = f.after
    ? sql` AND (a.requested_at, a.txn_id) > (${f.after.requestedAt}, ${f.after.txnId})`
    : sql.empty
  const { rows } = await q.query<ApprovalRow & { txn_state: string; kind: string }>(
    sql`SELECT a.*, t.state AS txn_state, t.kind FROM approvals a JOIN transactions t ON t.id = a.txn_id
      WHERE a.status = ${f.status}${after}
      ORDER BY a.requested_at, a.txn_id LIMIT ${f.limit}`,
  )
  return rows
}
