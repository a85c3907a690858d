import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import type { Destination, DestType } from './normalise.js'

/**
 * The statements of screening's tables (migration 041): its deny lists, the hits it found and the
 * provider's answers. Only this module writes or reads them.
 */

export interface ListSummary {
  source: string
  entries: number
  loadedAt: number
  loadedBy: string
}

export type HitStage = 'quote' | 'confirm' | 'deposit'
export type HitOutcome = 'refused' | 'held' | 'released'

export interface NewHit {
  at: number
  accountId: string
  txnId: string
  kind: string
  stage: HitStage
  type: DestType
  value: string
  /** The list that matched (or `provider`) and its entry. */
  source: string
  entry: string
  outcome: HitOutcome
}

export interface Hit extends NewHit {
  id: string
  reviewedAt: number | null
  reviewedBy: string | null
}

/** Rows inserted by one statement of a load. */
const INSERT_BATCH = 5_000
export const HITS_PAGE_MAX = 500

/** Replace the entries of `source` with `entries`, all in the caller's transaction. */
export async function replaceList(
  q: Queryable,
  list: { source: string; entries: readonly Destination[]; by: string; at: number },
): Promise<{ before: number | null; after: number }> {
  const { rows } = await q.query<{ entries: number }>(
    sql`SELECT entries FROM screening_lists WHERE source = ${list.source} FOR UPDATE`,
  )
  const before = rows[0] ? Number(rows[0].entries) : null
  await q.query(
    sql`INSERT INTO screening_lists (source, entries, loaded_at, loaded_by)
        VALUES (${list.source}, ${list.entries.length}, ${list.at}, ${list.by})
        ON CONFLICT (source) DO UPDATE SET entries = EXCLUDED.entries, loaded_at = EXCLUDED.loaded_at, loaded_by = EXCLUDED.loaded_by`,
  )
  await q.query(sql`DELETE FROM screening_entries WHERE source = ${list.source}`)
  for (let i = 0; i < list.entries.length; i += INSERT_BATCH) {
    const batch = list.entries.slice(i, i + INSERT_BATCH)
    await q.query(
      sql`INSERT INTO screening_entries (source, dest_type, value)
          SELECT ${list.source}, e.t, e.v FROM unnest(${batch.map((d) => d.type)}::text[], ${batch.map((d) => d.value)}::text[]) AS e(t, v)
          ON CONFLICT DO NOTHING`,
    )
  }
  return { before, after: list.entries.length }
}

/** Remove a list and its entries; its number of entries, or null when there was none. */
export async function removeList(q: Queryable, source: string): Promise<number | null> {
  const { rows } = await q.query<{ entries: number }>(
    sql`DELETE FROM screening_lists WHERE source = ${source} RETURNING entries`,
  )
  return rows[0] ? Number(rows[0].entries) : null
}

export async function listLists(q: Queryable): Promise<ListSummary[]> {
  const { rows } = await q.query<{ source: string; entries: number; loaded_at: bigint; loaded_by: string }>(
    sql`SELECT source, entries, loaded_at, loaded_by FROM screening_lists ORDER BY source`,
  )
  return rows.map((r) => ({
    source: r.source,
    entries: Number(r.entries),
    loadedAt: Number(r.loaded_at),
    loadedBy: r.loaded_by,
  }))
}

/** The list entries any of `dests` matches, one per (list, destination). */
export async function matchingEntries(
  q: Queryable,
  dests: readonly Destination[],
): Promise<Array<{ source: string; type: DestType; value: string }>> {
  if (dests.length === 0) return []
  const { rows } = await q.query<{ source: string; dest_type: DestType; value: string }>(
    sql`SELECT e.source, e.dest_type, e.value FROM screening_entries e
        JOIN unnest(${dests.map((d) => d.type)}::text[], ${dests.map((d) => d.value)}::text[]) AS d(t, v)
          ON e.dest_type = d.t AND e.value = d.v
        ORDER BY e.source, e.dest_type, e.value`,
  )
  return rows.map((r) => ({ source: r.source, type: r.dest_type, value: r.value }))
}

/** Record a hit once (a second look at the same transaction, stage and entry adds nothing). */
export async function insertHit(q: Queryable, hit: NewHit): Promise<boolean> {
  const { rowCount } = await q.query(
    sql`INSERT INTO screening_hits (at, account_id, txn_id, kind, stage, dest_type, value, source, entry, outcome)
        VALUES (${hit.at}, ${hit.accountId}, ${hit.txnId}, ${hit.kind}, ${hit.stage}, ${hit.type}, ${hit.value}, ${hit.source}, ${hit.entry}, ${hit.outcome})
        ON CONFLICT (txn_id, stage, dest_type, value, source) DO NOTHING`,
  )
  return rowCount > 0
}

interface HitRow {
  id: bigint | string
  at: bigint
  account_id: string
  txn_id: string
  kind: string
  stage: HitStage
  dest_type: DestType
  value: string
  source: string
  entry: string
  outcome: HitOutcome
  reviewed_at: bigint | null
  reviewed_by: string | null
}

function hitOf(r: HitRow): Hit {
  return {
    id: String(r.id),
    at: Number(r.at),
    accountId: r.account_id,
    txnId: r.txn_id,
    kind: r.kind,
    stage: r.stage,
    type: r.dest_type,
    value: r.value,
    source: r.source,
    entry: r.entry,
    outcome: r.outcome,
    reviewedAt: r.reviewed_at === null ? null : Number(r.reviewed_at),
    reviewedBy: r.reviewed_by,
  }
}

/** Hits, newest first; only those no operator has reviewed yet with `unreviewed`. */
export async function listHits(
  q: Queryable,
  opts: { unreviewed?: boolean; txnId?: string; limit: number },
): Promise<Hit[]> {
  const limit = sql.int(Math.max(1, Math.min(opts.limit, HITS_PAGE_MAX)))
  const unreviewed = opts.unreviewed ? sql`AND reviewed_at IS NULL` : sql.empty
  const txn = opts.txnId === undefined ? sql.empty : sql`AND txn_id = ${opts.txnId}`
  const { rows } = await q.query<HitRow>(
    sql`SELECT * FROM screening_hits WHERE TRUE ${unreviewed} ${txn} ORDER BY at DESC, id DESC LIMIT ${limit}`,
  )
  return rows.map(hitOf)
}

export async function unreviewedHitCount(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: bigint }>(
    sql`SELECT count(*) AS n FROM screening_hits WHERE reviewed_at IS NULL`,
  )
  return Number(rows[0]?.n ?? 0)
}

/** Mark a hit reviewed; the hit as it was before, or undefined when there is none. */
export async function reviewHit(
  q: Queryable,
  id: string,
  by: string,
  at: number,
): Promise<{ before: Hit; after: Hit } | undefined> {
  if (!/^[0-9]{1,18}$/.test(id)) return undefined
  const { rows } = await q.query<HitRow>(sql`SELECT * FROM screening_hits WHERE id = ${id} FOR UPDATE`)
  if (!rows[0]) return undefined
  const before = hitOf(rows[0])
  const { rows: updated } = await q.query<HitRow>(
    sql`UPDATE screening_hits SET reviewed_at = COALESCE(reviewed_at, ${at}), reviewed_by = COALESCE(reviewed_by, ${by})
        WHERE id = ${id} RETURNING *`,
  )
  return { before, after: hitOf(updated[0]!) }
}

/** Let a held deposit's credit go on: each of its hits is released (and reviewed). */
export async function releaseDepositHits(q: Queryable, txnId: string, by: string, at: number): Promise<void> {
  await q.query(
    sql`UPDATE screening_hits SET outcome = 'released', reviewed_at = COALESCE(reviewed_at, ${at}), reviewed_by = COALESCE(reviewed_by, ${by})
        WHERE txn_id = ${txnId} AND stage = 'deposit' AND outcome = 'held'`,
  )
}

/** Whether a deposit's credit is held by a hit no operator has released. */
export async function depositHeld(q: Queryable, txnId: string): Promise<boolean> {
  const { rowCount } = await q.query(
    sql`SELECT 1 FROM screening_hits WHERE txn_id = ${txnId} AND stage = 'deposit' AND outcome = 'held' LIMIT 1`,
  )
  return rowCount > 0
}

export type ProviderVerdict = 'clear' | 'hit' | 'error'

/** The provider's answer for a quote, recorded at quote for its confirm. */
export async function saveProviderCheck(
  q: Queryable,
  check: { txnId: string; at: number; verdict: ProviderVerdict; detail: string },
): Promise<void> {
  await q.query(
    sql`INSERT INTO screening_checks (txn_id, at, verdict, detail) VALUES (${check.txnId}, ${check.at}, ${check.verdict}, ${check.detail.slice(0, 200)})
        ON CONFLICT (txn_id) DO UPDATE SET at = EXCLUDED.at, verdict = EXCLUDED.verdict, detail = EXCLUDED.detail`,
  )
}

export async function providerCheck(
  q: Queryable,
  txnId: string,
): Promise<{ verdict: ProviderVerdict; detail: string } | undefined> {
  const { rows } = await q.query<{ verdict: ProviderVerdict; detail: string }>(
    sql`SELECT verdict, detail FROM screening_checks WHERE txn_id = ${txnId}`,
  )
  return rows[0]
}
