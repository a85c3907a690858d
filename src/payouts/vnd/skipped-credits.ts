/**
 * Credits the bank partner reported that could not be recorded (docs/payouts.md, "Incoming
 * credits"): an item of the statement, or a signed notification, without a usable id, amount,
 * currency or time, or one the sink refused (an amount no ledger can hold). Such an item is left
 * out (the statement poll reads on, the notification is answered 400), logged with its id and the
 * field at fault only, and kept here for operators: the console's attention list shows those seen
 * in the last SKIPPED_SHOWN_MS. The money, if any arrived, is for an operator to take up with the
 * partner; nothing is credited from an item that cannot be read.
 */
import type { Queryable } from '../../db/db.js'
import { sql } from '../../db/sql.js'

/** The most items kept; the oldest seen go first. */
export const SKIPPED_KEPT_MAX = 1_000
/** How long an item stays on the attention list after it was last seen. */
export const SKIPPED_SHOWN_MS = 7 * 86_400_000

export interface SkippedItem {
  /** The partner's id, only when it is a valid one. */
  id?: string
  /** The field at fault (`amount`, `id`, ...), or `unrecordable` when the sink refused it. */
  problem: string
}

export async function recordSkippedCredit(
  q: Queryable,
  item: SkippedItem,
  source: 'statement' | 'notification',
  now: number,
): Promise<void> {
  const nowParam = sql.param(now)
  await q.query(
    sql`INSERT INTO bank_credit_skips (bank_ref, problem, source, first_seen, last_seen) VALUES (${item.id ?? ''}, ${item.problem.slice(0, 64)}, ${source}, ${nowParam}, ${nowParam})
     ON CONFLICT (bank_ref, problem, source) DO UPDATE SET last_seen = ${nowParam}, times = bank_credit_skips.times + 1`,
  )
  await q.query(
    sql`DELETE FROM bank_credit_skips WHERE id IN
       (SELECT id FROM bank_credit_skips ORDER BY last_seen DESC, id DESC OFFSET ${SKIPPED_KEPT_MAX})`,
  )
}

/** The field a sink's refusal names (`amount`), else `unrecordable`: what the skipped item is listed as. */
export function refusedField(err: { details?: ReadonlyArray<{ field?: string }> }): string {
  const field = err.details?.[0]?.field
  return typeof field === 'string' && /^[A-Za-z_]{1,32}$/.test(field) ? field : 'unrecordable'
}

export interface SkippedRow {
  bankRef: string | null
  problem: string
  source: 'statement' | 'notification'
  firstSeen: number
  lastSeen: number
  times: number
}

/** Items seen since `sinceMs`, most recently seen first, and how many there are. */
export async function listSkippedCredits(
  q: Queryable,
  sinceMs: number,
  limit: number,
): Promise<{ total: number; rows: SkippedRow[] }> {
  const [{ rows }, { rows: count }] = await Promise.all([
    q.query<{
      bank_ref: string
      problem: string
      source: SkippedRow['source']
      first_seen: unknown
      last_seen: unknown
      times: number
    }>(
      sql`SELECT bank_ref, problem, source, first_seen, last_seen, times FROM bank_credit_skips
        WHERE last_seen >= ${sinceMs} ORDER BY last_seen DESC, id DESC LIMIT ${limit}`,
    ),
    q.query<{ n: unknown }>(
      sql`SELECT count(*)::int8 AS n FROM bank_credit_skips WHERE last_seen >= ${sinceMs}`,
    ),
  ])
  return {
    total: Number(count[0]!.n),
    rows: rows.map((r) => ({
      bankRef: r.bank_ref === '' ? null : r.bank_ref,
      problem: r.problem,
      source: r.source,
      firstSeen: Number(r.first_seen),
      lastSeen: Number(r.last_seen),
      times: Number(r.times),
    })),
  }
}
