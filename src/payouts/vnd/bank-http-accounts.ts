/**
 * The account inquiry on the bank rail (docs/payouts.md, "Account inquiry"): the partner asks the
 * beneficiary's bank over NAPAS whose account a number is, and answers the holder's name as that
 * bank gives it. The name is personal data: it is handed to the caller and nowhere else (no
 * failure message built here quotes it or the account number).
 */
import { RailFailure, type BankAccountInquiryRail, type BankAccountName } from '../../rails/rail.js'
import type { BankHttpDeps } from './bank-http-deps.js'
import { partnerErrorCode } from './bank-http-payouts.js'

type InquiryInput = Parameters<BankAccountInquiryRail['accountName']>[0]

const BANK_BIN = /^\d{6}$/
const ACCOUNT_NUMBER = /^\d{6,19}$/
/** A holder's name as a bank gives it: printable, no control characters, at most 140 characters. */
const NAME_CHARS_MAX = 140
const CONTROL = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u

/** `BankAccountInquiryRail.accountName` over `GET /v1/accounts/{bankBin}/{accountNumber}`. */
export async function accountName(deps: BankHttpDeps, input: InquiryInput): Promise<BankAccountName> {
  // Both go into the path; the routes and the payout check have validated them already.
  if (!BANK_BIN.test(input.institutionCode) || !ACCOUNT_NUMBER.test(input.bankAcctNum))
    throw new RailFailure('invalid_account', 'not a NAPAS BIN and account number', false)
  const path = `/v1/accounts/${input.institutionCode}/${input.bankAcctNum}`
  const { status, json } = await deps.request('GET', path)
  // The label names the operation, never the path: the path holds the account number.
  const what = 'GET /v1/accounts/{bankBin}/{accountNumber}'
  if (status === 404) {
    // Only the partner's own code means "no such account"; any other 404 (a partner without this
    // endpoint) is not an answer about the account, and must not refuse a payout.
    if (partnerErrorCode(json) === 'account_not_found') return { found: false }
    throw new RailFailure('bank_inquiry_unsupported', `${what} answered 404 without account_not_found`, true)
  }
  if (status !== 200) throw new RailFailure(`bank_http_${status}`, `${what} answered HTTP ${status}`, true)
  const name = json?.name
  const sameAccount = json?.bankBin === input.institutionCode && json?.accountNumber === input.bankAcctNum
  if (!sameAccount || typeof name !== 'string' || !isHolderName(name))
    throw new RailFailure(
      'bank_bad_response',
      `${what} answered without a holder's name for that account`,
      true,
    )
  return { found: true, name }
}

function isHolderName(name: string): boolean {
  const trimmed = name.trim()
  return trimmed.length > 0 && [...trimmed].length <= NAME_CHARS_MAX && !CONTROL.test(trimmed)
}
