import type { ErrorCode } from '../shared/errors.js'
import { flowRefusal, type FlowRefusal } from '../transactions/errors.js'

/**
 * Why the quote of a Lightning send refuses its invoice or its amount. The quote returns an
 * `LnSendError` instead of throwing; the service answers it with the contract's error
 * (`refusalApiError`, src/transactions/errors.ts), the one place that knows about HTTP.
 */
export type LnSendErrorCode =
  /** No `paymentRequest`, or only blanks. */
  | 'invoice_missing'
  /** Upper and lower case mixed: not bech32. */
  | 'invoice_mixed_case'
  /** Not a BOLT11 invoice we can decode. */
  | 'invoice_unreadable'
  /** An invoice of another Bitcoin network than the service's. */
  | 'invoice_wrong_network'
  /** Expired by the time of the quote. */
  | 'invoice_expired'
  /** An amount that is not a whole number of satoshis. */
  | 'invoice_fractional_sat'
  /** `amtRequested` differs from the invoice's own amount. */
  | 'amount_not_invoice_amount'
  /** No amount in the invoice and none requested. */
  | 'amount_missing'
  /** `deductNetworkFeesFromDest` asked of an invoice whose amount is fixed. */
  | 'deduct_from_fixed_amount'
  /** An invoice of this service that cannot be paid now (not the one issued, paid, or expired). */
  | 'own_invoice_unpayable'
  /** The amount for an invoice of this service is not the amount it was issued for. */
  | 'own_invoice_amount'
  /** More than one of `paymentRequest`, `lnAddress` and `lnurl`. */
  | 'destination_ambiguous'
  /** `lnAddress` is not a LUD-16 `user@domain`. */
  | 'ln_address_invalid'
  /** `lnurl` is neither a bech32 `lnurl1…` (LUD-01) nor an `lnurlp://` URL (LUD-17) of an https service. */
  | 'lnurl_invalid'
  /** `comment` is not text, too long, or not accepted by the payee (LUD-12 `commentAllowed`). */
  | 'comment_not_accepted'
  /** The payee's service names a loopback, private, reserved or metadata address. */
  | 'lnurl_private_address'
  /** The payee's service could not be reached in time (name, connection, TLS or time-out). */
  | 'lnurl_unreachable'
  /** The payee's service answered, but not as LUD-06 says (status, type, size, JSON, fields). */
  | 'lnurl_invalid_response'
  /** The payee's service answered `{ status: "ERROR", reason }`. */
  | 'lnurl_error'
  /** The amount is outside the payee's `minSendable`..`maxSendable`. */
  | 'lnurl_amount_out_of_range'
  /** The invoice the payee returned is not for the amount asked (LUD-06, step 6). */
  | 'lnurl_amount_mismatch'
  /** The invoice's description hash is not sha256 of the payee's metadata (LUD-06, step 6). */
  | 'lnurl_description_hash_mismatch'

/** The contract's error for each code. */
const LN_SEND_CONTRACT: Record<LnSendErrorCode, ErrorCode> = {
  invoice_missing: 'invalid_payment_request',
  invoice_mixed_case: 'invalid_payment_request',
  invoice_unreadable: 'invalid_payment_request',
  invoice_wrong_network: 'invalid_payment_request',
  invoice_expired: 'invalid_payment_request',
  invoice_fractional_sat: 'invalid_payment_request',
  amount_not_invoice_amount: 'invalid_payment_request',
  amount_missing: 'invalid_payment_request',
  deduct_from_fixed_amount: 'invalid_request',
  own_invoice_unpayable: 'invalid_payment_request',
  own_invoice_amount: 'invalid_payment_request',
  destination_ambiguous: 'invalid_request',
  ln_address_invalid: 'invalid_payment_request',
  lnurl_invalid: 'invalid_payment_request',
  comment_not_accepted: 'invalid_request',
  lnurl_private_address: 'invalid_payment_request',
  lnurl_unreachable: 'service_unavailable',
  lnurl_invalid_response: 'invalid_payment_request',
  lnurl_error: 'invalid_payment_request',
  lnurl_amount_out_of_range: 'invalid_amount',
  lnurl_amount_mismatch: 'invalid_payment_request',
  lnurl_description_hash_mismatch: 'invalid_payment_request',
}

export type LnSendError = FlowRefusal<LnSendErrorCode>

export const lnSendError = (code: LnSendErrorCode, field: string, issue: string): LnSendError =>
  flowRefusal(LN_SEND_CONTRACT, code, [{ field, issue }])
