import http from 'node:http'
import https from 'node:https'
import type { Socket } from 'node:net'

import { assert } from '../shared/assert.js'
import {
  isPeerAllowed,
  pinnedLookup,
  resolveAllowed,
  type AddressPolicy,
  type ResolvedAddress,
  type ResolveHost,
} from './outbound-guard.js'

export type { ResolvedAddress, ResolveHost } from './outbound-guard.js'

/** The spec gives a receiver 10 seconds to answer (Events 6, Limits 5). */
export const DELIVERY_TIMEOUT_MS = 10_000

/** A bound on any single delivery's time-out, so a misconfiguration cannot park a worker. */
export const DELIVERY_TIMEOUT_MS_MAX = 60_000

/** At most this much of a receiver's answer is read; the rest is cut off. Only the status matters. */
export const RESPONSE_BYTES_MAX = 64 * 1024

/** Webhook bodies are a few hundred bytes; anything near this is a bug upstream. */
export const REQUEST_BODY_BYTES_MAX = 64 * 1024

/** One HTTP delivery of a webhook event. */
export interface DeliveryRequest {
  url: string
  method: 'POST' | 'PUT'
  /** Sent as given (signature, event id, attempt); Content-Length is always set from `body`. */
  headers: Record<string, string>
  /** The exact bytes that were signed; they go on the wire unchanged. */
  body: Buffer
  /** The whole request, resolution and connection included; default {@link DELIVERY_TIMEOUT_MS}. */
  timeoutMs?: number
  /** Permit receivers in private ranges (operators whose receivers sit on an internal network). */
  allowPrivate: boolean
  /** Permit loopback receivers (the sandbox, `ALLOW_HTTP_WEBHOOKS`). */
  allowLoopback: boolean
  /** Replaces the system resolver; tests use it to make a name resolve wherever they need. */
  lookup?: ResolveHost
  /** Extra trusted certificate authorities, in PEM (a private PKI, or a test's own certificate). */
  ca?: string | Buffer | Array<string | Buffer>
}

/** Why a delivery did not succeed, as a short stable string for logs and the delivery record. */
export type DeliveryError =
  | 'timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'connection_error'
  | 'host_unreachable'
  | 'blocked_address'
  | 'dns_failure'
  | 'invalid_url'
  | 'invalid_response'
  | 'redirect_not_followed'
  | 'tls_error'
  | `http_${number}`

export interface DeliveryResult {
  /** True for any 2xx answer. */
  ok: boolean
  /** The receiver's status code, when it answered at all. */
  status?: number
  latencyMs: number
  error?: DeliveryError
  /** The address the socket actually connected to, when it did. */
  connectedAddress?: string
}

type Outcome = Omit<DeliveryResult, 'latencyMs'>

interface Target {
  protocol: 'http:' | 'https:'
  /** Host name or IP literal, IPv6 without brackets. */
  host: string
  port: number | undefined
  path: string
}

/**
 * Sends one webhook request and reports what happened; it never throws for anything the network
 * or the receiver does.
 *
 * SSRF: the host is resolved once, every address it resolves to must be allowed (a name that
 * mixes a public and a private address is refused as a whole), and the socket is then pinned to
 * the address that was checked by handing the request a lookup function that can only return
 * it. No second resolution happens, so a name that changes its answer between check and connect
 * (DNS rebinding) cannot redirect the request. TLS still verifies the certificate against the
 * host name, and SNI and the Host header carry the name, so virtual hosting works as usual.
 * Redirects are never followed: a 3xx counts as a failure.
 */
export async function deliver(request: DeliveryRequest): Promise<DeliveryResult> {
  const startedAt = performance.now()
  const elapsedMs = (): number => Math.round(performance.now() - startedAt)
  const timeoutMs = request.timeoutMs ?? DELIVERY_TIMEOUT_MS
  assert(
    Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= DELIVERY_TIMEOUT_MS_MAX,
    `timeoutMs must be in (0, ${DELIVERY_TIMEOUT_MS_MAX}], got ${timeoutMs}`,
  )
  assert(request.body.length <= REQUEST_BODY_BYTES_MAX, `webhook body of ${request.body.length} bytes`)
  const failure = (error: DeliveryError): DeliveryResult => ({ ok: false, error, latencyMs: elapsedMs() })

  const target = parseTarget(request.url)
  if (target === null) return failure('invalid_url')

  const policy = { allowLoopback: request.allowLoopback, allowPrivate: request.allowPrivate }
  const chosen = await resolveAllowed(target.host, { lookup: request.lookup, timeoutMs, policy })
  if (typeof chosen === 'string') return failure(chosen)

  const remainingMs = timeoutMs - (performance.now() - startedAt)
  if (remainingMs <= 0) return failure('timeout')
  const outcome = await send(target, chosen, request, remainingMs, policy)
  return { ...outcome, latencyMs: elapsedMs() }
}

function parseTarget(url: string): Target | null {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return null
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null
  let host = parsed.hostname
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  if (host === '') return null
  return {
    protocol: parsed.protocol,
    host,
    port: parsed.port === '' ? undefined : Number(parsed.port),
    path: `${parsed.pathname}${parsed.search}`,
  }
}

function send(
  target: Target,
  chosen: ResolvedAddress,
  request: DeliveryRequest,
  timeoutMs: number,
  policy: AddressPolicy,
): Promise<Outcome> {
  return new Promise((resolveOutcome) => {
    let settled = false
    let status: number | undefined
    let connectedAddress: string | undefined
    let secured = false
    let response: http.IncomingMessage | undefined

    const client = target.protocol === 'https:' ? https : http
    const req = client.request({
      protocol: target.protocol,
      hostname: target.host,
      port: target.port,
      path: target.path,
      method: request.method,
      headers: withDefaultHeaders(request.headers, request.body.length),
      // A fresh agent per request: no pooled socket from an earlier resolution can be reused.
      agent: false,
      // The socket layer calls this instead of the resolver: only the address that was checked.
      lookup: pinnedLookup(chosen),
      ...(request.ca === undefined ? {} : { ca: request.ca }),
    })

    const finish = (outcome: Outcome): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      response?.destroy()
      req.destroy()
      resolveOutcome(connectedAddress === undefined ? outcome : { ...outcome, connectedAddress })
    }
    const timer = setTimeout(() => {
      // An answer whose status has arrived is judged by it even if its body is slow.
      finish(status === undefined ? { ok: false, error: 'timeout' } : outcomeOf(status))
    }, timeoutMs)

    req.on('socket', (socket: Socket) => {
      // A last check on the connected peer itself, independent of how the address was obtained.
      const checkPeer = (): void => {
        connectedAddress = socket.remoteAddress
        if (!isPeerAllowed(connectedAddress, policy)) finish({ ok: false, error: 'blocked_address' })
      }
      if (socket.connecting) socket.once('connect', checkPeer)
      else if (socket.remoteAddress !== undefined) checkPeer()
      socket.once('secureConnect', () => {
        secured = true
      })
    })

    req.on('response', (res) => {
      response = res
      status = res.statusCode ?? 0
      const judged = outcomeOf(status)
      let bytesRead = 0
      res.on('data', (chunk: Buffer) => {
        // The body is read only so the exchange ends cleanly; it is discarded, and capped.
        bytesRead += chunk.length
        if (bytesRead >= RESPONSE_BYTES_MAX) finish(judged)
      })
      res.on('end', () => finish(judged))
      res.on('error', () => finish(judged))
      res.on('close', () => finish(judged))
    })

    req.on('error', (error) => {
      const duringHandshake = target.protocol === 'https:' && connectedAddress !== undefined && !secured
      finish({ ok: false, error: errorOf(error, duringHandshake) })
    })

    req.end(request.body)
  })
}

/** Content-Length from the body; a JSON content type and a user agent unless the caller set them. */
function withDefaultHeaders(headers: Record<string, string>, bodyLength: number): Record<string, string> {
  const given = new Set(Object.keys(headers).map((name) => name.toLowerCase()))
  const merged: Record<string, string> = {}
  if (!given.has('content-type')) merged['Content-Type'] = 'application/json'
  if (!given.has('user-agent')) merged['User-Agent'] = 'svcpay-webhooks/1'
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'content-length') merged[name] = value
  }
  merged['Content-Length'] = String(bodyLength)
  return merged
}

function outcomeOf(status: number): Outcome {
  if (status >= 200 && status <= 299) return { ok: true, status }
  if (status >= 300 && status <= 399) return { ok: false, status, error: 'redirect_not_followed' }
  return { ok: false, status, error: `http_${status}` }
}

/** OpenSSL's certificate verification results, as Node reports them in `error.code`. */
const CERTIFICATE_ERROR_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
  'EPROTO',
])

function errorOf(error: Error, duringHandshake: boolean): DeliveryError {
  const code = (error as NodeJS.ErrnoException).code ?? ''
  if (code === 'ECONNREFUSED') return 'connection_refused'
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') return 'host_unreachable'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_failure'
  if (
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code.startsWith('CERT_') ||
    CERTIFICATE_ERROR_CODES.has(code) ||
    duringHandshake
  ) {
    return 'tls_error'
  }
  if (code.startsWith('HPE_')) return 'invalid_response'
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset'
  return 'connection_error'
}
