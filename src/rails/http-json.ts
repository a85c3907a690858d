/**
 * The one HTTP client of the real rail adapters (LND REST, bitcoind JSON-RPC, Esplora, TronGrid,
 * the bank payout partner).
 *
 * It is built on node:http/https rather than the global fetch because LND serves a self-signed
 * certificate that must be trusted per connection (an `https.Agent` with `ca`), and because LND's
 * streaming endpoints are read only up to their first message. Every request has one deadline that
 * covers connecting, sending and reading the answer, and every answer is read up to a size bound.
 * Failures to get an answer at all become `RailFailure`s with the codes of `TRANSPORT_CODES`; what
 * an answer means, whatever its status, is left to the adapter. Adapters that name these failures
 * their own way (`tron_timeout`, `bank_unreachable`) rename them with `renameTransportFailure`.
 */
import http from 'node:http'
import https from 'node:https'

import { RailFailure } from './rail.js'

/** The default deadline of one request to a node. */
export const NODE_TIMEOUT_MS_DEFAULT = 10_000

/** A bound on any answer we read; a node's answer near this size is a bug or an attack. */
export const RESPONSE_BYTES_MAX_DEFAULT = 8 * 1024 * 1024

/** Codes of the failures raised here; adapters compare against them. */
export const TRANSPORT_CODES = {
  timeout: 'node_timeout',
  unreachable: 'node_unreachable',
  tls: 'node_tls_error',
  tooLarge: 'response_too_large',
  badResponse: 'bad_response',
} as const

/** The codes `httpRequest` itself raises: every way of getting no usable answer. */
export type TransportCode = (typeof TRANSPORT_CODES)[Exclude<keyof typeof TRANSPORT_CODES, 'badResponse'>]

/** The statuses fetch calls redirects; an adapter may refuse to take one for an answer. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

export interface HttpRequest {
  url: string
  method: 'GET' | 'POST'
  headers?: Record<string, string>
  /**
   * Sent as given (callers stringify JSON themselves, so amounts keep their exact text). Bytes go
   * out unchanged, so a caller that signs the body can sign exactly what is sent.
   */
  body?: string | Uint8Array
  /** The whole exchange: connect, send, read (up to the first line when `firstLineOnly`). */
  timeoutMs: number
  /** A keep-alive agent of the adapter, e.g. an `https.Agent` trusting LND's own certificate. */
  agent?: http.Agent
  /**
   * Stop after the first complete line of the body. Streaming endpoints (LND's router) write one
   * JSON message per line and may keep the connection open for minutes after it.
   */
  firstLineOnly?: boolean
  responseBytesMax?: number
  /** How failure messages name the request; by default its method, host and path. */
  label?: string
  /**
   * A redirect (301, 302, 303, 307, 308) is a failure (`unreachable`) instead of an answer: an API
   * that moved is reconfigured by an operator, never followed.
   */
  refuseRedirects?: boolean
}

export interface HttpResponse {
  status: number
  contentType: string
  /** The body, or only its first line (without the newline) when `firstLineOnly` was asked. */
  text: string
}

/** TLS verification failures, reported separately so an operator sees a certificate problem. */
const TLS_ERROR_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])

/**
 * Performs one request. Resolves with any HTTP answer, whatever its status; rejects only with a
 * `RailFailure` when no complete answer arrived in time (retryable) or the answer is too large.
 */
export function httpRequest(req: HttpRequest): Promise<HttpResponse> {
  const url = new URL(req.url)
  const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null
  if (!transport)
    return Promise.reject(new RailFailure('invalid_config', `unsupported URL scheme ${url.protocol}`, false))
  const bytesMax = req.responseBytesMax ?? RESPONSE_BYTES_MAX_DEFAULT
  const where = req.label ?? `${req.method} ${url.host}${url.pathname}`
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers }
  if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body))

  return new Promise<HttpResponse>((resolve, reject) => {
    let done = false
    const settle = (outcome: () => void): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      outcome()
      // Whatever is left of the exchange (a stream that stays open, a stalled upload) is dropped.
      request.destroy()
    }
    const request = transport.request(url, { method: req.method, headers, agent: req.agent }, (res) => {
      const status = res.statusCode ?? 0
      const contentType = String(res.headers['content-type'] ?? '')
      if (req.refuseRedirects && REDIRECT_STATUSES.has(status)) {
        settle(() =>
          reject(
            new RailFailure(
              TRANSPORT_CODES.unreachable,
              `${where}: redirected (HTTP ${status}), not followed`,
              true,
            ),
          ),
        )
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > bytesMax) {
          settle(() =>
            reject(
              new RailFailure(
                TRANSPORT_CODES.tooLarge,
                `${where}: answer larger than ${bytesMax} bytes`,
                false,
              ),
            ),
          )
          return
        }
        chunks.push(chunk)
        if (req.firstLineOnly && chunk.includes(0x0a)) {
          const text = decode(chunks)
          settle(() => resolve({ status, contentType, text: text.slice(0, text.indexOf('\n')) }))
        }
      })
      res.on('end', () => {
        settle(() => resolve({ status, contentType, text: decode(chunks) }))
      })
      // A connection that closes before the body is complete is a transport failure, not an answer.
      const cut = (): void =>
        settle(() =>
          reject(
            new RailFailure(TRANSPORT_CODES.unreachable, `${where}: connection closed mid-answer`, true),
          ),
        )
      res.on('error', cut)
      res.on('close', () => {
        if (!res.complete) cut()
      })
    })
    request.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? ''
      const failure = TLS_ERROR_CODES.has(code)
        ? new RailFailure(TRANSPORT_CODES.tls, `${where}: TLS verification failed (${code})`, true)
        : new RailFailure(TRANSPORT_CODES.unreachable, `${where}: ${code || err.message}`, true)
      settle(() => reject(failure))
    })
    const timer = setTimeout(() => {
      settle(() =>
        reject(
          new RailFailure(
            TRANSPORT_CODES.timeout,
            `${where} did not answer within ${req.timeoutMs} ms`,
            true,
          ),
        ),
      )
    }, req.timeoutMs)
    request.end(req.body)
  })
}

/** UTF-8 as fetch's `text()` reads it: a leading byte order mark is dropped, bad bytes become U+FFFD. */
function decode(chunks: Buffer[]): string {
  return new TextDecoder().decode(Buffer.concat(chunks))
}

/**
 * The failure `err` from `httpRequest` under the adapter's own code from `names`, keeping its
 * message. Another try may get an answer, so it is retryable (an answer too large included: the
 * node may be answering from a bad state). An error that is no `RailFailure` (a header value the
 * request could not carry) counts as unreachable; the adapter's other failures pass unchanged.
 */
export function renameTransportFailure(err: unknown, names: Record<TransportCode, string>): unknown {
  if (!(err instanceof RailFailure))
    return new RailFailure(names[TRANSPORT_CODES.unreachable], (err as Error).message, true)
  const code = err.code as TransportCode
  return Object.hasOwn(names, code) ? new RailFailure(names[code], err.message, true) : err
}

/**
 * Parses a JSON answer. A body that is not JSON (a proxy's error page, a truncated answer) is a
 * retryable `bad_response`: the node or something in front of it is not answering as documented.
 */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    const snippet = text.slice(0, 120).replace(/\s+/g, ' ')
    throw new RailFailure(TRANSPORT_CODES.badResponse, `${what}: answer is not JSON: ${snippet}`, true)
  }
}

/** The value as a plain object, or a `bad_response` failure naming what was expected. */
export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new RailFailure(TRANSPORT_CODES.badResponse, `${what}: expected a JSON object`, true)
  }
  return value as Record<string, unknown>
}

/** The value as an array, or a `bad_response` failure naming what was expected. */
export function asArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value))
    throw new RailFailure(TRANSPORT_CODES.badResponse, `${what}: expected a JSON array`, true)
  return value
}

/** Bitcoin addresses (base58 or bech32) only use these characters; checked before they reach a URL or descriptor. */
const ADDRESS_RE = /^[a-zA-Z0-9]{14,100}$/

/** Refuses text that cannot be a Bitcoin address before it is put into a path or a descriptor. */
export function checkAddressText(address: string): void {
  if (!ADDRESS_RE.test(address)) throw new RailFailure('invalid_address', 'not a Bitcoin address', false)
}

/** Transaction ids are 32 bytes of lower- or upper-case hex. */
export function checkTxid(txid: string): void {
  if (!/^[0-9a-fA-F]{64}$/.test(txid)) throw new RailFailure('invalid_txid', 'not a transaction id', false)
}
