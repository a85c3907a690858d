import type { Db, Queryable } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'
import { DecimalText } from '../shared/amount.js'

export { csvField } from '../shared/csv.js'

/**
 * The audit trail (table admin_audit, append-only in the database: migration 022). Rows are written
 * with the transaction's own connection, so that a change and its record commit together.
 */
export interface AuditEntry {
  operatorId: string
  operatorEmail: string
  action: string
  target: string | null
  before: unknown
  after: unknown
  clientIp: string | null
  requestId: string | null
}

export interface AuditRow extends AuditEntry {
  id: string
  at: number
}

export interface AuditFilter {
  operator?: string
  action?: string
  target?: string
  fromMs?: number
  toMs?: number
}

export const AUDIT_PAGE_SIZE_MAX = 200
const CSV_BATCH = 1_000
// Fields that hold a credential never reach the audit trail, whatever a handler returned.
const SECRET_FIELD = /secret|password|token|totp|otpauth|setup/i
const JSON_DEPTH_MAX = 6

// What jsonb cannot hold: a lone UTF-16 surrogate (JSON.stringify writes it as an escape jsonb
// refuses) and NUL. Either would make the audit row, and so the change it records, fail.
// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const NOT_FOR_JSONB = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\u0000/g
/** Text that PostgreSQL's text and jsonb can hold: lone surrogates and NUL become U+FFFD. */
export const storable = (text: string): string => text.replace(NOT_FOR_JSONB, '\ufffd')

/** A copy of a value with credentials replaced, safe to keep forever. */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return null
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'string') return storable(value)
  if (typeof value !== 'object') return value
  // An amount as the API answers it: its exact decimal text, as the response printed it.
  if (value instanceof DecimalText) return value.text
  if (depth >= JSON_DEPTH_MAX) return '[deep]'
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => redact(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value))
    out[storable(k)] = SECRET_FIELD.test(k) ? '[redacted]' : redact(v, depth + 1)
  return out
}

export async function writeAudit(q: Queryable, entry: AuditEntry, atMs = Date.now()): Promise<void> {
  const before = entry.before == null ? null : JSON.stringify(redact(entry.before))
  const after = entry.after == null ? null : JSON.stringify(redact(entry.after))
  await q.query(
    sql`INSERT INTO admin_audit (at, operator_id, operator_email, action, target, before, after, client_ip, request_id)
     VALUES (${atMs}, ${entry.operatorId}, ${entry.operatorEmail}, ${entry.action}, ${entry.target}, ${before},
             ${after}, ${entry.clientIp}, ${entry.requestId})`,
  )
}

function where(filter: AuditFilter, beforeId: bigint | undefined): Sql {
  const clauses: Sql[] = []
  if (filter.operator) {
    const operator = sql.param(filter.operator)
    clauses.push(sql`(operator_id = ${operator} OR operator_email = ${operator})`)
  }
  if (filter.action) clauses.push(sql`action = ${filter.action}`)
  if (filter.target) clauses.push(sql`target = ${filter.target}`)
  if (filter.fromMs !== undefined) clauses.push(sql`at >= ${filter.fromMs}`)
  if (filter.toMs !== undefined) clauses.push(sql`at < ${filter.toMs}`)
  if (beforeId !== undefined) clauses.push(sql`id < ${beforeId}`)
  return clauses.length ? sql`WHERE ${sql.join(clauses, sql` AND `)}` : sql.empty
}

function toRow(r: any): AuditRow {
  return {
    id: String(r.id),
    at: Number(r.at),
    operatorId: r.operator_id,
    operatorEmail: r.operator_email,
    action: r.action,
    target: r.target,
    before: r.before,
    after: r.after,
    clientIp: r.client_ip,
    requestId: r.request_id,
  }
}

async function page(
  db: Queryable,
  filter: AuditFilter,
  beforeId: bigint | undefined,
  limit: number,
): Promise<AuditRow[]> {
  const { rows } = await db.query(
    sql`SELECT * FROM admin_audit ${where(filter, beforeId)} ORDER BY id DESC LIMIT ${sql.int(limit)}`,
  )
  return rows.map(toRow)
}

/** Newest first; `cursor` is opaque to callers (the id of the last row of the previous page). */
export async function listAudit(
  db: Db,
  filter: AuditFilter,
  opts: { limit: number; cursor?: string },
): Promise<{ data: AuditRow[]; nextCursor: string | null }> {
  const beforeId = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor)
  const rows = await page(db, filter, beforeId, opts.limit + 1)
  const data = rows.slice(0, opts.limit)
  return { data, nextCursor: rows.length > opts.limit ? encodeCursor(data[data.length - 1]!.id) : null }
}

export function encodeCursor(id: string): string {
  return Buffer.from(`a:${id}`).toString('base64url')
}

/** undefined-safe: a malformed cursor is the caller's error, reported as such by the route. */
export function decodeCursor(cursor: string): bigint {
  const m = /^a:([1-9][0-9]{0,18})$/.exec(Buffer.from(cursor, 'base64url').toString())
  if (!m) throw new RangeError('bad cursor')
  return BigInt(m[1]!)
}

export const AUDIT_CSV_COLUMNS = [
  'id',
  'at',
  'operator_id',
  'operator_email',
  'action',
  'target',
  'before',
  'after',
  'client_ip',
  'request_id',
]

/** The matching rows as CSV rows (arrays of fields), newest first, in batches read one at a time. */
export async function* auditCsvBatches(db: Db, filter: AuditFilter): AsyncGenerator<unknown[][]> {
  let beforeId: bigint | undefined
  for (;;) {
    const rows = await page(db, filter, beforeId, CSV_BATCH)
    if (rows.length === 0) return
    yield rows.map((r) => [
      r.id,
      new Date(r.at).toISOString(),
      r.operatorId,
      r.operatorEmail,
      r.action,
      r.target,
      r.before,
      r.after,
      r.clientIp,
      r.requestId,
    ])
    if (rows.length < CSV_BATCH) return
    beforeId = BigInt(rows[rows.length - 1]!.id)
  }
}
