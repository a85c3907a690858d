import { SvcpayNetworkError } from './errors.js'
import { sleep, type Transport } from './http.js'
import { parseEvent } from './webhooks.js'
import { isFinalState, type TransactionEvent } from './types.js'

/** One message of a `text/event-stream`, as the HTML standard's event-stream format defines it. */
export interface SseMessage {
  event: string
  data: string
  /** The last event id the stream has set, to send back as `Last-Event-ID` when reconnecting. */
  id: string | undefined
  /** The reconnection time the stream last asked for, ms. */
  retry: number | undefined
}

/** Hooks of {@link parseSse}. */
export interface SseHooks {
  /** A `retry:` field, which takes effect at once, even in a message without data. */
  onRetry?: (ms: number) => void
  /** Any bytes at all arrived (comments included): the connection is alive. */
  onActivity?: () => void
}

/**
 * Splits a byte stream into server-sent-event messages: lines end in CRLF, LF or CR; `field: value`
 * lines fill the message (one leading space of the value dropped), lines starting with ':' are
 * comments (keep-alives), and a blank line dispatches. A message without data is not dispatched.
 */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  hooks: SseHooks = {},
): AsyncGenerator<SseMessage> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let event = ''
  let data: string[] = []
  let id: string | undefined
  let retry: number | undefined
  let first = true
  try {
    while (true) {
      const { value, done } = await reader.read()
      if (done) return
      hooks.onActivity?.()
      // stream: true keeps a UTF-8 character split across two chunks whole.
      buffer += decoder.decode(value, { stream: true })
      if (first && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1)
        first = false
      }
      while (true) {
        const m = /\r\n|\r|\n/.exec(buffer)
        // A CR at the very end may be the first half of a CRLF still in flight.
        if (!m || (m[0] === '\r' && m.index === buffer.length - 1)) break
        const line = buffer.slice(0, m.index)
        buffer = buffer.slice(m.index + m[0].length)
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id, retry }
          event = ''
          data = []
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon === -1 ? line : line.slice(0, colon)
        let v = colon === -1 ? '' : line.slice(colon + 1)
        if (v.startsWith(' ')) v = v.slice(1)
        if (field === 'event') event = v
        else if (field === 'data') data.push(v)
        else if (field === 'id' && !v.includes('\0')) id = v
        else if (field === 'retry' && /^\d+$/.test(v)) {
          retry = Number(v)
          hooks.onRetry?.(retry)
        }
      }
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}

export interface StreamOptions {
  /** Stops the stream; the iterator then throws the signal's reason. */
  signal?: AbortSignal
  /** Reconnections in a row without a single message before giving up. Default 10. */
  maxReconnects?: number
  /** The wait before reconnecting, unless the server's `retry:` says otherwise. Default 1000 ms. */
  reconnectDelayMs?: number
  /**
   * A connection silent for this long (the service sends a keep-alive every 15 s) is taken as dead
   * and reopened. Default 45 000 ms.
   */
  idleTimeoutMs?: number
}

/**
 * The status stream of one transaction (`GET /api/v2/transaction/{txnId}/events`) as an async
 * iterator of events: the current state first, then every change, ending after a final state.
 * A dropped connection is reopened with `Last-Event-ID`, so the changes in between still arrive
 * and none is given to you twice; a 401 renews the token once, a 429 waits as asked.
 */
export async function* streamTransactionEvents(
  transport: Transport,
  txnId: string,
  opts: StreamOptions = {},
): AsyncGenerator<TransactionEvent> {
  const path = `/api/v2/transaction/${encodeURIComponent(txnId)}/events`
  const maxReconnects = opts.maxReconnects ?? 10
  let delayMs = opts.reconnectDelayMs ?? 1_000
  const idleTimeoutMs = opts.idleTimeoutMs ?? 45_000
  let last: TransactionEvent | undefined
  let lastEventId: string | undefined
  let quietAttempts = 0
  while (true) {
    let gotMessage = false
    // Each connection has its own abort, fired when it falls silent for too long.
    const connection = new AbortController()
    let idle: ReturnType<typeof setTimeout> | undefined
    const alive = () => {
      clearTimeout(idle)
      idle = setTimeout(
        () => connection.abort(new DOMException('the status stream fell silent', 'TimeoutError')),
        idleTimeoutMs,
      )
    }
    try {
      alive()
      const headers: Record<string, string> =
        lastEventId === undefined ? {} : { 'last-event-id': lastEventId }
      const signal = opts.signal ? AbortSignal.any([opts.signal, connection.signal]) : connection.signal
      const res = await transport.open(path, 'text/event-stream', signal, headers)
      // 204: resumed after the final state, nothing more will come (the service's answer to a
      // Last-Event-ID at or beyond the transaction's last event once it is final).
      if (res.status === 204) {
        await res.body?.cancel()
        return
      }
      if (!res.body) throw new TypeError('the status stream answered without a body')
      for await (const message of parseSse(res.body, {
        onRetry: (ms) => (delayMs = ms),
        onActivity: alive,
      })) {
        gotMessage = true
        lastEventId = message.id
        if (message.event !== 'status') continue
        const event = parseEvent(message.data)
        if (last && last.txnState === event.txnState && last.updatedAt === event.updatedAt) continue
        last = event
        yield event
        if (isFinalState(event.txnState)) return
      }
    } catch (err) {
      // Our caller's abort and the service's own refusals (404, 403, ...) end the stream; only a
      // failed or dropped connection is worth another try.
      if (opts.signal?.aborted) throw opts.signal.reason
      if (!(err instanceof SvcpayNetworkError) && !isStreamReadError(err)) throw err
    } finally {
      clearTimeout(idle)
    }
    quietAttempts = gotMessage ? 0 : quietAttempts + 1
    if (quietAttempts > maxReconnects) {
      throw new SvcpayNetworkError({
        code: 'network_error',
        message: `The status stream of ${txnId} could not be reopened after ${maxReconnects} attempts`,
        status: 0,
        request: { method: 'GET', path },
      })
    }
    await sleep(delayMs, opts.signal)
  }
}

/** A connection that broke while its body was being read (reset, closed mid-message). */
function isStreamReadError(err: unknown): boolean {
  return err instanceof TypeError || (err as Error)?.name === 'TimeoutError'
}
