/**
 * The Lightning rail on a real LND node, through its REST gateway (LND 0.17 and later).
 *
 * REST follows LND's gRPC definitions through grpc-gateway: field names are the proto names
 * (snake_case), 64-bit integers are JSON strings, `bytes` fields are base64 and enums are their
 * names. Errors are `{ code, message, details }` with `code` the gRPC status code; streaming
 * endpoints write one JSON object per line, `{ result }` or `{ error }`.
 */
import https from 'node:https'
import type http from 'node:http'

import { assert } from '../../shared/assert.js'
import {
  asObject,
  httpRequest,
  NODE_TIMEOUT_MS_DEFAULT,
  parseJsonText,
  TRANSPORT_CODES,
} from '../http-json.js'
import type { Network } from '../network.js'
import {
  RailFailure,
  type LightningInvoiceIssued,
  type LightningInvoiceState,
  type LightningPaymentState,
  type LightningRail,
} from '../rail.js'
import { decodeInvoice } from './bolt11.js'

export interface LndRailOptions {
  /** The REST listener, e.g. `https://127.0.0.1:8080`. */
  url: string
  /** The macaroon (admin, or one baked for invoices and offchain), hex as `xxd -p -c 1000` prints it. */
  macaroonHex: string
  /** LND's `tls.cert`, PEM. Without it the system's certificate authorities decide. */
  tlsCertPem?: string
  network: Network
  /** Deadline of each request, and how long `sendPayment` waits for an outcome before reporting in flight. */
  timeoutMs?: number
  /** How long LND itself keeps trying routes for one payment (`timeout_seconds`). */
  paymentTimeoutSeconds?: number
}

/** LND's own default for `timeout_seconds` is 60; we state it so the request says what it means. */
export const PAYMENT_TIMEOUT_SECONDS_DEFAULT = 60

/** gRPC status codes that grpc-gateway puts in `code`. */
const GRPC_ALREADY_EXISTS = 6
const GRPC_NOT_FOUND = 5
const GRPC_UNAUTHENTICATED = 16
const GRPC_PERMISSION_DENIED = 7

/** LND's answers when a payment for this hash already exists: it has not paid twice. */
const ALREADY_STARTED_RE = /invoice is already paid|payment is in transition|payment already exists/i
/** Macaroon failures come back as plain gRPC `Unknown` errors; only the text tells them apart. */
const AUTH_RE = /macaroon|verification failed|permission denied/i

/** LND's `PaymentFailureReason` names to our short reason codes. */
const FAILURE_REASONS: Record<string, string> = {
  FAILURE_REASON_TIMEOUT: 'timeout',
  FAILURE_REASON_NO_ROUTE: 'route_not_found',
  FAILURE_REASON_ERROR: 'error',
  FAILURE_REASON_INCORRECT_PAYMENT_DETAILS: 'incorrect_payment_details',
  FAILURE_REASON_INSUFFICIENT_BALANCE: 'insufficient_balance',
}

interface LndError {
  status: number
  code: number | undefined
  message: string
}

export function createLndRail(options: LndRailOptions): LightningRail {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(options.macaroonHex)) throw new Error('LND macaroon must be hex')
  const base = options.url.replace(/\/+$/, '')
  const timeoutMs = options.timeoutMs ?? NODE_TIMEOUT_MS_DEFAULT
  const paymentTimeoutSeconds = options.paymentTimeoutSeconds ?? PAYMENT_TIMEOUT_SECONDS_DEFAULT
  // One keep-alive agent per rail; it carries the pinned certificate for every connection.
  const agent: http.Agent | undefined = base.startsWith('https:')
    ? new https.Agent({ keepAlive: true, ca: options.tlsCertPem })
    : undefined
  const headers = { 'Grpc-Metadata-macaroon': options.macaroonHex, 'content-type': 'application/json' }

  /** One exchange; the answer's object on success, or the parsed LND error. */
  async function call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    stream = false,
  ): Promise<{ ok: Record<string, unknown> } | { error: LndError }> {
    const res = await httpRequest({
      url: base + path,
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs,
      agent,
      firstLineOnly: stream,
    })
    const what = `LND ${method} ${path.split('/').slice(0, 3).join('/')}`
    if (res.text.trim() === '') {
      if (res.status >= 200 && res.status < 300) return { ok: {} }
      return { error: { status: res.status, code: undefined, message: `HTTP ${res.status} with no body` } }
    }
    const json = asObject(parseJsonText(res.text, what), what)
    // A stream's line wraps its message as `{ result }` or `{ error }`; a unary answer is bare.
    if (stream && 'error' in json) return { error: lndError(res.status, asObject(json.error, what)) }
    if (stream && 'result' in json) return { ok: asObject(json.result, what) }
    if (res.status >= 200 && res.status < 300) {
      if (stream)
        throw new RailFailure(TRANSPORT_CODES.badResponse, `${what}: stream line without result`, true)
      return { ok: json }
    }
    return { error: lndError(res.status, json) }
  }

  /** Turns an LND error that no caller handles specially into a failure: 4xx final, the rest retryable. */
  function failure(err: LndError, what: string): RailFailure {
    const text = `${what}: ${err.message}`
    if (
      err.status === 401 ||
      err.status === 403 ||
      err.code === GRPC_UNAUTHENTICATED ||
      err.code === GRPC_PERMISSION_DENIED ||
      AUTH_RE.test(err.message)
    ) {
      return new RailFailure('unauthorized', text, false)
    }
    // 5xx (and anything that is not a 4xx) may pass; a 4xx says the request itself is wrong.
    return new RailFailure('node_error', text, !(err.status >= 400 && err.status < 500))
  }

  async function lookupPayment(paymentHash: string): Promise<LightningPaymentState> {
    assert(/^[0-9a-f]{64}$/.test(paymentHash), 'payment hash must be 64 lower-case hex digits')
    // Path `bytes` parameters are base64; the URL-safe alphabet keeps '/' out of the path.
    const hashParam = Buffer.from(paymentHash, 'hex').toString('base64url') + '='
    // Without no_inflight_updates the first line is always the payment's current state.
    const res = await call('GET', `/v2/router/track/${hashParam}`, undefined, true)
    if ('error' in res) {
      const { error } = res
      if (error.status === 404 || error.code === GRPC_NOT_FOUND || /isn't initiated/.test(error.message)) {
        return { status: 'unknown' }
      }
      throw failure(error, 'track payment')
    }
    return paymentState(res.ok)
  }

  return {
    name: 'lnd',
    network: options.network,

    async createInvoice({ amountMsat, description, expirySeconds }): Promise<LightningInvoiceIssued> {
      assert(amountMsat > 0n, 'invoice amount must be positive')
      const res = await call('POST', '/v1/invoices', {
        value_msat: amountMsat.toString(),
        memo: description,
        expiry: String(expirySeconds),
      })
      if ('error' in res) throw failure(res.error, 'add invoice')
      const hash = Buffer.from(String(res.ok.r_hash ?? ''), 'base64')
      const paymentRequest = res.ok.payment_request
      if (hash.length !== 32 || typeof paymentRequest !== 'string' || paymentRequest === '') {
        throw new RailFailure(
          TRANSPORT_CODES.badResponse,
          'add invoice: answer lacks r_hash or payment_request',
          true,
        )
      }
      return { paymentRequest, paymentHash: hash.toString('hex') }
    },

    async lookupInvoice(paymentHash): Promise<LightningInvoiceState> {
      assert(/^[0-9a-f]{64}$/.test(paymentHash), 'payment hash must be 64 lower-case hex digits')
      const res = await call('GET', `/v1/invoice/${paymentHash}`)
      if ('error' in res) {
        const { error } = res
        if (
          error.status === 404 ||
          error.code === GRPC_NOT_FOUND ||
          /unable to locate invoice/.test(error.message)
        ) {
          throw new RailFailure('invoice_not_found', `lookup invoice: ${error.message}`, false)
        }
        throw failure(error, 'lookup invoice')
      }
      const state = String(res.ok.state)
      const amountPaidMsat = intString(res.ok.amt_paid_msat ?? '0', 'amt_paid_msat')
      if (state === 'SETTLED') return { state: 'settled', amountPaidMsat }
      if (state === 'CANCELED') return { state: 'canceled', amountPaidMsat: 0n }
      // ACCEPTED is a hold invoice whose HTLCs are locked in but not settled: not paid yet.
      if (state === 'OPEN' || state === 'ACCEPTED') return { state: 'open', amountPaidMsat: 0n }
      throw new RailFailure(TRANSPORT_CODES.badResponse, `lookup invoice: unknown state ${state}`, true)
    },

    async cancelInvoice(paymentHash): Promise<void> {
      assert(/^[0-9a-f]{64}$/.test(paymentHash), 'payment hash must be 64 lower-case hex digits')
      const res = await call('POST', '/v2/invoices/cancel', {
        payment_hash: Buffer.from(paymentHash, 'hex').toString('base64'),
      })
      // LND refuses to cancel twice; for us the invoice is then cancelled, which is all we asked.
      if ('error' in res && !/already canceled/i.test(res.error.message))
        throw failure(res.error, 'cancel invoice')
    },

    async sendPayment({ paymentRequest, amountMsat, feeLimitMsat }): Promise<LightningPaymentState> {
      const invoice = decodeInvoice(paymentRequest)
      if ('error' in invoice) throw new RailFailure('invalid_invoice', invoice.error, false)
      if (invoice.network !== options.network) {
        throw new RailFailure(
          'invalid_invoice',
          `invoice is for ${invoice.network}, node is on ${options.network}`,
          false,
        )
      }
      if (invoice.amountMsat !== null && invoice.amountMsat !== amountMsat) {
        throw new RailFailure('amount_mismatch', 'amount differs from the invoice amount', false)
      }
      const body: Record<string, unknown> = {
        payment_request: paymentRequest,
        fee_limit_msat: feeLimitMsat.toString(),
        timeout_seconds: paymentTimeoutSeconds,
        no_inflight_updates: true,
      }
      // LND refuses an amount for an invoice that carries one, and needs it for one that does not.
      if (invoice.amountMsat === null) body.amt_msat = amountMsat.toString()

      let res: Awaited<ReturnType<typeof call>>
      try {
        res = await call('POST', '/v2/router/send', body, true)
      } catch (err) {
        // No outcome within our deadline says nothing about the payment: LND keeps routing it after
        // we hang up (we never set `cancelable`). Its own record decides what to report.
        if (!(err instanceof RailFailure) || !err.retryable) throw err
        const state = await lookupPayment(invoice.paymentHash).catch(() => null)
        if (state && state.status !== 'unknown') return state
        throw err
      }
      if ('error' in res) {
        const { error } = res
        if (error.code === GRPC_ALREADY_EXISTS || ALREADY_STARTED_RE.test(error.message)) {
          return lookupPayment(invoice.paymentHash)
        }
        throw failure(error, 'send payment')
      }
      // An empty stream (closed before any message) leaves the node's record as the only witness.
      if (Object.keys(res.ok).length === 0) return lookupPayment(invoice.paymentHash)
      return paymentState(res.ok)
    },

    lookupPayment,
  }
}

function lndError(status: number, body: Record<string, unknown>): LndError {
  return {
    status,
    code: typeof body.code === 'number' ? body.code : undefined,
    message: typeof body.message === 'string' ? body.message : `HTTP ${status}`,
  }
}

/** Maps one `lnrpc.Payment` message to our payment state. */
function paymentState(payment: Record<string, unknown>): LightningPaymentState {
  switch (payment.status) {
    case 'SUCCEEDED': {
      const preimage = payment.payment_preimage
      if (typeof preimage !== 'string' || !/^[0-9a-f]{64}$/.test(preimage)) {
        throw new RailFailure(TRANSPORT_CODES.badResponse, 'payment succeeded without a preimage', true)
      }
      return { status: 'succeeded', preimage, feeMsat: intString(payment.fee_msat ?? '0', 'fee_msat') }
    }
    case 'FAILED':
      return { status: 'failed', reason: FAILURE_REASONS[String(payment.failure_reason)] ?? 'error' }
    case 'IN_FLIGHT':
    case 'INITIATED':
      return { status: 'in_flight' }
    default:
      throw new RailFailure(
        TRANSPORT_CODES.badResponse,
        `unknown payment status ${String(payment.status)}`,
        true,
      )
  }
}

/** REST int64 fields are decimal strings; anything else is an answer we do not understand. */
function intString(value: unknown, field: string): bigint {
  if (
    (typeof value === 'string' && /^\d{1,20}$/.test(value)) ||
    (typeof value === 'number' && Number.isSafeInteger(value))
  ) {
    return BigInt(value)
  }
  throw new RailFailure(TRANSPORT_CODES.badResponse, `${field} is not an integer`, true)
}
