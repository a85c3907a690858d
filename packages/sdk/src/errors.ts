import type { ErrorCode, ErrorDetail } from './types.js'

/** Where a failed call went, for messages and logs. */
export interface RequestInfo {
  method: string
  path: string
}

/**
 * Every failure the SDK reports: the contract's error `code`, the service's `message`, the HTTP
 * `status` (0 when no answer arrived) and the per-field `details`. Catch a subclass to handle one
 * kind of failure. A transaction that fails after it was accepted is not an error here: it comes
 * back with `txnState` 'failed' and the reason in `msg`.
 */
export class SvcpayError extends Error {
  override name = 'SvcpayError'
  readonly code: ErrorCode
  readonly status: number
  readonly details: ErrorDetail[]
  readonly request: RequestInfo | undefined

  constructor(init: {
    code: ErrorCode
    message: string
    status: number
    details?: ErrorDetail[]
    request?: RequestInfo
    cause?: unknown
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.code = init.code
    this.status = init.status
    this.details = init.details ?? []
    this.request = init.request
  }
}

/** 400: the request was refused as it stands (`invalid_request`, `invalid_amount`, `kyc_required`, ...). */
export class SvcpayValidationError extends SvcpayError {
  override name = 'SvcpayValidationError'
}

/** 401: missing, expired or revoked credentials, or a bad signature. The SDK has already renewed its token once. */
export class SvcpayAuthenticationError extends SvcpayError {
  override name = 'SvcpayAuthenticationError'
}

/** 403: the credentials are good but may not read that resource. */
export class SvcpayForbiddenError extends SvcpayError {
  override name = 'SvcpayForbiddenError'
}

/** 404: no such transaction, webhook or wallet (or it belongs to another account). */
export class SvcpayNotFoundError extends SvcpayError {
  override name = 'SvcpayNotFoundError'
}

/** 409: `duplicate_ext_ref_id`, `invalid_state` or `quote_expired`. */
export class SvcpayConflictError extends SvcpayError {
  override name = 'SvcpayConflictError'
}

/** 429 after the SDK's own bounded retries: how long the service asked to wait is in `retryAfterMs`. */
export class SvcpayRateLimitError extends SvcpayError {
  override name = 'SvcpayRateLimitError'
  readonly retryAfterMs: number | undefined
  constructor(init: ConstructorParameters<typeof SvcpayError>[0] & { retryAfterMs?: number }) {
    super(init)
    this.retryAfterMs = init.retryAfterMs
  }
}

/** 5xx: `internal_error` or `service_unavailable`. */
export class SvcpayServerError extends SvcpayError {
  override name = 'SvcpayServerError'
}

/**
 * No answer: the connection failed or timed out (code `network_error` or `timeout`, status 0).
 * A create without extRefId that ends like this may or may not have happened; read it back by
 * listing, or create with an extRefId so that the SDK can safely retry it.
 */
export class SvcpayNetworkError extends SvcpayError {
  override name = 'SvcpayNetworkError'
}

/** A webhook whose signature did not verify, or that was not a webhook at all; answer it with 401. */
export class SvcpayWebhookError extends SvcpayError {
  override name = 'SvcpayWebhookError'
}

/** Builds the typed error for a non-2xx answer from the service. */
export function errorFromResponse(
  status: number,
  body: unknown,
  request: RequestInfo,
  retryAfterMs?: number,
): SvcpayError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
  const code = typeof b.error === 'string' ? b.error : status >= 500 ? 'internal_error' : `http_${status}`
  const message =
    typeof b.message === 'string' ? b.message : `${request.method} ${request.path} answered HTTP ${status}`
  const details = Array.isArray(b.details)
    ? b.details
        .filter((d): d is ErrorDetail => typeof d?.field === 'string' && typeof d?.issue === 'string')
        .map((d) => ({ field: d.field, issue: d.issue }))
    : []
  const init = { code, message, status, details, request }
  if (status === 400 || status === 413 || status === 415) return new SvcpayValidationError(init)
  if (status === 401) return new SvcpayAuthenticationError(init)
  if (status === 403) return new SvcpayForbiddenError(init)
  if (status === 404) return new SvcpayNotFoundError(init)
  if (status === 409) return new SvcpayConflictError(init)
  if (status === 429) return new SvcpayRateLimitError({ ...init, retryAfterMs })
  if (status >= 500) return new SvcpayServerError(init)
  return new SvcpayError(init)
}
