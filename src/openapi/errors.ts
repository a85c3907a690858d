/**
 * Which error codes each operation of /openapi.json can answer, read from its code paths, so that
 * each operation's error answers describe its own codes and no others (issue 29). finishOpenapi
 * (openapi.ts) writes each status's codes into that answer's description and as an `enum` of the
 * body's `error`; test/openapi-errors.test.ts checks the table against the error map and provokes a
 * sample of the errors. A code an operation gains belongs here too.
 *
 * Shared by every operation, whatever it does:
 * - `invalid_request`: a NUL character in any query value, path parameter or body string is refused
 *   before any route runs (text-input.ts); a path the router cannot take apart too (errors.ts);
 * - `internal_error`: an unexpected failure;
 * - `rate_limit_exceeded`: every route but /healthz, /readyz and /metrics; a 4xx of a client address
 *   that has spent its window of failed requests becomes a 429 (rate-limit-headers.ts).
 * A Bearer route adds `unauthorized` and `service_unavailable` (its key is read from the database),
 * and a route taking a body (POST, PUT, DELETE) the body parser's `invalid_json`,
 * `payload_too_large` and `unsupported_media_type` (json-body.ts, errors.ts).
 */

import { statusOf, type ErrorCode } from '../shared/errors.js'

const ANY: readonly ErrorCode[] = ['invalid_request', 'internal_error']
const COUNTED: readonly ErrorCode[] = [...ANY, 'rate_limit_exceeded']
const BEARER: readonly ErrorCode[] = [...COUNTED, 'unauthorized', 'service_unavailable']
const BODY: readonly ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_media_type']

/** The 400s a quote's request can be refused with (transactions/, the flows' errors.ts, fiat/kyc.ts). */
const QUOTE_REFUSALS: readonly ErrorCode[] = [
  'invalid_amount',
  'amount_below_minimum',
  'invalid_address',
  'invalid_payment_request',
  'unsupported_method',
  'unsupported_currency_pair',
  'method_not_available',
  'kyc_required',
  'invalid_institution',
]

/** operationId -> every error code the operation can answer. */
export const OPERATION_ERRORS: Readonly<Record<string, readonly ErrorCode[]>> = {
  // auth/routes.ts, auth/service.ts `exchange`: no Bearer token, but the key is read from the database.
  authenticate: [
    ...COUNTED,
    ...BODY,
    'unauthorized',
    'invalid_signature',
    'signature_reused',
    'service_unavailable',
  ],
  // onchain/deposit-routes.ts: deriving the first address may need the node.
  getOnchainAddress: [...BEARER],
  // accounts/routes.ts: an account the token may not read is 401, as an unknown one.
  getAccount: [...BEARER],
  listWallets: [...BEARER],
  getWallet: [...BEARER, 'forbidden', 'not_found'],
  // lightning/address/routes.ts and service.ts: a username taken by another account is 409 invalid_state.
  setLightningAddress: [...BEARER, ...BODY, 'unsupported_currency_pair', 'invalid_state'],
  getLightningAddress: [...BEARER, 'not_found'],
  deleteLightningAddress: [...BEARER, ...BODY, 'not_found'],
  // rates/service.ts `current`: stale market data is 503 rate_unavailable.
  getRates: [...BEARER, 'rate_unavailable'],
  // transactions/service.ts `create`, quote.ts, kind-for.ts, the flows; reconcile/brake.ts for sends_paused.
  createTransaction: [
    ...BEARER,
    ...BODY,
    ...QUOTE_REFUSALS,
    'duplicate_ext_ref_id',
    'rate_unavailable',
    'sends_paused',
    // limits/gate.ts and src/screening `atQuote`: a volume, velocity or destination limit, or the screening of the destination (contract section 11).
    'limit_exceeded',
  ],
  // transactions/list.ts: the query's own checks answer invalid_request.
  listTransactions: [...BEARER],
  getTransaction: [...BEARER, 'not_found'],
  // transactions/service.ts `confirmLocked`, `settledAnswer`; reconcile/brake.ts.
  // limits/gate.ts and src/screening `atConfirm` for limit_exceeded.
  confirmTransaction: [
    ...BEARER,
    ...BODY,
    'not_found',
    'invalid_state',
    'quote_expired',
    'sends_paused',
    'limit_exceeded',
  ],
  // limits/routes.ts: as getAccount.
  getAccountLimits: [...BEARER],
  // transactions/quote-end.ts `cancelQuote`.
  cancelTransaction: [...BEARER, ...BODY, 'not_found', 'invalid_state', 'quote_expired'],
  // events/stream.ts, live-streams.ts: too many streams of one holder is 429, of the process 503.
  streamTransaction: [...BEARER, 'not_found'],
  // events/registration.ts.
  createWebhook: [...BEARER, ...BODY],
  listWebhooks: [...BEARER],
  updateWebhook: [...BEARER, ...BODY, 'not_found'],
  deleteWebhook: [...BEARER, ...BODY, 'not_found'],
  // events/registration.ts `rotateWebhookSecret` (issue 32).
  rotateWebhookSecret: [...BEARER, ...BODY, 'not_found'],
  // events/delivery-records.ts.
  listWebhookDeliveries: [...BEARER, 'not_found'],
  redeliverWebhookDelivery: [...BEARER, ...BODY, 'not_found', 'invalid_state'],
  // fiat/routes.ts, account-name.ts, kyc.ts `checkBankAccount`.
  listInstitutions: [...BEARER],
  getSourceOfFundsCodes: [...BEARER],
  getAccountName: [...BEARER, 'invalid_institution', 'not_found'],
  // sandbox/fund.ts, sandbox/bitcoin-routes.ts.
  sandboxFund: [...BEARER, ...BODY, 'invalid_amount'],
  sandboxPayInvoice: [...BEARER, ...BODY, 'invalid_payment_request'],
  sandboxCreateInvoice: [...BEARER, ...BODY, 'invalid_amount'],
  sandboxSendOnchain: [...BEARER, ...BODY, 'invalid_address', 'invalid_amount'],
  sandboxMine: [...BEARER, ...BODY],
  // payouts/partner-routes.ts: 404 while the bank rail is not configured, 401 for a bad signature.
  bankPartnerNotification: [...COUNTED, ...BODY, 'unauthorized', 'not_found', 'service_unavailable'],
  bankPartnerCredit: [...COUNTED, ...BODY, 'unauthorized', 'not_found', 'service_unavailable'],
  // http/observability.ts: never counted.
  getHealth: [...ANY],
  getReadiness: [...ANY, 'service_unavailable'],
  getMetrics: [...ANY],
}

/** The codes of an operation answered with `status`, in the table's order; none for an unknown one. */
export function errorCodesOf(operationId: string, status: number): ErrorCode[] {
  return [...new Set(OPERATION_ERRORS[operationId] ?? [])].filter((code) => statusOf(code) === status)
}

/** The error statuses an operation answers, ascending. */
export function errorStatusesOf(operationId: string): number[] {
  return [...new Set((OPERATION_ERRORS[operationId] ?? []).map(statusOf))].sort((a, b) => a - b)
}

/** What each code means, for the descriptions of the answers that carry it. */
export const CODE_MEANINGS: Readonly<Record<ErrorCode, string>> = {
  invalid_request: 'the request does not match the schema or a rule of its fields (see `details`)',
  invalid_json: 'the body is not valid JSON',
  invalid_amount: 'an amount is malformed, has too many decimal places or is over a limit',
  amount_below_minimum: 'the amount is below the method’s minimum',
  invalid_address: 'the destination address is not valid for the network',
  invalid_payment_request: 'the Lightning invoice cannot be paid as given',
  unsupported_method: 'the method, or the pair of methods, is not supported',
  unsupported_currency_pair: 'the currency is not one this account or method has',
  method_not_available: 'the method is not available on this deployment',
  kyc_required: 'the payout needs the beneficiary’s `kyc` block',
  invalid_institution: 'the bank is not one of the listed institutions',
  unauthorized: 'missing, malformed or expired credentials, or an unknown or revoked key',
  invalid_signature: 'the token request’s signature is malformed or does not match',
  signature_reused: 'the token request’s signature was already used',
  forbidden: 'the token may not read that resource',
  not_found: 'no such resource, or it belongs to another account',
  duplicate_ext_ref_id: 'the extRefId was already used for a different request',
  invalid_state: 'the resource is not in a state that allows this',
  quote_expired: 'the quote expired',
  payload_too_large: 'the body is larger than the route’s limit',
  unsupported_media_type: 'the body is not sent as application/json',
  rate_limit_exceeded: 'a rate limit is exceeded: wait `Retry-After` seconds, or until `X-RateLimit-Reset`',
  internal_error: 'an unexpected failure on the service side; it is logged, never detailed',
  service_unavailable: 'the database, a node or the bank cannot answer now; try again shortly',
  rate_unavailable: 'the market rates are unavailable; try again shortly',
  sends_paused:
    'the operator has paused sends on this rail while its reserves are reconciled (docs/reconciliation.md)',
  limit_exceeded:
    'a volume, velocity or destination limit, or the screening of the destination, refuses it: `details` names the limit (`screening` never says which list matched), what is still allowed (`remaining` in `ccy`) and when its window frees up (`resetsAt`, epoch ms; docs/limits.md, docs/screening.md)',
}
