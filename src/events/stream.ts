import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { asAccountId, asTxnId } from '../shared/ids.js'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { Type } from 'typebox'

import type { AuthService } from '../auth/service.js'
import type { Queryable } from '../db/db.js'
import { bearerAuth, principalOf } from '../auth/hook.js'
import { BEARER, errors } from '../http/schemas.js'
import { ApiError } from '../shared/errors.js'
import { openSse, SSE_HEADERS, type SsePump } from '../http/sse.js'
import { FINAL_STATES, type TxnState } from '../shared/txn-states.js'
import { eventBody, type EventRow } from './delivery-worker.js'
import { liveStreams } from './live-streams.js'
import type { Notifier } from './notifier.js'
import { sql } from '../db/sql.js'

/** Open status streams one account may hold on one process. */
export const STREAMS_PER_ACCOUNT_MAX = 20

/** Events read per query; a stream that is further behind reads again at once. */
const EVENTS_BATCH_MAX = 100

const STREAM_HEADERS = { ...SSE_HEADERS, 'cache-control': 'no-cache, no-transform' } as const

export interface StreamDeps {
  auth: AuthService
  db: Queryable
  notifier: Notifier
  /**
   * Whether the account owns the transaction: the engine's read (src/transactions/reads.ts), handed
   * in so that the events stand below the engine.
   */
  hasTxn(q: Queryable, txnId: string, accountId: string): Promise<boolean>
  /** The keep-alive comment interval (15 s); each beat also re-reads the outbox, in case a notification was lost. */
  heartbeatMs: number
}

/**
 * `GET /api/v2/transaction/{txnId}/events`: a server-sent-event stream of one transaction's state
 * (contract section 7). It sends the current state at once, then every change as `event: status`
 * with the webhook body as `data` and the outbox event id as `id`, and closes after a final state.
 * A client that reconnects with `Last-Event-ID` gets every change after that event instead; when
 * there is none and the transaction is final, it gets 204 No Content, which tells an EventSource to
 * stop reconnecting (HTML standard, "server-sent events": any status but 200 fails the connection).
 * Without that, every finished stream would come back as an open one sending only keep-alives, and
 * the account would soon hold its whole quota of streams. `HEAD` answers the headers of `GET`.
 *
 * Changes come from the outbox (the `events` table), read whenever the notifier reports a commit
 * for the transaction on any instance, so no intermediate state is skipped however fast they follow
 * each other.
 */
/**
 * Ends an answer with no body at all. The reply typed by the route's response schema only takes
 * `null` for its empty answers, and a null body is not the same to Fastify: its HEAD handling
 * cannot take one.
 */
function sendEmpty(reply: FastifyReply): FastifyReply {
  return reply.send()
}

export function statusStreamRoutes(fastify: FastifyInstance, deps: StreamDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = bearerAuth(deps.auth)
  const streams = liveStreams(fastify, deps.notifier, {
    perHolderMax: STREAMS_PER_ACCOUNT_MAX,
    holderFull: `At most ${STREAMS_PER_ACCOUNT_MAX} status streams may be open at once`,
    processFull: 'Too many status streams are open; try again shortly',
  })

  app.get(
    '/api/v2/transaction/:txnId/events',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'Stream the state of a transaction (server-sent events)',
        description:
          '`text/event-stream`. The current state at once, then every change as `event: status` whose `data` is the webhook body `{ txnId, extRefId, txnState, msg, updatedAt }` and whose `id` is the event id; the stream ends after a final state. A comment line every 15 s keeps it open. Send `Last-Event-ID` to resume after an event: the changes after it follow; when there are none and the transaction is final, the answer is 204 No Content, which stops an EventSource from reconnecting. `HEAD` answers with the headers only.',
        security: BEARER,
        params: Type.Object({ txnId: Type.String({ maxLength: 64 }) }),
        response: {
          204: {
            description: 'Resumed with the Last-Event-ID of the final state: nothing more will come',
            type: 'null',
          },
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
      const { txnId } = request.params
      if (!(await deps.hasTxn(deps.db, asTxnId(txnId), asAccountId(accountId))))
        throw new ApiError('not_found', 'Transaction not found')
      const lastEventId = lastEventIdOf(request.headers['last-event-id'])
      if (lastEventId !== undefined && (await finishedBefore(deps.db, txnId, lastEventId))) {
        return sendEmpty(reply.code(204))
      }
      // A HEAD is answered like the other HEADs: the headers a GET would have, no body, no stream.
      if (request.method === 'HEAD') return sendEmpty(reply.code(200).headers(STREAM_HEADERS))
      await streams.open(accountId, txnId, (onEnd) =>
        sendStatusStream(reply, { db: deps.db, txnId, lastEventId, heartbeatMs: deps.heartbeatMs, onEnd }),
      )
    },
  )
}

/** An open status stream: `pump()` reads and sends what the outbox has beyond the last event sent. */
export type StatusStream = SsePump

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
 * notification and once at the start.
 */
export function sendStatusStream(reply: FastifyReply, opts: StatusStreamOptions): StatusStream {
  let cursor = opts.lastEventId

  /** Sends one event; true when it announced a final state and the stream has ended. */
  const send = (stream: SsePump, event: EventRow): boolean => {
    stream.write(`event: status\nid: ${event.id}\ndata: ${eventBody(event).toString('utf8')}\n\n`)
    cursor = event.id
    if (!FINAL_STATES.has(event.txn_state as TxnState)) return false
    stream.end()
    return true
  }

  const read = async (stream: SsePump): Promise<boolean> => {
    if (cursor === undefined) {
      // The current state: the latest event, which was written with the state it announces.
      const { rows } = await opts.db.query<EventRow>(
        sql`SELECT id, txn_id, txn_state, msg, ext_ref_id, updated_at FROM events WHERE txn_id = ${opts.txnId} ORDER BY id DESC LIMIT 1`,
      )
      if (rows[0]) {
        send(stream, rows[0])
        return false
      }
      cursor = 0n
    }
    const { rows } = await opts.db.query<EventRow>(
      sql`SELECT id, txn_id, txn_state, msg, ext_ref_id, updated_at FROM events
        WHERE txn_id = ${opts.txnId} AND id > ${String(cursor)} ORDER BY id LIMIT ${sql.int(EVENTS_BATCH_MAX)}`,
    )
    for (const row of rows) if (stream.ended || send(stream, row)) return false
    if (rows.length === 0 && cursor !== undefined && (await finishedBefore(opts.db, opts.txnId, cursor))) {
      // The final state lies at or before the cursor (a Last-Event-ID from beyond this transaction's
      // events): nothing will ever follow, so the stream must not stay open on keep-alives.
      stream.end()
      return false
    }
    return rows.length === EVENTS_BATCH_MAX
  }

  return openSse(reply, {
    headers: { ...STREAM_HEADERS, connection: 'keep-alive' },
    heartbeatMs: opts.heartbeatMs,
    read,
    onEnd: opts.onEnd,
  })
}

/**
 * Whether the transaction's last event is a final state at or before `eventId`: a stream resumed
 * there has nothing left to send, now or later.
 */
async function finishedBefore(db: Queryable, txnId: string, eventId: bigint): Promise<boolean> {
  const { rows } = await db.query<{ id: string | bigint; txn_state: string }>(
    sql`SELECT id, txn_state FROM events WHERE txn_id = ${txnId} ORDER BY id DESC LIMIT 1`,
  )
  const latest = rows[0]
  return (
    latest !== undefined && FINAL_STATES.has(latest.txn_state as TxnState) && BigInt(latest.id) <= eventId
  )
}

function lastEventIdOf(header: string | string[] | undefined): bigint | undefined {
  const text = Array.isArray(header) ? header[0] : header
  return text !== undefined && /^[0-9]{1,18}$/.test(text) ? BigInt(text) : undefined
}
