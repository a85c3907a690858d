import { ApiError, type ErrorCode, type ErrorDetail } from '../shared/errors.js'

/**
 * Why the amount arithmetic of a transaction refuses a request. The pure functions (money.ts,
 * amount-limits.ts, the receive quote) return a `MoneyError` instead of throwing, the flows pass it
 * on, and the service turns it into the contract's error with `moneyApiError`: only that function
 * knows about HTTP.
 */
export type MoneyErrorCode =
  /** `amtRequested` on both sides of one request. */
  | 'amount_on_both_sides'
  /** `amtRequested` on neither side where one is needed. */
  | 'amount_missing'
  /** `amtRequested` is not an amount its currency can hold. */
  | 'amount_malformed'
  /** The fees take all of the amount, leaving nothing to deliver. */
  | 'amount_below_fees'
  /** The amount converts to less than one minor unit of the destination currency. */
  | 'converts_to_nothing'
  /** An amount, a fee or their total above a cap: one side's, the operator's receive maximum, Bitcoin's supply. */
  | 'amount_over_limit'

/** The request field a refusal names, as the contract's `details[].field` spells it. */
export type MoneyField =
  | 'sourceReq.amtRequested'
  | 'destReq.amtRequested'
  | 'sourceReq.svcpayFees'
  | 'sourceReq.networkFees'
  | 'destReq.reqDetails.paymentRequest'
  /** Fees or a conversion that fail whichever side the amount came from (or the invoice's own). */
  | 'amtRequested'

export interface MoneyError {
  kind: 'money_error'
  code: MoneyErrorCode
  field: MoneyField
  /** What is wrong with the field, for a person. It names a limit, never the amount that was sent. */
  reason: string
}

export const moneyError = (code: MoneyErrorCode, field: MoneyField, reason: string): MoneyError => ({
  kind: 'money_error',
  code,
  field,
  reason,
})

export function isMoneyError(value: object | undefined): value is MoneyError {
  return value !== undefined && 'kind' in value && value.kind === 'money_error'
}

/**
 * The contract's error for each code (its HTTP status follows from it). A code without a message of
 * its own reads "field: reason".
 */
const CONTRACT: Record<MoneyErrorCode, { error: ErrorCode; message?: string }> = {
  amount_on_both_sides: { error: 'invalid_request', message: 'Set amtRequested on one side only' },
  amount_missing: { error: 'invalid_request' },
  amount_malformed: { error: 'invalid_amount' },
  amount_below_fees: { error: 'invalid_amount' },
  converts_to_nothing: { error: 'invalid_amount' },
  amount_over_limit: { error: 'invalid_amount' },
}

/** The one translation of a `MoneyError` into the contract's error body. */
export function moneyApiError(refusal: MoneyError): ApiError {
  const { error, message } = CONTRACT[refusal.code]
  return new ApiError(error, message ?? `${refusal.field}: ${refusal.reason}`, [
    { field: refusal.field, issue: refusal.reason },
  ])
}

/**
 * A refusal by a flow's own checks of what a request names (an invoice, an address, a bank
 * account). The flow's module defines its codes and the contract's error each answers with
 * (src/lightning/errors.ts, src/onchain/errors.ts, src/payouts/errors.ts); the engine only answers
 * it, knowing no flow.
 */
export interface FlowRefusal<C extends string = string> {
  kind: 'flow_refusal'
  code: C
  /** The contract's error code for `code`, from its module's table. */
  error: ErrorCode
  /** Every field at fault, so that a caller can fix the request in one go. */
  details: ErrorDetail[]
}

export function flowRefusal<C extends string>(
  contract: Record<C, ErrorCode>,
  code: C,
  details: ErrorDetail[],
): FlowRefusal<C> {
  return { kind: 'flow_refusal', code, error: contract[code], details }
}

export function isFlowRefusal(value: object): value is FlowRefusal {
  return 'kind' in value && value.kind === 'flow_refusal'
}

/** Whatever a flow's quote refuses, as a value: its amounts, or what the request names. */
export type QuoteRefusal = MoneyError | FlowRefusal

/** Whether a quote came back refused. A `Quote` has no `kind`. */
export function isRefusal(value: object): value is QuoteRefusal {
  return 'kind' in value
}

/**
 * The one translation of a quote's refusal into the contract's error body. A flow's refusal reads
 * "field: issue" for each field at fault, joined by "; ".
 */
export function refusalApiError(refusal: QuoteRefusal): ApiError {
  if (refusal.kind === 'money_error') return moneyApiError(refusal)
  const message = refusal.details.map((d) => `${d.field}: ${d.issue}`).join('; ')
  return new ApiError(refusal.error, message, refusal.details)
}
