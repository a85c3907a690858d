import type { Db, Queryable } from './db.js'
import { sql, type Sql } from './sql.js'
import type { SecretBox } from '../shared/secret-box.js'

/**
 * A column that holds values sealed under the master key (src/shared/secret-box.ts), declared by
 * the module that owns its table (issue 32), so that `svcpay keys rotate-master` can reseal every
 * stored secret and `svcpay keys status` can count what each master key still seals.
 */
export interface SealedColumn {
  /** `table.column`, as the status shows it. */
  name: string
  table: string
  /** The table's key (text). */
  id: string
  column: string
  /** Which rows hold a sealed value (for a table whose other rows do not: settings). */
  where?: Sql
}

/** What a run of the reseal did; a run stopped by a crash is simply run again. */
export interface ResealReport {
  /** Values resealed under the current key, by column. */
  resealed: Record<string, number>
  /** Values no key of the ring opens (sealed by an unknown key), left as they are, by column. */
  unopenable: Record<string, number>
  batches: number
}

export const RESEAL_BATCH_MAX = 1_000

const rowsOf = (c: SealedColumn) =>
  c.where ? sql`${c.where} AND ${sql.ident(c.column)} IS NOT NULL` : sql`${sql.ident(c.column)} IS NOT NULL`

/**
 * One batch: up to `limit` values after `after` (by key) not yet sealed by the current key, locked,
 * opened with the ring and sealed again under the current key, in one database transaction. A value
 * changed meanwhile by its owner is locked until its change commits and is read as changed.
 */
export async function resealBatch(
  q: Queryable,
  box: SecretBox,
  c: SealedColumn,
  after: string,
  limit: number,
): Promise<{ last: string | undefined; resealed: number; unopenable: number; seen: number }> {
  const current = `v2.${box.currentKeyId}.%`
  const { rows } = await q.query<{ id: string; sealed: string }>(
    sql`SELECT ${sql.ident(c.id)} AS id, ${sql.ident(c.column)} AS sealed FROM ${sql.ident(c.table)}
         WHERE ${rowsOf(c)} AND ${sql.ident(c.id)} > ${after} AND ${sql.ident(c.column)} NOT LIKE ${current}
         ORDER BY ${sql.ident(c.id)} LIMIT ${sql.int(limit)} FOR UPDATE`,
  )
  let resealed = 0
  let unopenable = 0
  for (const row of rows) {
    let plain: string
    try {
      plain = box.open(row.sealed)
    } catch {
      unopenable++
      continue
    }
    await q.query(
      sql`UPDATE ${sql.ident(c.table)} SET ${sql.ident(c.column)} = ${box.seal(plain)}
           WHERE ${sql.ident(c.id)} = ${row.id} AND ${sql.ident(c.column)} = ${row.sealed}`,
    )
    resealed++
  }
  return { last: rows.at(-1)?.id, resealed, unopenable, seen: rows.length }
}

/**
 * Reseals every value of `columns` under the current master key, online: in batches of
 * `batchSize`, each one database transaction, so a request that needs a secret waits at most for
 * one batch. Resumable by construction: what is already sealed by the current key is skipped (its
 * key id says so), so a run after a crash goes on where the last committed batch ended.
 */
export async function resealAll(
  db: Db,
  box: SecretBox,
  columns: readonly SealedColumn[],
  opts: { batchSize: number; onBatch?: (column: string, resealed: number) => Promise<void> | void },
): Promise<ResealReport> {
  const batchSize = Math.max(1, Math.min(opts.batchSize, RESEAL_BATCH_MAX))
  const report: ResealReport = { resealed: {}, unopenable: {}, batches: 0 }
  for (const c of columns) {
    report.resealed[c.name] = 0
    report.unopenable[c.name] = 0
    let after = ''
    for (;;) {
      const batch = await db.tx((q) => resealBatch(q, box, c, after, batchSize))
      report.batches++
      report.resealed[c.name]! += batch.resealed
      report.unopenable[c.name]! += batch.unopenable
      await opts.onBatch?.(c.name, batch.resealed)
      if (batch.seen < batchSize || batch.last === undefined) break
      after = batch.last
    }
  }
  return report
}

/** How many values of a column each master key seals: by key id, `''` for values of before key ids. */
export async function countSealedByKey(q: Queryable, c: SealedColumn): Promise<Map<string, number>> {
  const col = sql.ident(c.column)
  const { rows } = await q.query<{ kid: string; n: bigint }>(
    sql`SELECT CASE WHEN ${col} LIKE 'v2.%' THEN split_part(${col}, '.', 2) ELSE '' END AS kid, count(*)::int8 AS n
          FROM ${sql.ident(c.table)} WHERE ${rowsOf(c)} GROUP BY 1`,
  )
  return new Map(rows.map((r) => [r.kid, Number(r.n)]))
}
