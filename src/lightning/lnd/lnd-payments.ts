/**
 * Paying on the LND rail: SendPaymentV2 with the node's own record of the hash deciding whenever
 * the send's answer does not (TrackPaymentV2), and what an `lnrpc.Payment` says about a payment.
 */
import { TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure, type LightningPaymentState, type LightningRail } from '../../rails/rail.js'
import { decodeInvoice } from '../bolt11.js'
import type { LndDeps } from './lnd-deps.js'
import {
  checkPaymentHash,
  classifyLndError,
  GRPC,
  intString,
  lndFailure,
  type LndAnswer,
  type LndError,
} from './lnd-http.js'

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

/** The base64url path form of a 32-byte hash, as grpc-gateway's `runtime.Bytes` accepts it. */
const hashPathParam = (paymentHash: string) => Buffer.from(paymentHash, 'hex').toString('base64url') + '='

/** `LightningRail.lookupPayment`. */
export async function lookupPayment(deps: LndDeps, paymentHash: string): Promise<LightningPaymentState> {
  checkPaymentHash(paymentHash)
  // TrackPaymentV2 (routerrpc/router_server.go): routing/control_tower.go SubscribePayment always
  // queues the payment's current state first, so without no_inflight_updates the first line is
  // where it stands now. A hash never initiated is NotFound ("payment isn't initiated",
  // payments/db/errors.go).
  const res = await deps.call('GET', `/v2/router/track/${hashPathParam(paymentHash)}`, undefined, true)
  if ('error' in res) {
    const { error } = res
    if (error.code === GRPC.notFound || /isn't initiated/.test(error.message)) return { status: 'unknown' }
    // A 404 without LND's body is a proxy or a wrong URL, not an answer about the payment.
    throw lndFailure(error, 'track payment')
  }
  // An empty stream (closed before any message) says nothing: ask again later.
  if (Object.keys(res.ok).length === 0)
    throw new RailFailure(TRANSPORT_CODES.badResponse, 'track payment: stream ended without a message', true)
  return paymentState(res.ok)
}

/**
 * After a send LND refused or did not answer: its own record of the hash decides. A payment it
 * has is reported whatever the send's answer said; `fallback` is thrown only when it has none.
 */
async function trackOr(
  deps: LndDeps,
  paymentHash: string,
  fallback: RailFailure,
): Promise<LightningPaymentState> {
  let state: LightningPaymentState
  try {
    state = await lookupPayment(deps, paymentHash)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    // Not knowing whether LND has the payment, we cannot call it failed.
    throw new RailFailure(fallback.code, `${fallback.message}; tracking failed: ${err.message}`, true)
  }
  if (state.status !== 'unknown') return state
  throw fallback
}

/** `LightningRail.sendPayment`. */
export async function sendPayment(
  deps: LndDeps,
  { paymentRequest, amountMsat, feeLimitMsat }: Parameters<LightningRail['sendPayment']>[0],
): Promise<LightningPaymentState> {
  const { network } = deps.options
  const invoice = decodeInvoice(paymentRequest)
  if ('error' in invoice) throw new RailFailure('invalid_invoice', invoice.error, false)
  if (invoice.network !== network) {
    throw new RailFailure(
      'invalid_invoice',
      `invoice is for ${invoice.network}, node is on ${network}`,
      false,
    )
  }
  if (invoice.amountMsat !== null && invoice.amountMsat !== amountMsat) {
    throw new RailFailure('amount_mismatch', 'amount differs from the invoice amount', false)
  }
  const body: Record<string, unknown> = {
    payment_request: paymentRequest,
    fee_limit_msat: feeLimitMsat.toString(),
    timeout_seconds: deps.paymentTimeoutSeconds,
    no_inflight_updates: true,
  }
  // LND refuses an amount for an invoice that carries one, and needs it for one that does not.
  if (invoice.amountMsat === null) body.amt_msat = amountMsat.toString()

  let res: LndAnswer
  try {
    res = await deps.call('POST', '/v2/router/send', body, true)
  } catch (err) {
    // No outcome within our deadline says nothing about the payment: LND keeps routing it after
    // we hang up (we never set `cancelable`). Its own record decides what to report.
    if (!(err instanceof RailFailure) || !err.retryable) throw err
    return trackOr(deps, invoice.paymentHash, err)
  }
  if ('error' in res) {
    const { error } = res
    const kind = classifyLndError(error)
    // Already started or paid: never a second payment; Track reports the first one.
    if (kind === 'already_started') {
      // LND has a payment for the hash: whatever keeps Track from reporting it is not final.
      return lookupPayment(deps, invoice.paymentHash).catch((err: unknown) => {
        if (!(err instanceof RailFailure)) throw err
        throw new RailFailure(err.code, `payment exists on the node; ${err.message}`, true)
      })
    }
    // Anything else may still have come after LND recorded the payment (a shutdown in the
    // middle of the stream is `Unknown` too), so LND's record is asked before the refusal is
    // believed.
    return trackOr(deps, invoice.paymentHash, sendRefusal(error, lndFailure(error, 'send payment')))
  }
  // An empty stream (closed before any message) leaves the node's record as the only witness.
  if (Object.keys(res.ok).length === 0)
    return trackOr(
      deps,
      invoice.paymentHash,
      new RailFailure(TRANSPORT_CODES.badResponse, 'send payment: stream ended without a message', true),
    )
  return paymentState(res.ok)
}

/**
 * SendPaymentV2's own refusals (routerrpc/router_backend.go extractIntentFromSendRequest,
 * ValidatePayReqExpiry) under the reason codes a transaction's `msg` uses; others stay as given.
 */
export function sendRefusal(err: LndError, failure: RailFailure): RailFailure {
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

/** Maps one `lnrpc.Payment` message to our payment state. */
export function paymentState(payment: Record<string, unknown>): LightningPaymentState {
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
