import type { Db, Queryable } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { DELIVERY_CHANNEL } from './channels.js'
import { eventIdOf } from './delivery-worker.js'
import { liveWebhook, webhookNotFound } from './registration.js'

export const DELIVERY_PAGE_SIZE_DEFAULT = 20
export const DELIVERY_PAGE_SIZE_MAX = 100
export const DELIVERY_PAGE_MAX = 100_000

/** Attempts shown with each delivery; the schedule has 27 at most, so this shows them all. */
const HISTORY_MAX = 30

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled'
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'cancelled']

/** One recorded attempt of a delivery. */
export interface AttemptView {
  attempt: number
  at: number
  /** The receiver's status code, when it answered. */
  httpStatus: number | null
  latencyMs: number
  /** `timeout`, `connection_refused`, `http_500`, ... (docs/webhooks.md); null on success. */
  error: string | null
}

/** One event's delivery to one webhook, with its attempts. */
export interface DeliveryView {
  id: string
  webhookId: string
  /** The `X-Svcpay-Event-Id` it carries. */
  eventId: string
  txnId: string
  txnState: string
  status: DeliveryStatus
  attempts: number
  /** When the next attempt is due (pending only), epoch ms. */
  nextAttemptAt: number | null
  lastStatus: number | null
  lastError: string | null
  createdAt: number
  updatedAt: number
  history: AttemptView[]
}

export interface DeliveryPage {
  data: DeliveryView[]
  pagination: { page: number; limit: number; total: number }
}

export interface DeliveryQuery {
  page?: string
  limit?: string
  status?: string
}

/** Which deliveries: of one account, of one of its webhooks, of one transaction, or all (operators). */
export interface DeliveryFilter {
  accountId?: string
  webhookId?: string
  txnId?: string
}

export interface DeliveryRecordDeps {
  db: Db
  now: () => number
}

interface DeliveryRow {
  id: bigint
  webhook_id: string
  event_id: bigint
  txn_id: string
  txn_state: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: bigint | null
  last_status: number | null
  last_error: string | null
  created_at: bigint
  updated_at: bigint
}

const DELIVERY_COLUMNS = sql`d.id, d.webhook_id, d.event_id, e.txn_id, e.txn_state, d.status, d.attempts, d.next_attempt_at,
  d.last_status, d.last_error, d.created_at, d.updated_at`

/** Deliveries newest first, a page at a time, each with its recent attempts. */
export async function listDeliveries(
  deps: Pick<DeliveryRecordDeps, 'db'>,
  filter: DeliveryFilter,
  query: DeliveryQuery,
): Promise<DeliveryPage> {
  const { db } = deps
  const limit = wholeNumber(query.limit, 'limit', DELIVERY_PAGE_SIZE_DEFAULT, DELIVERY_PAGE_SIZE_MAX)
  const page = wholeNumber(query.page, 'page', 1, DELIVERY_PAGE_MAX)
  const where: Sql[] = []
  if (filter.accountId !== undefined) where.push(sql`w.account_id = ${filter.accountId}`)
  if (filter.txnId !== undefined) where.push(sql`e.txn_id = ${filter.txnId}`)
  if (filter.webhookId !== undefined) {
    if (filter.accountId === undefined) throw new Error('a webhook filter needs its account')
    await liveWebhook(db, filter.accountId, filter.webhookId)
    where.push(sql`d.webhook_id = ${filter.webhookId}`)
  }
  if (query.status !== undefined && query.status !== '') {
    if (!DELIVERY_STATUSES.includes(query.status as DeliveryStatus)) {
      throw fieldError('invalid_request', 'query.status', `must be one of ${DELIVERY_STATUSES.join(', ')}`)
    }
    where.push(sql`d.status = ${query.status}`)
  }
  const from = sql`FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id
                WHERE ${where.length ? sql.join(where, sql` AND `) : sql`TRUE`}`
  const { rows: counted } = await db.query<{ total: bigint }>(sql`SELECT count(*) AS total ${from}`)
  const { rows } = await db.query<DeliveryRow>(
    sql`SELECT ${DELIVERY_COLUMNS} ${from} ORDER BY d.id DESC LIMIT ${sql.int(limit)} OFFSET ${sql.int((page - 1) * limit)}`,
  )
  return {
    data: await present(db, rows),
    pagination: { page, limit, total: Number(counted[0]?.total ?? 0n) },
  }
}

/**
 * Queues the delivery's event again, as a new delivery to the account's live webhook (with the
 * same event id); with `webhookId`, only a delivery of that live webhook qualifies.
 */
export async function redeliver(
  deps: DeliveryRecordDeps,
  filter: Pick<DeliveryFilter, 'accountId' | 'webhookId'>,
  deliveryId: string,
): Promise<DeliveryView> {
  if (!/^[1-9][0-9]{0,17}$/.test(deliveryId)) throw new ApiError('not_found', 'Delivery not found')
  const created = await deps.db.tx(async (q) => {
    const { rows } = await q.query<{
      event_id: bigint
      account_id: string
      webhook_id: string
      txn_id: string
    }>(
      sql`SELECT d.event_id, w.account_id, d.webhook_id, e.txn_id
         FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id
        WHERE d.id = ${deliveryId}`,
    )
    const found = rows[0]
    if (
      !found ||
      (filter.accountId !== undefined && found.account_id !== filter.accountId) ||
      (filter.webhookId !== undefined && found.webhook_id !== filter.webhookId)
    ) {
      throw new ApiError('not_found', 'Delivery not found')
    }
    const { rows: live } = await q.query<{ id: string }>(
      sql`SELECT id FROM webhooks WHERE account_id = ${found.account_id} AND deleted_at IS NULL`,
    )
    const target = live[0]
    if (!target || (filter.webhookId !== undefined && target.id !== filter.webhookId)) {
      if (filter.webhookId !== undefined) throw webhookNotFound()
      throw new ApiError('invalid_state', 'The account has no webhook to deliver to')
    }
    const at = deps.now()
    const atParam = sql.param(at)
    const { rows: inserted } = await q.query<{ id: bigint }>(
      sql`INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at, created_at, updated_at)
       VALUES (${found.event_id}, ${target.id}, 'pending', ${atParam}, ${atParam}, ${atParam}) RETURNING id`,
    )
    // Wakes the delivery workers of every instance, as a new event would.
    await q.notify(DELIVERY_CHANNEL)
    return inserted[0]!.id
  })
  const { rows } = await deps.db.query<DeliveryRow>(
    sql`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ${created}`,
  )
  return (await present(deps.db, rows))[0]!
}

async function present(q: Queryable, rows: DeliveryRow[]): Promise<DeliveryView[]> {
  const history = await histories(
    q,
    rows.map((r) => r.id),
  )
  return rows.map((r) => ({
    id: String(r.id),
    webhookId: r.webhook_id,
    eventId: eventIdOf(r.event_id),
    txnId: r.txn_id,
    txnState: r.txn_state,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.status === 'pending' && r.next_attempt_at !== null ? Number(r.next_attempt_at) : null,
    lastStatus: r.last_status,
    lastError: r.last_error,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    history: history.get(String(r.id)) ?? [],
  }))
}

/** The last HISTORY_MAX attempts of each delivery, by delivery id. */
async function histories(q: Queryable, ids: bigint[]): Promise<Map<string, AttemptView[]>> {
  const out = new Map<string, AttemptView[]>()
  if (ids.length === 0) return out
  const { rows } = await q.query<{
    delivery_id: bigint
    attempt: number
    at: bigint
    http_status: number | null
    latency_ms: number
    error: string | null
  }>(
    sql`SELECT delivery_id, attempt, at, http_status, latency_ms, error FROM (
       SELECT a.*, row_number() OVER (PARTITION BY delivery_id ORDER BY id DESC) AS n
         FROM delivery_attempts a WHERE delivery_id = ANY(${ids.map(String)}::bigint[])) recent
      WHERE n <= ${sql.int(HISTORY_MAX)} ORDER BY delivery_id, attempt, at`,
  )
  for (const r of rows) {
    const key = String(r.delivery_id)
    const list = out.get(key) ?? []
    list.push({
      attempt: r.attempt,
      at: Number(r.at),
      httpStatus: r.http_status,
      latencyMs: r.latency_ms,
      error: r.error,
    })
    out.set(key, list)
  }
  return out
}

function wholeNumber(text: string | undefined, name: string, fallback: number, max: number): number {
  if (text === undefined || text === '') return fallback
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw fieldError('invalid_request', `query.${name}`, `must be a whole number from 1 to ${max}`)
  }
  return Number(text)
}
