import type { Db } from '../db/db.js'
import type { SecretBox } from '../shared/secret-box.js'
import { startLoop, type Loop } from '../shared/loop.js'
import { BACKOFF_BASE_MS, nextAttemptDelayMs } from './backoff.js'
import { deliver, type ResolveHost } from './http-deliver.js'
import { signBody } from './signature.js'
import { sql } from '../db/sql.js'

/** Deliveries claimed by one query at most. */
export const CLAIM_BATCH_MAX = 100

/**
 * A claimed delivery is left to its worker for the attempt's time-out plus this margin. Past that,
 * another worker may take it: the first one crashed, or is stuck.
 */
export const LEASE_MARGIN_MS = 10_000

/** One event as the outbox stored it. */
export interface EventRow {
  id: bigint
  txn_id: string
  txn_state: string
  msg: string
  ext_ref_id: string
  updated_at: bigint
}

/**
 * The webhook body (contract section 7), as the exact bytes that are signed and sent. The status
 * stream sends the same text as its `data`.
 */
export function eventBody(event: EventRow): Buffer {
  return Buffer.from(
    JSON.stringify({
      txnId: event.txn_id,
      extRefId: event.ext_ref_id,
      txnState: event.txn_state,
      msg: event.msg,
      updatedAt: Number(event.updated_at),
    }),
    'utf8',
  )
}

/** The `X-Svcpay-Event-Id` of an event: stable across every retry and redelivery of it. */
export const eventIdOf = (eventId: bigint | string): string => `evt_${eventId}`

export interface DeliveryWorkerDeps {
  db: Db
  box: SecretBox
  /** `a`: POST with X-Svcpay-Signature; `b`: PUT with X-Svc-Signature. */
  variant: 'a' | 'b'
  timeoutMs: number
  allowPrivate: boolean
  /** Loopback receivers (the sandbox's `ALLOW_HTTP_WEBHOOKS`). */
  allowLoopback: boolean
  /** Sends in flight per process, waiting ones included. */
  concurrency: number
  /** The wait after failed attempt `attempt`, or null when it was the last; default {@link scaledRetryDelay}. */
  retryDelayMs?: (attempt: number) => number | null
  /** Replaces the system resolver (tests). */
  lookup?: ResolveHost
  now?: () => number
  /** Told of every attempt's outcome (metrics). */
  onAttempt?: (outcome: AttemptOutcome) => void
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void }
}

/** The documented retry schedule (src/events/backoff.ts), scaled so that its first wait is `baseMs`. */
export function scaledRetryDelay(baseMs: number, random: () => number = Math.random) {
  return (attempt: number): number | null => {
    const delayMs = nextAttemptDelayMs(attempt, random)
    return delayMs === null ? null : Math.max(1, Math.round((delayMs * baseMs) / BACKOFF_BASE_MS))
  }
}

/** A delivery as claimed: its fencing token is the attempt number the claim gave it. */
interface Claimed {
  id: bigint
  attempt: number
  webhookId: string
  txnId: string
  eventId: bigint
}

/** What one delivery attempt did; for tests and logs. */
export interface AttemptOutcome {
  deliveryId: bigint
  attempt: number
  /**
   * `skipped`: another worker took it over, or it was cancelled, before it went out.
   * `superseded`: it went out, but meanwhile another worker took it over (the lease ran out) or it
   * was cancelled, so only the attempt was recorded.
   */
  result: 'succeeded' | 'retrying' | 'failed' | 'skipped' | 'superseded'
  error?: string
}

/**
 * Claims due deliveries: several workers skip each other's locked rows, and each claimed row gets
 * a lease (its next_attempt_at moves past the attempt's time-out) and a new attempt number, which
 * fences off any older claim of the same row.
 */
async function claim(deps: DeliveryWorkerDeps, limit: number): Promise<Claimed[]> {
  const now = (deps.now ?? Date.now)()
  const nowParam = sql.param(now)
  const { rows } = await deps.db.query<{
    id: bigint
    attempts: number
    webhook_id: string
    txn_id: string
    event_id: bigint
  }>(
    sql`UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, next_attempt_at = ${now + deps.timeoutMs + LEASE_MARGIN_MS}, updated_at = ${nowParam}
       FROM events e
      WHERE e.id = d.event_id
        AND d.id IN (SELECT id FROM webhook_deliveries
                      WHERE status = 'pending' AND next_attempt_at <= ${nowParam}
                      ORDER BY next_attempt_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.attempts, d.webhook_id, d.event_id, e.txn_id`,
  )
  // Oldest event first, so that the changes of one transaction go out in the order they happened.
  return rows
    .map((r) => ({
      id: r.id,
      attempt: r.attempts,
      webhookId: r.webhook_id,
      txnId: r.txn_id,
      eventId: r.event_id,
    }))
    .sort((x, y) => (x.eventId < y.eventId ? -1 : x.eventId > y.eventId ? 1 : x.id < y.id ? -1 : 1))
}

/** Makes one attempt of a claimed delivery and records it. */
async function attempt(deps: DeliveryWorkerDeps, claimed: Claimed): Promise<AttemptOutcome> {
  const now = deps.now ?? Date.now
  // Renew the lease just before sending, and read the webhook as it is now (its URL or secret may
  // have changed since the event). The attempt number fences: if the lease ran out while this
  // delivery waited and another worker claimed it, this update matches nothing and we step aside.
  const { rows } = await deps.db.query<
    EventRow & {
      callback: string
      secret_enc: string
      previous_secret_enc: string | null
      previous_secret_until: bigint | null
    }
  >(
    sql`UPDATE webhook_deliveries d SET next_attempt_at = ${now() + deps.timeoutMs + LEASE_MARGIN_MS}, updated_at = ${now()}
       FROM webhooks w, events e
      WHERE d.id = ${claimed.id} AND d.attempts = ${claimed.attempt} AND d.status = 'pending'
        AND w.id = d.webhook_id AND w.deleted_at IS NULL AND e.id = d.event_id
      RETURNING w.callback, w.secret_enc, w.previous_secret_enc, w.previous_secret_until, e.id, e.txn_id, e.txn_state, e.msg, e.ext_ref_id, e.updated_at`,
  )
  const row = rows[0]
  if (!row) {
    // The outbox may have queued it for a webhook that was being deleted at that moment.
    await deps.db.query(
      sql`UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = ${now()}
        WHERE id = ${claimed.id} AND attempts = ${claimed.attempt} AND status = 'pending'
          AND webhook_id IN (SELECT id FROM webhooks WHERE deleted_at IS NOT NULL)`,
    )
    const skipped: AttemptOutcome = { deliveryId: claimed.id, attempt: claimed.attempt, result: 'skipped' }
    deps.onAttempt?.(skipped)
    return skipped
  }

  const body = eventBody(row)
  const signature = signBody(body, deps.box.open(row.secret_enc))
  // During a secret rotation's overlap, the signature under the previous secret too (docs/webhooks.md).
  const previous =
    row.previous_secret_enc !== null &&
    row.previous_secret_until !== null &&
    Number(row.previous_secret_until) > now()
      ? signBody(body, deps.box.open(row.previous_secret_enc))
      : undefined
  const signatureHeader = deps.variant === 'a' ? 'X-Svcpay-Signature' : 'X-Svc-Signature'
  const startedAt = now()
  const result = await deliver({
    url: row.callback,
    method: deps.variant === 'a' ? 'POST' : 'PUT',
    headers: {
      [signatureHeader]: signature,
      ...(previous === undefined ? {} : { [`${signatureHeader}-Previous`]: previous }),
      'X-Svcpay-Event-Id': eventIdOf(row.id),
      'X-Svcpay-Delivery-Attempt': String(claimed.attempt),
    },
    body,
    timeoutMs: deps.timeoutMs,
    allowPrivate: deps.allowPrivate,
    allowLoopback: deps.allowLoopback,
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
  })

  const finishedAt = now()
  const delayMs = result.ok ? null : (deps.retryDelayMs ?? scaledRetryDelay(BACKOFF_BASE_MS))(claimed.attempt)
  const outcome = result.ok ? 'succeeded' : delayMs === null ? 'failed' : 'retrying'
  const applied = await deps.db.tx(async (q) => {
    // The attempt happened whatever became of the delivery meanwhile, so it is always recorded.
    await q.query(
      sql`INSERT INTO delivery_attempts (delivery_id, attempt, at, http_status, latency_ms, error)
       VALUES (${claimed.id}, ${claimed.attempt}, ${startedAt}, ${result.status ?? null}, ${result.latencyMs}, ${result.error ?? null})`,
    )
    const updated = await q.query(
      sql`UPDATE webhook_deliveries
          SET status = ${outcome === 'retrying' ? 'pending' : outcome}, next_attempt_at = ${outcome === 'retrying' ? finishedAt + delayMs! : null}, last_status = ${result.status ?? null}, last_error = ${result.error ?? null}, updated_at = ${finishedAt}
        WHERE id = ${claimed.id} AND attempts = ${claimed.attempt} AND status = 'pending'`,
    )
    return updated.rowCount > 0
  })
  const done: AttemptOutcome = {
    deliveryId: claimed.id,
    attempt: claimed.attempt,
    result: applied ? outcome : 'superseded',
    ...(result.error ? { error: result.error } : {}),
  }
  deps.onAttempt?.(done)
  return done
}

/** Deliveries of one transaction to one webhook go out one after another, oldest first. */
const chainKey = (c: Claimed): string => `${c.webhookId}\u0000${c.txnId}`

/**
 * One pass for tests and tools: claims what is due (up to `limit`), sends it and waits for every
 * attempt to be recorded. Different transactions go out concurrently; one transaction's events in
 * order.
 */
export async function runDueDeliveries(
  deps: DeliveryWorkerDeps,
  limit = CLAIM_BATCH_MAX,
): Promise<AttemptOutcome[]> {
  const claimed = await claim(deps, Math.min(limit, CLAIM_BATCH_MAX))
  const chains = new Map<string, Claimed[]>()
  for (const c of claimed) {
    const chain = chains.get(chainKey(c))
    if (chain) chain.push(c)
    else chains.set(chainKey(c), [c])
  }
  const outcomes = await Promise.all(
    [...chains.values()].map(async (chain) => {
      const done: AttemptOutcome[] = []
      for (const c of chain) done.push(await attempt(deps, c))
      return done
    }),
  )
  return outcomes.flat()
}

export interface DeliveryWorker {
  /** Look for due deliveries now (a commit was announced), instead of at the next poll. */
  wake(): void
  /** Stops claiming and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
}

/**
 * The running delivery worker: claims due deliveries whenever it is woken (every committed state
 * change, see src/events/notifier.ts) and at least once a second, and keeps up to `concurrency`
 * attempts in flight without waiting for a slow receiver before it claims the next. At least once:
 * an attempt cut short by a crash leaves its lease to run out, and then any worker retries it.
 */
export function startDeliveryWorker(deps: DeliveryWorkerDeps & { idleMs?: number }): DeliveryWorker {
  let inFlight = 0
  const chains = new Map<string, Promise<void>>()
  const idleMs = deps.idleMs ?? 1_000
  let dueTimer: NodeJS.Timeout | undefined
  let stopped = false

  /** A retry due before the next poll wakes the loop on time (short schedules, and the first waits). */
  const wakeAtNextDue = async (): Promise<void> => {
    const { rows } = await deps.db.query<{ due: bigint | null }>(
      sql`SELECT min(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending'`,
    )
    const due = rows[0]?.due
    if (due === null || due === undefined || stopped) return
    const inMs = Number(due) - (deps.now ?? Date.now)()
    if (inMs >= idleMs) return
    clearTimeout(dueTimer)
    dueTimer = setTimeout(() => loop.wake(), Math.max(inMs, 0) + 1)
  }

  const launch = (claimed: Claimed): void => {
    const key = chainKey(claimed)
    inFlight++
    const previous = chains.get(key) ?? Promise.resolve()
    const run: Promise<void> = previous
      .then(() => attempt(deps, claimed))
      .then(
        () => undefined,
        (err: unknown) => {
          // The lease brings the delivery back; one failing delivery must not stop the others.
          deps.log.error(
            { deliveryId: String(claimed.id), error: (err as Error).message },
            'webhook delivery attempt failed',
          )
        },
      )
      .finally(() => {
        inFlight--
        if (chains.get(key) === run) chains.delete(key)
        loop.wake()
      })
    chains.set(key, run)
  }

  const loop: Loop = startLoop({
    name: 'webhooks',
    idleMs,
    step: async () => {
      const room = Math.min(deps.concurrency - inFlight, CLAIM_BATCH_MAX)
      // When every slot is busy, a finishing attempt wakes the loop.
      if (room <= 0) return false
      const claimed = await claim(deps, room)
      for (const c of claimed) launch(c)
      if (claimed.length === room) return true
      await wakeAtNextDue()
      return false
    },
    log: deps.log,
  })

  return {
    wake: () => loop.wake(),
    async stop() {
      stopped = true
      clearTimeout(dueTimer)
      await loop.stop()
      while (chains.size > 0) await Promise.all([...chains.values()])
    },
  }
}
