/**
 * One exchange with LND's REST gateway and how its answer is read, and what LND's errors mean:
 * the one place the LND rail's failure codes and retryability are decided. How grpc-gateway
 * writes answers and errors: see lnd.ts.
 */
import type http from 'node:http'

import { assert } from '../../shared/assert.js'
import { asObject, httpRequest, parseJsonText, TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure } from '../../rails/rail.js'

/**
 * gRPC status codes that grpc-gateway puts in `code` (google.golang.org/grpc/codes). The HTTP status
 * beside them follows grpc-gateway's runtime/errors.go `HTTPStatusFromCode`: Unknown and Internal
 * 500, InvalidArgument 400, NotFound 404, AlreadyExists 409, PermissionDenied 403, Unauthenticated
 * 401, Unavailable 503, DeadlineExceeded 504.
 */
export const GRPC = {
  canceled: 1,
  unknown: 2,
  invalidArgument: 3,
  deadlineExceeded: 4,
  notFound: 5,
  alreadyExists: 6,
  permissionDenied: 7,
  resourceExhausted: 8,
  aborted: 10,
  internal: 13,
  unavailable: 14,
  unauthenticated: 16,
} as const

/**
 * LND's answers when a payment for this hash already exists (payments/db/errors.go:
 * ErrPaymentExists, ErrPaymentInFlight, ErrAlreadyPaid, sent as AlreadyExists by
 * routerrpc/router_server.go SendPaymentV2): it has not paid twice, and Track knows the payment.
 */
const ALREADY_STARTED_RE = /invoice is already paid|payment is in transition|payment already exists/i
/**
 * Macaroon failures come back as plain gRPC `Unknown` errors (rpcperms/interceptor.go checkMacaroon,
 * macaroons/service.go CheckMacAuth, macaroon-bakery's "permission denied"); only the text tells.
 */
const AUTH_RE = /macaroon|verification failed|permission denied|cannot get macaroon/i
/**
 * `Unknown` errors that say the node is not ready rather than that the request is wrong: a node
 * starting, locked or stopping (rpcperms/interceptor.go ErrRPCStarting, ErrWaitingToStart,
 * ErrWalletLocked, ErrNoWallet, "server exiting"; routerrpc "server shutting down"), a busy
 * database, or grpc-gateway's own connection to LND's gRPC server failing.
 */
const TRANSIENT_RE =
  /in the process of starting up|waiting to start|wallet locked|wallet not created|shutting down|server exiting|database is locked|unable to determine macaroon permissions|context deadline exceeded|transport is closing|connection refused|connection reset|error reading from server/i

/** How an LND error is to be treated. */
export type LndErrorKind = 'already_started' | 'unauthorized' | 'transient' | 'permanent'

export interface LndError {
  status: number
  code: number | undefined
  message: string
}

/** An exchange's outcome: the answer's object, or the error LND (or a proxy) answered. */
export type LndAnswer = { ok: Record<string, unknown> } | { error: LndError }

export type LndCall = (
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  stream?: boolean,
) => Promise<LndAnswer>

/** Where requests go and how they are sent; fixed when the rail is built. */
export interface LndEndpoint {
  /** The base URL without a trailing slash. */
  baseUrl: string
  headers: Record<string, string>
  timeoutMs: number
  agent: http.Agent | undefined
}

/**
 * What an LND error means for the caller. Request-validation errors (an expired invoice, a
 * self-payment, an amount where none is allowed: routerrpc/router_backend.go
 * extractIntentFromSendRequest) are plain Go errors, so gRPC `Unknown` and HTTP 500: they are
 * permanent, and asking again gets the same answer for ever. A node that is not ready says so in
 * words (TRANSIENT_RE) or with `Unavailable`; a proxy in front of it answers 5xx without a gRPC
 * body. Those are retryable.
 */
export function classifyLndError(err: {
  status: number
  code?: number | undefined
  message: string
}): LndErrorKind {
  if (err.code === GRPC.alreadyExists || ALREADY_STARTED_RE.test(err.message)) return 'already_started'
  if (
    err.status === 401 ||
    err.status === 403 ||
    err.code === GRPC.unauthenticated ||
    err.code === GRPC.permissionDenied ||
    AUTH_RE.test(err.message)
  ) {
    return 'unauthorized'
  }
  if (TRANSIENT_RE.test(err.message)) return 'transient'
  switch (err.code) {
    case GRPC.canceled:
    case GRPC.deadlineExceeded:
    case GRPC.resourceExhausted:
    case GRPC.aborted:
    case GRPC.unavailable:
      return 'transient'
    case undefined:
      // Not a gRPC answer at all: a proxy or load balancer; its 5xx and 429 pass.
      return err.status >= 500 || err.status === 429 || err.status === 0 ? 'transient' : 'permanent'
    default:
      // Unknown, Internal, InvalidArgument, NotFound, FailedPrecondition, ...: LND said no.
      return 'permanent'
  }
}

/** Turns an LND error that no caller handles specially into a failure. */
export function lndFailure(err: LndError, what: string): RailFailure {
  const text = `${what}: ${err.message}`
  const kind = classifyLndError(err)
  if (kind === 'unauthorized') return new RailFailure('unauthorized', text, false)
  return new RailFailure('node_error', text, kind === 'transient')
}

/** One exchange: the answer's object on success, or the parsed LND error. */
export async function lndCall(
  endpoint: LndEndpoint,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  stream = false,
): Promise<LndAnswer> {
  const res = await httpRequest({
    url: endpoint.baseUrl + path,
    method,
    headers: endpoint.headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: endpoint.timeoutMs,
    agent: endpoint.agent,
    firstLineOnly: stream,
  })
  return readLndAnswer(`LND ${method} ${path.split('/').slice(0, 3).join('/')}`, res.status, res.text, stream)
}

/**
 * An answer read: streams (grpc-gateway runtime/handler.go ForwardResponseStream) write one
 * `{"result": ...}` or `{"error": ...}` per line; an error before the first result carries the
 * HTTP status of its gRPC code, one after it comes on a 200. Only the first line is read.
 */
export function readLndAnswer(what: string, status: number, text: string, stream: boolean): LndAnswer {
  if (text.trim() === '') {
    if (status >= 200 && status < 300) return { ok: {} }
    return { error: { status, code: undefined, message: `HTTP ${status} with no body` } }
  }
  let parsed: unknown
  try {
    parsed = parseJsonText(text, what)
  } catch (err) {
    // A proxy's error page in front of LND is an answer of that proxy, not of LND.
    if (status >= 300) return { error: { status, code: undefined, message: `HTTP ${status}` } }
    throw err
  }
  const json = asObject(parsed, what)
  // A stream's line wraps its message as `{ result }` or `{ error }`; a unary answer is bare.
  if (stream && 'error' in json) return { error: lndError(status, asObject(json.error, what)) }
  if (stream && 'result' in json) return { ok: asObject(json.result, what) }
  if (status >= 200 && status < 300) {
    if (stream)
      throw new RailFailure(TRANSPORT_CODES.badResponse, `${what}: stream line without result`, true)
    return { ok: json }
  }
  return { error: lndError(status, json) }
}

function lndError(status: number, body: Record<string, unknown>): LndError {
  return {
    status,
    code: typeof body.code === 'number' ? body.code : undefined,
    message: typeof body.message === 'string' ? body.message : `HTTP ${status}`,
  }
}

/** A GET whose refusal is a failure: for the reconciliation's reads. */
export async function getOk(call: LndCall, path: string): Promise<Record<string, unknown>> {
  const res = await call('GET', path)
  if ('error' in res) throw lndFailure(res.error, `GET ${path.split('?')[0]}`)
  return res.ok
}

/** REST int64 fields are decimal strings; anything else is an answer we do not understand. */
export function intString(value: unknown, field: string): bigint {
  if (
    (typeof value === 'string' && /^\d{1,20}$/.test(value)) ||
    (typeof value === 'number' && Number.isSafeInteger(value))
  ) {
    return BigInt(value)
  }
  throw new RailFailure(TRANSPORT_CODES.badResponse, `${field} is not an integer`, true)
}

/** Refuses a payment hash that is not 32 bytes of lower-case hex before it reaches a URL or body. */
export function checkPaymentHash(paymentHash: string): void {
  assert(/^[0-9a-f]{64}$/.test(paymentHash), 'payment hash must be 64 lower-case hex digits')
}
