import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'

import type { Db, Queryable } from '../db/db.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import type { SecretBox } from '../shared/secret-box.js'
import { checkCallbackUrl, classifyAddress, isClassAllowed } from './callback-url.js'
import { eventIdOf } from './delivery-worker.js'
import type { ResolveHost } from './http-deliver.js'
import { DELIVERY_CHANNEL } from './channels.js'

/** Webhook secrets: at least this long (contract section 7), and a bound on the other side. */
export const SECRET_LENGTH_MIN = 16
export const SECRET_LENGTH_MAX = 256

/** Registration does not wait longer than this for DNS; an unanswered name is checked at delivery. */
export const REGISTRATION_DNS_TIMEOUT_MS = 2_000

export const DELIVERY_PAGE_SIZE_DEFAULT = 20
export const DELIVERY_PAGE_SIZE_MAX = 100
const PAGE_MAX = 100_000

/** Attempts shown with each delivery; the schedule has 27 at most, so this shows them all. */
const HISTORY_MAX = 30

export interface WebhookInput {
  callback: string
  secret: string
}

/** A webhook as the API shows it; the secret is write-only and never leaves the service. */
export interface WebhookView {
  id: string
  callback: string
  createdAt: number
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled'
const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'cancelled']

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

/** Webhook registration (one per account) and the record of its deliveries. */
export interface WebhooksService {
  /** Registers the account's webhook, replacing (and stopping the deliveries of) any earlier one. */
  create(accountId: string, input: WebhookInput): Promise<WebhookView>
  list(accountId: string): Promise<WebhookView[]>
  /** Changes the callback and/or the secret; pending deliveries go to the new URL, signed with the new secret. */
  update(
    accountId: string,
    webhookId: string,
    input: Partial<WebhookInput>,
  ): Promise<WebhookView & { updatedAt: number }>
  /** Removes the webhook and cancels its pending deliveries. */
  remove(accountId: string, webhookId: string): Promise<void>
  /**
   * Deliveries newest first: of one live webhook of the account, or (operators) of all its webhooks;
   * the console also asks for those of one transaction, or of every account (no accountId).
   */
  listDeliveries(
    filter: { accountId?: string; webhookId?: string; txnId?: string },
    query: DeliveryQuery,
  ): Promise<DeliveryPage>
  /**
   * Queues the delivery's event again, as a new delivery to the account's live webhook (with the
   * same event id); with `webhookId`, only a delivery of that live webhook qualifies.
   */
  redeliver(filter: { accountId?: string; webhookId?: string }, deliveryId: string): Promise<DeliveryView>
}

export interface WebhooksDeps {
  db: Db
  box: SecretBox
  /** `ALLOW_HTTP_WEBHOOKS`: http:// and loopback receivers. */
  allowHttp: boolean
  /** `ALLOW_PRIVATE_WEBHOOKS`: receivers in private ranges. */
  allowPrivate: boolean
  /** Replaces the system resolver (tests). */
  resolveHost?: ResolveHost
  now?: () => number
}

interface WebhookRow {
  id: string
  account_id: string
  callback: string
  created_at: bigint
  updated_at: bigint
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

const DELIVERY_COLUMNS = `d.id, d.webhook_id, d.event_id, e.txn_id, e.txn_state, d.status, d.attempts, d.next_attempt_at,
  d.last_status, d.last_error, d.created_at, d.updated_at`

const view = (row: WebhookRow): WebhookView => ({
  id: row.id,
  callback: row.callback,
  createdAt: Number(row.created_at),
})

const notFound = () => new ApiError('not_found', 'Webhook not found')

export function createWebhooksService(deps: WebhooksDeps): WebhooksService {
  const { db } = deps
  const now = deps.now ?? Date.now
  const policy = { allowHttp: deps.allowHttp, allowPrivate: deps.allowPrivate }

  /** Checks the URL as written, then where its host name points today (docs/webhooks.md). */
  async function checkedCallback(callback: string): Promise<string> {
    const check = checkCallbackUrl(callback, policy)
    if (!check.ok) throw fieldError('invalid_request', 'callback', check.issue)
    let host = check.url.hostname
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
    if (isIP(host) === 0) {
      const addresses = await resolveWithin(host, deps.resolveHost ?? systemResolve)
      const allowed = { allowLoopback: deps.allowHttp, allowPrivate: deps.allowPrivate }
      if (addresses?.some((a) => !isClassAllowed(classifyAddress(a.address), allowed))) {
        throw fieldError(
          'invalid_request',
          'callback',
          'must not resolve to a private, loopback, link-local, reserved or metadata address',
        )
      }
    }
    return check.url.href
  }

  function checkedSecret(secret: string): string {
    if (secret.length < SECRET_LENGTH_MIN) {
      throw fieldError('invalid_request', 'secret', `must be at least ${SECRET_LENGTH_MIN} characters`)
    }
    if (secret.length > SECRET_LENGTH_MAX) {
      throw fieldError('invalid_request', 'secret', `must be at most ${SECRET_LENGTH_MAX} characters`)
    }
    return secret
  }

  async function retire(q: Queryable, webhookIds: string[], at: number): Promise<void> {
    if (webhookIds.length === 0) return
    await q.query('UPDATE webhooks SET deleted_at = $2, updated_at = $2 WHERE id = ANY($1::text[])', [
      webhookIds,
      at,
    ])
    await q.query(
      `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = $2
        WHERE webhook_id = ANY($1::text[]) AND status = 'pending'`,
      [webhookIds, at],
    )
  }

  async function liveWebhook(
    q: Queryable,
    accountId: string,
    webhookId: string,
    lock = false,
  ): Promise<WebhookRow> {
    const { rows } = await q.query<WebhookRow>(
      `SELECT id, account_id, callback, created_at, updated_at FROM webhooks
        WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL ${lock ? 'FOR UPDATE' : ''}`,
      [webhookId, accountId],
    )
    if (!rows[0]) throw notFound()
    return rows[0]
  }

  async function histories(ids: bigint[]): Promise<Map<string, AttemptView[]>> {
    const out = new Map<string, AttemptView[]>()
    if (ids.length === 0) return out
    const { rows } = await db.query<{
      delivery_id: bigint
      attempt: number
      at: bigint
      http_status: number | null
      latency_ms: number
      error: string | null
    }>(
      `SELECT delivery_id, attempt, at, http_status, latency_ms, error FROM (
         SELECT a.*, row_number() OVER (PARTITION BY delivery_id ORDER BY id DESC) AS n
           FROM delivery_attempts a WHERE delivery_id = ANY($1::bigint[])) recent
        WHERE n <= ${HISTORY_MAX} ORDER BY delivery_id, attempt, at`,
      [ids.map(String)],
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

  async function present(rows: DeliveryRow[]): Promise<DeliveryView[]> {
    const history = await histories(rows.map((r) => r.id))
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

  return {
    async create(accountId, input) {
      const callback = await checkedCallback(input.callback)
      const secretEnc = deps.box.seal(checkedSecret(input.secret))
      for (let attempt = 1; ; attempt++) {
        try {
          return await db.tx(async (q) => {
            const at = now()
            const { rows: live } = await q.query<{ id: string }>(
              'SELECT id FROM webhooks WHERE account_id = $1 AND deleted_at IS NULL FOR UPDATE',
              [accountId],
            )
            await retire(
              q,
              live.map((w) => w.id),
              at,
            )
            const { rows } = await q.query<WebhookRow>(
              `INSERT INTO webhooks (id, account_id, callback, secret_enc, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $5) RETURNING id, account_id, callback, created_at, updated_at`,
              [newId('wh'), accountId, callback, secretEnc, at],
            )
            return view(rows[0]!)
          })
        } catch (err) {
          // Two registrations at once: the other one's new row was invisible to our SELECT, and the
          // one-live-webhook index refused ours. Going again replaces theirs, as a later create should.
          if ((err as { code?: string }).code === '23505' && attempt < 3) continue
          throw err
        }
      }
    },

    async list(accountId) {
      const { rows } = await db.query<WebhookRow>(
        `SELECT id, account_id, callback, created_at, updated_at FROM webhooks
          WHERE account_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC`,
        [accountId],
      )
      return rows.map(view)
    },

    async update(accountId, webhookId, input) {
      if (input.callback === undefined && input.secret === undefined) {
        throw new ApiError('invalid_request', 'Send callback, secret or both', [
          { field: 'callback', issue: 'callback or secret is required' },
        ])
      }
      const callback = input.callback === undefined ? undefined : await checkedCallback(input.callback)
      const secretEnc = input.secret === undefined ? undefined : deps.box.seal(checkedSecret(input.secret))
      return db.tx(async (q) => {
        await liveWebhook(q, accountId, webhookId, true)
        const { rows } = await q.query<WebhookRow>(
          `UPDATE webhooks SET callback = COALESCE($2, callback), secret_enc = COALESCE($3, secret_enc), updated_at = $4
            WHERE id = $1 RETURNING id, account_id, callback, created_at, updated_at`,
          [webhookId, callback ?? null, secretEnc ?? null, now()],
        )
        const row = rows[0]!
        return { ...view(row), updatedAt: Number(row.updated_at) }
      })
    },

    async remove(accountId, webhookId) {
      await db.tx(async (q) => {
        await liveWebhook(q, accountId, webhookId, true)
        await retire(q, [webhookId], now())
      })
    },

    async listDeliveries(filter, query) {
      const limit = wholeNumber(query.limit, 'limit', DELIVERY_PAGE_SIZE_DEFAULT, DELIVERY_PAGE_SIZE_MAX)
      const page = wholeNumber(query.page, 'page', 1, PAGE_MAX)
      const where: string[] = []
      const params: unknown[] = []
      if (filter.accountId !== undefined) {
        params.push(filter.accountId)
        where.push(`w.account_id = $${params.length}`)
      }
      if (filter.txnId !== undefined) {
        params.push(filter.txnId)
        where.push(`e.txn_id = $${params.length}`)
      }
      if (filter.webhookId !== undefined) {
        if (filter.accountId === undefined) throw new Error('a webhook filter needs its account')
        await liveWebhook(db, filter.accountId, filter.webhookId)
        params.push(filter.webhookId)
        where.push(`d.webhook_id = $${params.length}`)
      }
      if (query.status !== undefined && query.status !== '') {
        if (!DELIVERY_STATUSES.includes(query.status as DeliveryStatus)) {
          throw fieldError(
            'invalid_request',
            'query.status',
            `must be one of ${DELIVERY_STATUSES.join(', ')}`,
          )
        }
        params.push(query.status)
        where.push(`d.status = $${params.length}`)
      }
      const from = `FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id
                    WHERE ${where.length ? where.join(' AND ') : 'TRUE'}`
      const { rows: counted } = await db.query<{ total: bigint }>(`SELECT count(*) AS total ${from}`, params)
      const { rows } = await db.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} ${from} ORDER BY d.id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
        params,
      )
      return {
        data: await present(rows),
        pagination: { page, limit, total: Number(counted[0]?.total ?? 0n) },
      }
    },

    async redeliver(filter, deliveryId) {
      if (!/^[1-9][0-9]{0,17}$/.test(deliveryId)) throw new ApiError('not_found', 'Delivery not found')
      const created = await db.tx(async (q) => {
        const { rows } = await q.query<{
          event_id: bigint
          account_id: string
          webhook_id: string
          txn_id: string
        }>(
          `SELECT d.event_id, w.account_id, d.webhook_id, e.txn_id
             FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id
            WHERE d.id = $1`,
          [deliveryId],
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
          'SELECT id FROM webhooks WHERE account_id = $1 AND deleted_at IS NULL',
          [found.account_id],
        )
        const target = live[0]
        if (!target || (filter.webhookId !== undefined && target.id !== filter.webhookId)) {
          if (filter.webhookId !== undefined) throw notFound()
          throw new ApiError('invalid_state', 'The account has no webhook to deliver to')
        }
        const at = now()
        const { rows: inserted } = await q.query<{ id: bigint }>(
          `INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at, created_at, updated_at)
           VALUES ($1, $2, 'pending', $3, $3, $3) RETURNING id`,
          [found.event_id, target.id, at],
        )
        // Wakes the delivery workers of every instance, as a new event would.
        await q.notify(DELIVERY_CHANNEL)
        return inserted[0]!.id
      })
      const { rows } = await db.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1`,
        [created],
      )
      return (await present(rows))[0]!
    },
  }
}

function wholeNumber(text: string | undefined, name: string, fallback: number, max: number): number {
  if (text === undefined || text === '') return fallback
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw fieldError('invalid_request', `query.${name}`, `must be a whole number from 1 to ${max}`)
  }
  return Number(text)
}

async function systemResolve(hostname: string): Promise<Array<{ address: string; family: 4 | 6 }>> {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true })
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
}

/** The addresses of `host`, or undefined when it does not resolve in time (checked again at delivery). */
async function resolveWithin(host: string, resolve: ResolveHost) {
  let timer: NodeJS.Timeout | undefined
  const expiry = new Promise<undefined>((done) => {
    timer = setTimeout(() => done(undefined), REGISTRATION_DNS_TIMEOUT_MS)
  })
  try {
    return await Promise.race([resolve(host).catch(() => undefined), expiry])
  } finally {
    clearTimeout(timer)
  }
}
