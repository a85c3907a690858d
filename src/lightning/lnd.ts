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

import { assert } from '../shared/assert.js'
import {
  asObject,
  httpRequest,
  NODE_TIMEOUT_MS_DEFAULT,
  parseJsonText,
  TRANSPORT_CODES,
} from '../rails/http-json.js'
import type { Network } from '../rails/network.js'
import {
  RailFailure,
  type LightningInvoiceIssued,
  type LightningInvoiceState,
  type LightningPaymentState,
  type LightningRail,
  type RailCheckReport,
} from '../rails/rail.js'
import { decodeInvoice } from './bolt11.js'
import { lndPayments, lndReserves } from './lnd-reconcile.js'

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
  /**
   * Issue invoices with route hints for the node's private (unannounced) channels (`private: true`),
   * so that a node whose channels are all unannounced can still be paid. Default true.
   */
  privateInvoices?: boolean
}

/** LND's own default for `timeout_seconds` is 60; we state it so the request says what it means. */
export const PAYMENT_TIMEOUT_SECONDS_DEFAULT = 60

/**
 * gRPC status codes that grpc-gateway puts in `code` (google.golang.org/grpc/codes). The HTTP status
 * beside them follows grpc-gateway's runtime/errors.go `HTTPStatusFromCode`: Unknown and Internal
 * 500, InvalidArgument 400, NotFound 404, AlreadyExists 409, PermissionDenied 403, Unauthenticated
 * 401, Unavailable 503, DeadlineExceeded 504.
 */
const GRPC = {
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

/**
 * LND's `PaymentFailureReason` (lnrpc.PaymentFailureReason in lightning.proto) to our short reason
 * codes. Every value of the enum is here; all of them mean the payment is over and nothing was paid.
 */
export const FAILURE_REASONS: Record<string, string> = {
  // A FAILED payment without a reason is a contradiction in LND's record; it still failed.
  FAILURE_REASON_NONE: 'error',
  // The payment's timeout passed before a route was found; no HTLC is left in flight.
  FAILURE_REASON_TIMEOUT: 'timeout',
  FAILURE_REASON_NO_ROUTE: 'route_not_found',
  FAILURE_REASON_ERROR: 'error',
  // The payee refused: unknown payment hash, wrong amount, or an invoice it no longer accepts.
  FAILURE_REASON_INCORRECT_PAYMENT_DETAILS: 'incorrect_payment_details',
  FAILURE_REASON_INSUFFICIENT_BALANCE: 'insufficient_balance',
  // Stopped by its context rather than its timeout (routing/payment_lifecycle.go checkContext): a
  // `cancelable` payment whose caller went away. We never set `cancelable`, but a FAILED status is
  // final whatever the reason, and the hold is released.
  FAILURE_REASON_CANCELED: 'payment_canceled',
}

/** How an LND error is to be treated. */
export type LndErrorKind = 'already_started' | 'unauthorized' | 'transient' | 'permanent'

interface LndError {
  status: number
  code: number | undefined
  message: string
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

/** The base64url path form of a 32-byte hash, as grpc-gateway's `runtime.Bytes` accepts it. */
const hashPathParam = (paymentHash: string) => Buffer.from(paymentHash, 'hex').toString('base64url') + '='

/** The permissions the rail uses, by LND's entity:action names (rpcserver.go MainRPCServerPermissions, routerrpc and invoicesrpc permission maps). */
export const LND_PERMISSIONS_NEEDED = [
  'info:read',
  'offchain:read',
  'offchain:write',
  'invoices:read',
  'invoices:write',
] as const

/** LND's `chains[].network` names for our networks (chainreg, lncfg). */
const LND_NETWORK: Record<Network, string[]> = {
  mainnet: ['mainnet'],
  testnet: ['testnet', 'testnet4'],
  signet: ['signet'],
  regtest: ['regtest'],
}

export function createLndRail(options: LndRailOptions): LightningRail {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(options.macaroonHex)) throw new Error('LND macaroon must be hex')
  const base = options.url.replace(/\/+$/, '')
  const timeoutMs = options.timeoutMs ?? NODE_TIMEOUT_MS_DEFAULT
  const paymentTimeoutSeconds = options.paymentTimeoutSeconds ?? PAYMENT_TIMEOUT_SECONDS_DEFAULT
  const privateInvoices = options.privateInvoices ?? true
  // One keep-alive agent per rail; it carries the pinned certificate for every connection.
  const agent: http.Agent | undefined = base.startsWith('https:')
    ? new https.Agent({ keepAlive: true, ca: options.tlsCertPem })
    : undefined
  const headers = { 'Grpc-Metadata-macaroon': options.macaroonHex, 'content-type': 'application/json' }

  /**
   * One exchange; the answer's object on success, or the parsed LND error. Streams (grpc-gateway
   * runtime/handler.go ForwardResponseStream) write one `{"result": ...}` or `{"error": ...}` per
   * line; an error before the first result carries the HTTP status of its gRPC code, one after it
   * comes on a 200. Only the first line is read.
   */
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
    let parsed: unknown
    try {
      parsed = parseJsonText(res.text, what)
    } catch (err) {
      // A proxy's error page in front of LND is an answer of that proxy, not of LND.
      if (res.status >= 300)
        return { error: { status: res.status, code: undefined, message: `HTTP ${res.status}` } }
      throw err
    }
    const json = asObject(parsed, what)
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

  /** Turns an LND error that no caller handles specially into a failure. */
  function failure(err: LndError, what: string): RailFailure {
    const text = `${what}: ${err.message}`
    const kind = classifyLndError(err)
    if (kind === 'unauthorized') return new RailFailure('unauthorized', text, false)
    return new RailFailure('node_error', text, kind === 'transient')
  }

  async function lookupPayment(paymentHash: string): Promise<LightningPaymentState> {
    assert(/^[0-9a-f]{64}$/.test(paymentHash), 'payment hash must be 64 lower-case hex digits')
    // TrackPaymentV2 (routerrpc/router_server.go): routing/control_tower.go SubscribePayment always
    // queues the payment's current state first, so without no_inflight_updates the first line is
    // where it stands now. A hash never initiated is NotFound ("payment isn't initiated",
    // payments/db/errors.go).
    const res = await call('GET', `/v2/router/track/${hashPathParam(paymentHash)}`, undefined, true)
    if ('error' in res) {
      const { error } = res
      if (error.code === GRPC.notFound || /isn't initiated/.test(error.message)) return { status: 'unknown' }
      // A 404 without LND's body is a proxy or a wrong URL, not an answer about the payment.
      throw failure(error, 'track payment')
    }
    // An empty stream (closed before any message) says nothing: ask again later.
    if (Object.keys(res.ok).length === 0)
      throw new RailFailure(
        TRANSPORT_CODES.badResponse,
        'track payment: stream ended without a message',
        true,
      )
    return paymentState(res.ok)
  }

  /**
   * After a send LND refused or did not answer: its own record of the hash decides. A payment it
   * has is reported whatever the send's answer said; `fallback` is thrown only when it has none.
   */
  async function trackOr(paymentHash: string, fallback: RailFailure): Promise<LightningPaymentState> {
    let state: LightningPaymentState
    try {
      state = await lookupPayment(paymentHash)
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      // Not knowing whether LND has the payment, we cannot call it failed.
      throw new RailFailure(fallback.code, `${fallback.message}; tracking failed: ${err.message}`, true)
    }
    if (state.status !== 'unknown') return state
    throw fallback
  }

  async function getJson(path: string): Promise<{ ok: Record<string, unknown> } | { error: LndError }> {
    return call('GET', path)
  }

  /** A GET whose refusal is a failure: for the reconciliation's reads. */
  async function getOk(path: string): Promise<Record<string, unknown>> {
    const res = await call('GET', path)
    if ('error' in res) throw failure(res.error, `GET ${path.split('?')[0]}`)
    return res.ok
  }

  return {
    name: 'lnd',
    network: options.network,
    reserves: () => lndReserves(getOk),
    payments: (sinceMs) => lndPayments(getOk, sinceMs),

    async createInvoice({ amountMsat, description, expirySeconds }): Promise<LightningInvoiceIssued> {
      assert(amountMsat > 0n, 'invoice amount must be positive')
      const res = await call('POST', '/v1/invoices', {
        value_msat: amountMsat.toString(),
        memo: description,
        expiry: String(expirySeconds),
        // Route hints for private channels (lnrpc.Invoice.private; invoicesrpc/addinvoice.go
        // adds up to 20 hop hints), without which a node with only unannounced channels is
        // unreachable.
        private: privateInvoices,
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
        // rpcserver.go LookupInvoice: ErrInvoiceNotFound is NotFound (HTTP 404).
        if (error.code === GRPC.notFound || /unable to locate invoice/.test(error.message)) {
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
      if (!('error' in res)) return
      const { error } = res
      // invoices/invoiceregistry.go cancelInvoiceImpl answers success for an invoice already
      // canceled; older nodes said "invoice already canceled". Either way it is canceled.
      if (/already canceled/i.test(error.message)) return
      // A settled invoice cannot be canceled (invoices/update_invoice.go: ErrInvoiceAlreadySettled,
      // gRPC Unknown): the payer's money has arrived, and the caller must credit it.
      if (/already settled/i.test(error.message)) {
        throw new RailFailure('invoice_already_settled', `cancel invoice: ${error.message}`, false)
      }
      throw failure(error, 'cancel invoice')
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
        return trackOr(invoice.paymentHash, err)
      }
      if ('error' in res) {
        const { error } = res
        const kind = classifyLndError(error)
        // Already started or paid: never a second payment; Track reports the first one.
        if (kind === 'already_started') {
          // LND has a payment for the hash: whatever keeps Track from reporting it is not final.
          return lookupPayment(invoice.paymentHash).catch((err: unknown) => {
            if (!(err instanceof RailFailure)) throw err
            throw new RailFailure(err.code, `payment exists on the node; ${err.message}`, true)
          })
        }
        // Anything else may still have come after LND recorded the payment (a shutdown in the
        // middle of the stream is `Unknown` too), so LND's record is asked before the refusal is
        // believed.
        return trackOr(invoice.paymentHash, sendRefusal(error, failure(error, 'send payment')))
      }
      // An empty stream (closed before any message) leaves the node's record as the only witness.
      if (Object.keys(res.ok).length === 0)
        return trackOr(
          invoice.paymentHash,
          new RailFailure(TRANSPORT_CODES.badResponse, 'send payment: stream ended without a message', true),
        )
      return paymentState(res.ok)
    },

    lookupPayment,

    async check(): Promise<RailCheckReport> {
      const report: RailCheckReport = { rail: 'lightning', adapter: 'lnd', reachable: false, problems: [] }
      const { problems } = report
      let info: { ok: Record<string, unknown> } | { error: LndError }
      try {
        info = await getJson('/v1/getinfo')
      } catch (err) {
        problems.push(`LND at ${base} did not answer: ${(err as Error).message}`)
        return report
      }
      report.reachable = true
      if ('error' in info) {
        problems.push(`GET /v1/getinfo was refused: ${info.error.message}`)
      } else {
        const i = info.ok
        if (typeof i.version === 'string') report.version = i.version
        const chains = Array.isArray(i.chains) ? (i.chains as Array<Record<string, unknown>>) : []
        const bitcoin = chains.find((c) => c && c.chain === 'bitcoin') ?? chains[0]
        const network = typeof bitcoin?.network === 'string' ? bitcoin.network : undefined
        if (network) report.network = network
        if (!network) problems.push('LND did not say which network it is on')
        else if (!LND_NETWORK[options.network].includes(network))
          problems.push(`LND is on ${network}, the service is configured for ${options.network}`)
        if (bitcoin && bitcoin.chain !== 'bitcoin')
          problems.push(`LND runs on ${String(bitcoin.chain)}, not bitcoin`)
        report.synced = i.synced_to_chain === true
        if (!report.synced) problems.push('LND is not synced to the chain (synced_to_chain is false)')
        const major = /^(\d+)\.(\d+)/.exec(String(i.version ?? ''))
        if (major && Number(major[1]) === 0 && Number(major[2]) < 17)
          problems.push(`LND ${String(i.version)} is older than 0.17, the oldest version this rail supports`)
      }
      // Permissions: CheckMacaroonPermissions (rpcserver.go; needs macaroon:read) checks each one
      // the rail uses; it answers InvalidArgument for one the macaroon lacks.
      const granted: string[] = []
      let checked = true
      for (const perm of LND_PERMISSIONS_NEEDED) {
        const [entity, action] = perm.split(':') as [string, string]
        let res: Awaited<ReturnType<typeof call>>
        try {
          res = await call('POST', '/v1/macaroon/checkpermissions', {
            macaroon: Buffer.from(options.macaroonHex, 'hex').toString('base64'),
            permissions: [{ entity, action }],
          })
        } catch (err) {
          problems.push(`checking the macaroon failed: ${(err as Error).message}`)
          checked = false
          break
        }
        if (!('error' in res)) {
          if (res.ok.valid === true) granted.push(perm)
          else problems.push(`the macaroon lacks ${perm}`)
          continue
        }
        if (res.error.code === GRPC.invalidArgument || res.error.status === 400) {
          problems.push(`the macaroon lacks ${perm}`)
          continue
        }
        // The macaroon may not carry macaroon:read itself: then ask harmless calls instead.
        checked = false
        break
      }
      if (!checked) {
        granted.length = 0
        problems.splice(0, problems.length, ...problems.filter((p) => !p.startsWith('the macaroon lacks')))
        for (const [perm, ok] of await probePermissions()) {
          if (ok === true) granted.push(perm)
          else if (ok === false) problems.push(`the macaroon lacks ${perm}`)
          else problems.push(`could not tell whether the macaroon has ${perm}`)
        }
      }
      report.permissions = granted
      if (granted.includes('offchain:read')) {
        const balance = await getJson('/v1/balance/channels').catch((err: Error) => ({
          error: { status: 0, code: undefined, message: err.message },
        }))
        if ('error' in balance) problems.push(`channel balance unavailable: ${balance.error.message}`)
        else {
          const local = asRecord(balance.ok.local_balance)
          const msat = intOrNull(local?.msat)
          if (msat !== null) report.balances = { BTC: formatMsatAsBtc(msat) }
          if (msat === 0n) problems.push('LND has no outbound channel balance: it cannot pay anything')
        }
      }
      return report
    },
  }

  /**
   * Which permissions the macaroon has, from calls that change nothing: each either passes the
   * macaroon check and fails (or answers) as LND does for the request, or is refused with
   * "permission denied". Null where neither answer came.
   */
  async function probePermissions(): Promise<Array<[string, boolean | null]>> {
    const zeroHash = '00'.repeat(32)
    const probes: Array<[string, () => ReturnType<typeof call>]> = [
      ['info:read', () => call('GET', '/v1/getinfo')],
      ['offchain:read', () => call('GET', '/v1/balance/channels')],
      // A time preference out of range is the first thing SendPaymentV2 refuses
      // (router_backend.go extractIntentFromSendRequest), before any payment exists.
      ['offchain:write', () => call('POST', '/v2/router/send', { time_pref: 2 }, true)],
      ['invoices:read', () => call('GET', `/v1/invoice/${zeroHash}`)],
      // Cancelling a hash no invoice has: "unable to locate invoice" when allowed.
      [
        'invoices:write',
        () => call('POST', '/v2/invoices/cancel', { payment_hash: Buffer.alloc(32).toString('base64') }),
      ],
    ]
    const out: Array<[string, boolean | null]> = []
    for (const [perm, probe] of probes) {
      try {
        const res = await probe()
        if (!('error' in res)) out.push([perm, true])
        else if (classifyLndError(res.error) === 'unauthorized') out.push([perm, false])
        else if (classifyLndError(res.error) === 'transient') out.push([perm, null])
        else out.push([perm, true])
      } catch {
        out.push([perm, null])
      }
    }
    return out
  }
}

/**
 * SendPaymentV2's own refusals (routerrpc/router_backend.go extractIntentFromSendRequest,
 * ValidatePayReqExpiry) under the reason codes a transaction's `msg` uses; others stay as given.
 */
function sendRefusal(err: LndError, failure: RailFailure): RailFailure {
  if (failure.retryable || failure.code !== 'node_error') return failure
  const code = /invoice expired/i.test(err.message)
    ? 'invoice_expired'
    : /self-payments not allowed/i.test(err.message)
      ? 'self_payment'
      : /not for current active network|invalid payment request|payment request must contain/i.test(
            err.message,
          )
        ? 'invalid_invoice'
        : /amount must|mutually exclusive/i.test(err.message)
          ? 'amount_mismatch'
          : failure.code
  return new RailFailure(code, failure.message, false)
}

function lndError(status: number, body: Record<string, unknown>): LndError {
  return {
    status,
    code: typeof body.code === 'number' ? body.code : undefined,
    message: typeof body.message === 'string' ? body.message : `HTTP ${status}`,
  }
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

function intOrNull(value: unknown): bigint | null {
  return typeof value === 'string' && /^\d{1,20}$/.test(value) ? BigInt(value) : null
}

/** Millisatoshis as exact BTC text (11 decimals at most, trailing zeros dropped). */
function formatMsatAsBtc(msat: bigint): string {
  const whole = msat / 100_000_000_000n
  const frac = (msat % 100_000_000_000n).toString().padStart(11, '0').replace(/0+$/, '')
  return frac ? `${whole}.${frac}` : `${whole}`
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
    case 'FAILED': {
      const reason = FAILURE_REASONS[String(payment.failure_reason)]
      // A reason added upstream after this code was written: the payment still failed.
      return { status: 'failed', reason: reason ?? 'error' }
    }
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
