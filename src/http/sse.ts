import type { FastifyReply } from 'fastify'
import type { OutgoingHttpHeaders } from 'node:http'

/** How long a client waits before reconnecting after the connection drops (the SSE `retry` field). */
export const SSE_RECONNECT_MS = 3_000

/** The headers every event stream has; each stream adds its own caching rule. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  // Proxies that buffer responses (nginx) would hold the events back.
  'x-accel-buffering': 'no',
} as const

export interface SsePump {
  /** Asks for a read; a read already running is followed by one more. Call it on every notification. */
  pump(): void
  /** Closes the stream (idempotent); `onEnd` runs once. */
  end(): void
  /** Writes a message, unless the stream has ended. */
  write(message: string): void
  readonly ended: boolean
}

export interface SseOptions {
  /** The stream's own headers, besides SSE_HEADERS and those set by earlier hooks. */
  headers: OutgoingHttpHeaders
  /** The keep-alive comment interval; each beat also reads, in case a notification was lost. */
  heartbeatMs: number
  /** One read of what is new, written with `stream.write`; true when there is more to read at once. */
  read: (stream: SsePump) => Promise<boolean | void>
  /** Runs once when the stream ends for any reason: release subscriptions, slots and timers here. */
  onEnd: () => void
}

/**
 * Takes over the reply for a server-sent-event stream, the one pump under every stream of the
 * service (a transaction's status stream and the hosted page's): status 200 with the headers set by
 * earlier hooks (hijacking bypasses Fastify's send, so the rate-limit headers are copied), the
 * reconnect delay, one read at a time however many notifications arrive, a keep-alive comment that
 * also reads, and an end on close, error, or a failed read (the client reconnects and resumes).
 */
export function openSse(reply: FastifyReply, opts: SseOptions): SsePump {
  reply.hijack()
  const res = reply.raw
  const earlier: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) earlier[name] = typeof value === 'number' ? String(value) : value
  }
  res.writeHead(200, { ...earlier, ...SSE_HEADERS, ...opts.headers })
  res.write(`retry: ${SSE_RECONNECT_MS}\n\n`)

  let ended = false
  let running = false
  let again = false

  const stream: SsePump = {
    get ended() {
      return ended
    },
    write(message) {
      if (!ended) res.write(message)
    },
    end() {
      if (ended) return
      ended = true
      clearInterval(heartbeat)
      opts.onEnd()
      res.end()
    },
    pump() {
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
            if ((await opts.read(stream)) === true) again = true
          } while (again && !ended)
        } catch {
          stream.end()
        } finally {
          running = false
        }
      })()
    },
  }

  const heartbeat = setInterval(() => {
    if (ended) return
    res.write(': keep-alive\n\n')
    stream.pump()
  }, opts.heartbeatMs)
  res.on('close', stream.end)
  res.on('error', stream.end)
  // A client that hung up while the request was being checked has already closed: its 'close' was
  // emitted before the listeners above, so the stream ends here rather than at a later write.
  if (res.destroyed || reply.request.raw.destroyed) stream.end()
  return stream
}
