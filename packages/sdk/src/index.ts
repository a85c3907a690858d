/**
 * @svcpay/sdk — the TypeScript client of the svcpay Wallet Service API v2.
 * See docs/sdk.md in the repository for a walk-through.
 */
export { SvcpayClient, SandboxApi } from './client.js'
export type { ClientOptions, RateLimitInfo } from './http.js'
export { Transport } from './http.js'
export {
  verifyWebhook,
  verifyWebhookRequest,
  SIGNATURE_HEADERS,
  WEBHOOK_METHODS,
  type HeadersLike,
} from './webhooks.js'
export { parseSse, type SseMessage, type StreamOptions } from './stream.js'
export {
  SvcpayError,
  SvcpayValidationError,
  SvcpayAuthenticationError,
  SvcpayForbiddenError,
  SvcpayNotFoundError,
  SvcpayConflictError,
  SvcpayRateLimitError,
  SvcpayServerError,
  SvcpayNetworkError,
  SvcpayWebhookError,
} from './errors.js'
export {
  toMinor,
  fromMinor,
  CURRENCY_DECIMALS,
  type AmountFormat,
  type AmountInput,
  type AmountOf,
} from './amounts.js'
export { parseJsonLossless, JsonNumber, JsonSyntaxError } from './json.js'
export { FINAL_STATES, isFinalState, PAYMENT_METHODS } from './types.js'
export type * from './types.js'
