import type { FastifyInstance, FastifyReply } from 'fastify'
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { Type } from 'typebox'

import type { AuthService } from '../auth/service.js'
import type { Queryable } from '../db/db.js'
import { bearerAuth, principalOf } from '../http/auth-hook.js'
import { BEARER, errors } from '../http/schemas.js'
import { ApiError } from '../shared/errors.js'
import { FINAL_STATES, type TxnState } from '../transactions/state-machine.js'
import { eventBody, type EventRow } from './delivery-worker.js'
import { NotifierFullError, type Notifier } from './notifier.js'

/** Open status streams one account may hold on one process. */
export const STREAMS_PER_ACCOUNT_MAX = 20

/** Events read per query; a stream that is further behind reads again at once. */
const EVENTS_BATCH_MAX = 100

/** How long a client waits before reconnecting after the connection drops (the SSE `retry` field). */
const RECONNECT_MS = 3_000

export interface StreamDeps {
  auth: AuthService
  db: Queryable
  notifier: Notifier
  /** The keep-alive comment interval (15 s); each beat also re-reads the outbox, in case a notification was lost. */
  heartbeatMs: number
}

/**
 * `GET /api/v2/transaction/{txnId}/events`: a server-sent-event stream of one transaction's state
 * (contract section 7). It sends the current state at once, then every change as `event: status`
 * with the webhook body as `data` and the outbox event id as `id`, and closes after a final state.
 * A client that reconnects with `Last-Event-ID` gets every change after that event instead.
 *
 * Changes come from the outbox (the `events` table), read whenever the notifier reports a commit
 * for the transaction on any instance, so no intermediate state is skipped however fast they follow
 * each other.
 */
export function statusStreamRoutes(app: FastifyInstance, deps: StreamDeps): void {
  const onRequest = bearerAuth(deps.auth)
  const perAccount = new Map<string, number>()
  const open = new Set<() => void>()

  app.addHook('onClose', async () => {
    for (const end of [...open]) end()
  })

  app.get(
    '/api/v2/transaction/:txnId/events',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'Stream the state of a transaction (server-sent events)',
        description:
          '`text/event-stream`. The current state at once, then every change as `event: status` whose `data` is the webhook body `{ txnId, extRefId, txnState, msg, updatedAt }` and whose `id` is the event id; the stream ends after a final state. A comment line every 15 s keeps it open. Send `Last-Event-ID` to resume after an event.',
        security: BEARER,
        params: Type.Object({ txnId: Type.String({ maxLength: 64 }) }),
        response: {
          200: {
            description: 'An event stream',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  examples: [
                    'retry: 3000\n\nevent: status\nid: 17\ndata: {"txnId":"txn_2kke6dhr97ma42go04h8t6ah7","extRefId":"order-1001","txnState":"completed","msg":"","updatedAt":1767225660000}\n\n',
                  ],
                }),
              },
            },
          },
          ...errors(401, 404, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request)
      const { txnId } = request.params as { txnId: string }
      const { rows } = await deps.db.query<{ id: string }>(
        'SELECT id FROM transactions WHERE id = $1 AND account_id = $2',
        [txnId, accountId],
      )
      if (!rows[0]) throw new ApiError('not_found', 'Transaction not found')
      if ((perAccount.get(accountId) ?? 0) >= STREAMS_PER_ACCOUNT_MAX) {
        throw new ApiError(
          'rate_limit_exceeded',
          `At most ${STREAMS_PER_ACCOUNT_MAX} status streams may be open at once`,
        )
      }
      perAccount.set(accountId, (perAccount.get(accountId) ?? 0) + 1)
      const release = (): void => {
        const left = (perAccount.get(accountId) ?? 1) - 1
        if (left <= 0) perAccount.delete(accountId)
        else perAccount.set(accountId, left)
      }

      // Subscribe before the first read, so that a change committed in between is not missed.
      let wake = (): void => {}
      let unsubscribe: () => void
      try {
        unsubscribe = await deps.notifier.subscribe(txnId, () => wake())
      } catch (err) {
        release()
        if (err instanceof NotifierFullError) {
          throw new ApiError('service_unavailable', 'Too many status streams are open; try again shortly')
        }
        throw err
      }

      const stream = sendStatusStream(reply, {
        db: deps.db,
        txnId,
        lastEventId: lastEventIdOf(request.headers['last-event-id']),
        heartbeatMs: deps.heartbeatMs,
        onEnd: () => {
          unsubscribe()
          release()
          open.delete(stream.end)
        },
      })
      open.add(stream.end)
      wake = stream.pump
      stream.pump()
    },
  )
}

/** An open status stream. */
export interface StatusStream {
  /** Reads and sends what the outbox has beyond the last event sent; call it on every notification. */
  pump(): void
  /** Closes the stream (idempotent); `onEnd` runs once. */
  end(): void
}

export interface StatusStreamOptions {
  db: Queryable
  txnId: string
  /** Resume after this event (the client's `Last-Event-ID`); undefined sends the current state first. */
  lastEventId: bigint | undefined
  heartbeatMs: number
  /** Runs once when the stream ends for any reason: release the subscription and any slot here. */
  onEnd: () => void
}

/**
 * Takes over the reply and writes one transaction's status as server-sent events. The caller has
 * already authorised the request and subscribed to the notifier; it calls `pump()` on every
 * notification and once at the start. Kept apart from the route so that other streams (the hosted
 * invoice page's public one) write the same format.
 */
export function sendStatusStream(reply: FastifyReply, opts: StatusStreamOptions): StatusStream {
  reply.hijack()
  const res: ServerResponse = reply.raw
  // Headers set by earlier hooks (the rate-limit headers) are sent too; hijacking bypasses Fastify's send.
  const earlier: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) earlier[name] = typeof value === 'number' ? String(value) : value
  }
  res.writeHead(200, {
    ...earlier,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // Proxies that buffer responses (nginx) would hold the events back.
    'x-accel-buffering': 'no',
  })
  res.write(`retry: ${RECONNECT_MS}\n\n`)

  let cursor = opts.lastEventId
  let ended = false
  let running = false
  let again = false

  const end = (): void => {
    if (ended) return
    ended = true
    clearInterval(heartbeat)
    opts.onEnd()
    res.end()
  }

  const send = (event: EventRow): boolean => {
    res.write(`event: status\nid: ${event.id}\ndata: ${eventBody(event).toString('utf8')}\n\n`)
    cursor = event.id
    return FINAL_STATES.has(event.txn_state as TxnState)
  }

  const readOnce = async (): Promise<boolean> => {
    if (cursor === undefined) {
      // The current state: the latest event, which was written with the state it announces.
      const { rows } = await opts.db.query<EventRow>(
        `SELECT id, txn_id, txn_state, msg, ext_ref_id, updated_at FROM events WHERE txn_id = $1 ORDER BY id DESC LIMIT 1`,
        [opts.txnId],
      )
      if (rows[0]) {
        if (send(rows[0])) end()
        return false
      }
      cursor = 0n
    }
    const { rows } = await opts.db.query<EventRow>(
      `SELECT id, txn_id, txn_state, msg, ext_ref_id, updated_at FROM events
        WHERE txn_id = $1 AND id > $2 ORDER BY id LIMIT ${EVENTS_BATCH_MAX}`,
      [opts.txnId, String(cursor)],
    )
    for (const row of rows) {
      if (ended) return false
      if (send(row)) {
        end()
        return false
      }
    }
    return rows.length === EVENTS_BATCH_MAX
  }

  // One read at a time; a notification during a read asks for one more read afterwards.
  const pump = (): void => {
    if (ended) return
    if (running) {
      again = true
      return
    }
    running = true
    void (async () => {
      try {
        do {
          again = false
          if (await readOnce()) again = true
        } while (again && !ended)
      } catch {
        // A database hiccup ends the stream; the client reconnects with Last-Event-ID and resumes.
        end()
      } finally {
        running = false
      }
    })()
  }

  const heartbeat = setInterval(() => {
    if (ended) return
    res.write(': keep-alive\n\n')
    pump()
  }, opts.heartbeatMs)
  res.on('close', end)
  res.on('error', end)

  return { pump, end }
}

function lastEventIdOf(header: string | string[] | undefined): bigint | undefined {
  const text = Array.isArray(header) ? header[0] : header
  return text !== undefined && /^[0-9]{1,18}$/.test(text) ? BigInt(text) : undefined
}
