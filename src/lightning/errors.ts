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
}

export type LnSendError = FlowRefusal<LnSendErrorCode>

export const lnSendError = (code: LnSendErrorCode, field: string, issue: string): LnSendError =>
  flowRefusal(LN_SEND_CONTRACT, code, [{ field, issue }])
