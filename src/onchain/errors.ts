import type { ErrorCode } from '../shared/errors.js'
import { flowRefusal, type FlowRefusal } from '../transactions/errors.js'

/**
 * Why the quote of an on-chain send refuses its address or its amount. The quote returns an
 * `OnchainSendError` instead of throwing; the service answers it with the contract's error
 * (`refusalApiError`, src/transactions/errors.ts), the one place that knows about HTTP.
 */
export type OnchainSendErrorCode =
  /** No address, or only blanks. */
  | 'address_missing'
  /** Not an address we can send to: malformed, a bad checksum, or another network's. */
  | 'address_invalid'
  /** Less than the smallest on-chain send, requested or left after fees (dust). */
  | 'amount_below_minimum'

/** The contract's error for each code. */
const ONCHAIN_SEND_CONTRACT: Record<OnchainSendErrorCode, ErrorCode> = {
  address_missing: 'invalid_address',
  address_invalid: 'invalid_address',
  amount_below_minimum: 'amount_below_minimum',
}

export type OnchainSendError = FlowRefusal<OnchainSendErrorCode>

export const onchainSendError = (
  code: OnchainSendErrorCode,
  field: string,
  issue: string,
): OnchainSendError => flowRefusal(ONCHAIN_SEND_CONTRACT, code, [{ field, issue }])
