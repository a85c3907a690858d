import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'

import type { Db, Queryable } from '../db/db.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import type { SecretBox } from '../shared/secret-box.js'
import { checkCallbackUrl, classifyAddress, isClassAllowed } from './callback-url.js'
import type { ResolveHost } from './http-deliver.js'
import { sql } from '../db/sql.js'

/** Webhook secrets: at least this long (contract section 7), and a bound on the other side. */
export const SECRET_LENGTH_MIN = 16
export const SECRET_LENGTH_MAX = 256

/** Registration does not wait longer than this for DNS; an unanswered name is checked at delivery. */
export const REGISTRATION_DNS_TIMEOUT_MS = 2_000

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

export interface RegistrationDeps {
  db: Db
  box: SecretBox
  /** `ALLOW_HTTP_WEBHOOKS`: http:// and loopback receivers. */
  allowHttp: boolean
  /** `ALLOW_PRIVATE_WEBHOOKS`: receivers in private ranges. */
  allowPrivate: boolean
  /** Replaces the system resolver (tests). */
  resolveHost?: ResolveHost
  now: () => number
}

interface WebhookRow {
  id: string
  account_id: string
  callback: string
  created_at: bigint
  updated_at: bigint
}

const WEBHOOK_COLUMNS = sql`id, account_id, callback, created_at, updated_at`

const view = (row: WebhookRow): WebhookView => ({
  id: row.id,
  callback: row.callback,
  createdAt: Number(row.created_at),
})

export const webhookNotFound = () => new ApiError('not_found', 'Webhook not found')

/** Registers the account's webhook, replacing (and stopping the deliveries of) any earlier one. */
export async function createWebhook(
  deps: RegistrationDeps,
  accountId: string,
  input: WebhookInput,
): Promise<WebhookView> {
  const callback = await checkedCallback(deps, input.callback)
  const secretEnc = deps.box.seal(checkedSecret(input.secret))
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.db.tx(async (q) => {
        const at = deps.now()
        const { rows: live } = await q.query<{ id: string }>(
          sql`SELECT id FROM webhooks WHERE account_id = ${accountId} AND deleted_at IS NULL FOR UPDATE`,
        )
        await retire(
          q,
          live.map((w) => w.id),
          at,
        )
        const stamp = sql.param(at)
        const { rows } = await q.query<WebhookRow>(
          sql`INSERT INTO webhooks (id, account_id, callback, secret_enc, created_at, updated_at)
           VALUES (${newId('wh')}, ${accountId}, ${callback}, ${secretEnc}, ${stamp}, ${stamp}) RETURNING ${WEBHOOK_COLUMNS}`,
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
}

export async function listWebhooks(
  deps: Pick<RegistrationDeps, 'db'>,
  accountId: string,
): Promise<WebhookView[]> {
  const { rows } = await deps.db.query<WebhookRow>(
    sql`SELECT ${WEBHOOK_COLUMNS} FROM webhooks
      WHERE account_id = ${accountId} AND deleted_at IS NULL ORDER BY created_at DESC`,
  )
  return rows.map(view)
}

/** Changes the callback and/or the secret; pending deliveries go to the new URL, signed with the new secret. */
export async function updateWebhook(
  deps: RegistrationDeps,
  accountId: string,
  webhookId: string,
  input: Partial<WebhookInput>,
): Promise<WebhookView & { updatedAt: number }> {
  if (input.callback === undefined && input.secret === undefined) {
    throw new ApiError('invalid_request', 'Send callback, secret or both', [
      { field: 'callback', issue: 'callback or secret is required' },
    ])
  }
  const callback = input.callback === undefined ? undefined : await checkedCallback(deps, input.callback)
  const secretEnc = input.secret === undefined ? undefined : deps.box.seal(checkedSecret(input.secret))
  return deps.db.tx(async (q) => {
    await liveWebhook(q, accountId, webhookId, true)
    const { rows } = await q.query<WebhookRow>(
      sql`UPDATE webhooks SET callback = COALESCE(${callback ?? null}, callback), secret_enc = COALESCE(${secretEnc ?? null}, secret_enc), updated_at = ${deps.now()}
        ${secretEnc === undefined ? sql.empty : sql`, previous_secret_enc = NULL, previous_secret_until = NULL`}
        WHERE id = ${webhookId} RETURNING ${WEBHOOK_COLUMNS}`,
    )
    const row = rows[0]!
    return { ...view(row), updatedAt: Number(row.updated_at) }
  })
}

/** The longest overlap a customer may choose for a rotated secret: 7 days, in seconds. */
export const SECRET_OVERLAP_MAX_S = 7 * 86_400
export const SECRET_OVERLAP_DEFAULT_S = 86_400

/**
 * Rotates the webhook's secret (issue 32): `secret` signs from now on, and the secret it replaces
 * keeps signing too (a second signature header on each delivery, docs/webhooks.md) for `overlapS`
 * seconds, so the receiver can switch to the new secret at any moment of the overlap. Rotating again
 * during an overlap replaces the previous secret with the one that was current.
 */
export async function rotateWebhookSecret(
  deps: RegistrationDeps,
  accountId: string,
  webhookId: string,
  input: { secret: string; overlapS?: number },
): Promise<WebhookView & { updatedAt: number; previousSecretUntil: number }> {
  const overlapS = input.overlapS ?? SECRET_OVERLAP_DEFAULT_S
  if (!Number.isSafeInteger(overlapS) || overlapS < 0 || overlapS > SECRET_OVERLAP_MAX_S)
    throw fieldError(
      'invalid_request',
      'overlapS',
      `must be a whole number of seconds from 0 to ${SECRET_OVERLAP_MAX_S}`,
    )
  const secretEnc = deps.box.seal(checkedSecret(input.secret))
  const at = deps.now()
  const until = at + overlapS * 1000
  return deps.db.tx(async (q) => {
    await liveWebhook(q, accountId, webhookId, true)
    const { rows } = await q.query<WebhookRow>(
      sql`UPDATE webhooks SET previous_secret_enc = secret_enc, previous_secret_until = ${until},
                              secret_enc = ${secretEnc}, updated_at = ${at}
        WHERE id = ${webhookId} RETURNING ${WEBHOOK_COLUMNS}`,
    )
    const row = rows[0]!
    return { ...view(row), updatedAt: Number(row.updated_at), previousSecretUntil: until }
  })
}

/** Removes the webhook and cancels its pending deliveries. */
export async function removeWebhook(
  deps: Pick<RegistrationDeps, 'db' | 'now'>,
  accountId: string,
  webhookId: string,
): Promise<void> {
  await deps.db.tx(async (q) => {
    await liveWebhook(q, accountId, webhookId, true)
    await retire(q, [webhookId], deps.now())
  })
}

/** The account's live webhook `webhookId`, or not_found; `lock` holds it for the transaction. */
export async function liveWebhook(
  q: Queryable,
  accountId: string,
  webhookId: string,
  lock = false,
): Promise<WebhookRow> {
  const { rows } = await q.query<WebhookRow>(
    sql`SELECT ${WEBHOOK_COLUMNS} FROM webhooks
      WHERE id = ${webhookId} AND account_id = ${accountId} AND deleted_at IS NULL ${lock ? sql`FOR UPDATE` : sql.empty}`,
  )
  if (!rows[0]) throw webhookNotFound()
  return rows[0]
}

/** Marks the webhooks deleted and cancels their pending deliveries. */
async function retire(q: Queryable, webhookIds: string[], at: number): Promise<void> {
  if (webhookIds.length === 0) return
  const atParam = sql.param(at)
  await q.query(
    sql`UPDATE webhooks SET deleted_at = ${atParam}, updated_at = ${atParam} WHERE id = ANY(${webhookIds}::text[])`,
  )
  await q.query(
    sql`UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = ${at}
      WHERE webhook_id = ANY(${webhookIds}::text[]) AND status = 'pending'`,
  )
}

/** Checks the URL as written, then where its host name points today (docs/webhooks.md). */
export async function checkedCallback(
  deps: Pick<RegistrationDeps, 'allowHttp' | 'allowPrivate' | 'resolveHost'>,
  callback: string,
): Promise<string> {
  const check = checkCallbackUrl(callback, { allowHttp: deps.allowHttp, allowPrivate: deps.allowPrivate })
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

export function checkedSecret(secret: string): string {
  if (secret.length < SECRET_LENGTH_MIN) {
    throw fieldError('invalid_request', 'secret', `must be at least ${SECRET_LENGTH_MIN} characters`)
  }
  if (secret.length > SECRET_LENGTH_MAX) {
    throw fieldError('invalid_request', 'secret', `must be at most ${SECRET_LENGTH_MAX} characters`)
  }
  return secret
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
