import type { ErrorCode, ErrorDetail } from '../shared/errors.js'
import { flowRefusal, type FlowRefusal } from '../transactions/errors.js'
import type { CheckFailure } from '../fiat/kyc.js'

/**
 * Why the quote of a payout refuses its destination. The quote returns a `PayoutError` instead of
 * throwing; the service answers it with the contract's error (`refusalApiError`,
 * src/transactions/errors.ts), the one place that knows about HTTP.
 */
export type PayoutErrorCode =
  /** A TRON payout without an address. */
  | 'tron_address_missing'
  /** A TRON payout to something that is not a TRON address. */
  | 'tron_address_invalid'
  /** An Ethereum payout without an address. */
  | 'eth_address_missing'
  /** An Ethereum payout to something that is not an Ethereum address (or fails its EIP-55 checksum). */
  | 'eth_address_invalid'
  /** A bank account number or institution code missing or malformed. */
  | 'bank_account_invalid'
  /** A well-formed bank account at an institution we cannot pay. */
  | 'institution_unknown'
  /** A `reqDetails.expectedName` that is blank, too long or holds control characters. */
  | 'expected_name_invalid'
  /** The beneficiary's KYC missing, or some of its required fields. */
  | 'kyc_missing'
  /** The beneficiary's KYC malformed. */
  | 'kyc_invalid'
  /** The source of funds missing, or some of its required fields. */
  | 'source_of_funds_missing'
  /** The source of funds malformed. */
  | 'source_of_funds_invalid'

/** The contract's error for each code. */
const PAYOUT_CONTRACT: Record<PayoutErrorCode, ErrorCode> = {
  tron_address_missing: 'invalid_address',
  tron_address_invalid: 'invalid_address',
  eth_address_missing: 'invalid_address',
  eth_address_invalid: 'invalid_address',
  bank_account_invalid: 'invalid_request',
  institution_unknown: 'invalid_institution',
  expected_name_invalid: 'invalid_request',
  kyc_missing: 'kyc_required',
  kyc_invalid: 'invalid_request',
  source_of_funds_missing: 'kyc_required',
  source_of_funds_invalid: 'invalid_request',
}

export type PayoutError = FlowRefusal<PayoutErrorCode>

export const payoutError = (code: PayoutErrorCode, details: ErrorDetail[]): PayoutError =>
  flowRefusal(PAYOUT_CONTRACT, code, details)

/** The fiat checks (src/fiat) name the contract's code; a payout refusal names what was wrong. */
export function bankAccountError(failure: CheckFailure): PayoutError {
  const code = failure.code === 'invalid_institution' ? 'institution_unknown' : 'bank_account_invalid'
  return payoutError(code, failure.details)
}

export function kycError(failure: CheckFailure): PayoutError {
  return payoutError(failure.code === 'kyc_required' ? 'kyc_missing' : 'kyc_invalid', failure.details)
}

export function sourceOfFundsError(failure: Pick<CheckFailure, 'code' | 'details'>): PayoutError {
  const code = failure.code === 'kyc_required' ? 'source_of_funds_missing' : 'source_of_funds_invalid'
  return payoutError(code, failure.details)
}
