/**
 * A small HTTP client for the real rail adapters (LND REST, bitcoind JSON-RPC, Esplora, partners).
 *
 * It is built on node:http/https rather than the global fetch because LND serves a self-signed
 * certificate that must be trusted per connection (an `https.Agent` with `ca`), and because LND's
 * streaming endpoints are read only up to their first message. Every request has one deadline that
 * covers connecting, sending and reading the answer. Failures to get an answer at all become
 * retryable `RailFailure`s; what an answer means is left to the adapter.
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

export interface HttpRequest {
  url: string
  method: 'GET' | 'POST'
  headers?: Record<string, string>
  /** Sent as given (callers stringify JSON themselves, so amounts keep their exact text). */
  body?: string
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
  const where = `${req.method} ${url.host}${url.pathname}`
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
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > bytesMax) {
          settle(() =>
            reject(
              new RailFailure(TRANSPORT_CODES.tooLarge, `${where}: answer over ${bytesMax} bytes`, false),
            ),
          )
          return
        }
        chunks.push(chunk)
        if (req.firstLineOnly && chunk.includes(0x0a)) {
          const text = Buffer.concat(chunks).toString('utf8')
          settle(() => resolve({ status, contentType, text: text.slice(0, text.indexOf('\n')) }))
        }
      })
      res.on('end', () => {
        settle(() => resolve({ status, contentType, text: Buffer.concat(chunks).toString('utf8') }))
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
          new RailFailure(TRANSPORT_CODES.timeout, `${where}: no answer within ${req.timeoutMs} ms`, true),
        ),
      )
    }, req.timeoutMs)
    request.end(req.body)
  })
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
