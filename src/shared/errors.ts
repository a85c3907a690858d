/**
 * The contract's error model. Expected failures are values of `ApiError`; routes throw them (or
 * return them from services) and the HTTP layer turns them into the contract's body shape.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_json'
  | 'invalid_amount'
  | 'amount_below_minimum'
  | 'invalid_address'
  | 'invalid_payment_request'
  | 'unsupported_method'
  | 'unsupported_currency_pair'
  | 'method_not_available'
  | 'kyc_required'
  | 'invalid_institution'
  | 'unauthorized'
  | 'invalid_signature'
  | 'signature_reused'
  | 'forbidden'
  | 'not_found'
  | 'duplicate_ext_ref_id'
  | 'invalid_state'
  | 'quote_expired'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limit_exceeded'
  | 'internal_error'
  | 'service_unavailable'
  | 'rate_unavailable'
  | 'sends_paused'
  // A send refused by a limit or screening (contract section 11); details name the limit.
  | 'limit_exceeded'

const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_amount: 400,
  amount_below_minimum: 400,
  invalid_address: 400,
  invalid_payment_request: 400,
  unsupported_method: 400,
  unsupported_currency_pair: 400,
  method_not_available: 400,
  kyc_required: 400,
  invalid_institution: 400,
  unauthorized: 401,
  invalid_signature: 401,
  signature_reused: 401,
  forbidden: 403,
  not_found: 404,
  duplicate_ext_ref_id: 409,
  invalid_state: 409,
  quote_expired: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limit_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
  // Quotes are refused rather than priced on stale market data.
  rate_unavailable: 503,
  // Reconciliation found a lasting deficit on the rail (RECONCILE_HALT_SENDS, docs/reconciliation.md).
  sends_paused: 503,
  // A volume, velocity or destination limit refused a quote or a confirm (contract section 11, docs/limits.md).
  limit_exceeded: 403,
}

export interface ErrorDetail {
  field: string
  issue: string
  /**
   * A `limit_exceeded` refusal's detail (contract section 11): the limit's name, the amount still
   * allowed as exact decimal text in `ccy` (or a count, for `sends_per_hour`), and when the window
   * frees up (epoch ms; absent for a limit without a window).
   */
  limit?: string
  ccy?: string
  remaining?: string
  resetsAt?: number
}

export interface ErrorBody {
  error: ErrorCode
  message: string
  details?: ErrorDetail[]
}

export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message)
    this.status = STATUS[code]
  }

  toBody(): ErrorBody {
    return this.details?.length
      ? { error: this.code, message: this.message, details: this.details }
      : { error: this.code, message: this.message }
  }
}

export function statusOf(code: ErrorCode): number {
  return STATUS[code]
}

/** Shorthand for a 400 about one field. */
export function fieldError(code: ErrorCode, field: string, issue: string): ApiError {
  return new ApiError(code, `${field}: ${issue}`, [{ field, issue }])
}

export const notFound = (what: string) => new ApiError('not_found', `${what} not found`)
