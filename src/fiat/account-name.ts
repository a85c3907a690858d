/**
 * The beneficiary name inquiry behind `GET /api/v2/fiat/account-name`: the account checked as a
 * payout's would be, then the bank asked whose it is (NAPAS account inquiry). The answer is the
 * name as the bank gives it, masked where the bank masks it. Personal data: returned to the caller,
 * never stored or logged.
 */
import { nodeCall } from '../rails/node-call.js'
import type { BankAccountInquiryRail } from '../rails/rail.js'
import { ApiError } from '../shared/errors.js'
import { checkBankAccount } from './kyc.js'

export interface AccountName {
  institutionCode: string
  bankAcctNum: string
  name: string
}

/**
 * Answers the holder's name, or throws the contract's error: 400 for a malformed account or an
 * unknown institution (fields `query.*`), 404 `not_found` when the bank has no such account, 503
 * `service_unavailable` when the bank cannot answer now. `beforeAsking` runs once the query is
 * valid and before the bank is asked (the route counts the inquiry there); what it throws is
 * answered instead, and the bank is not asked.
 */
export async function lookUpAccountName(
  bank: BankAccountInquiryRail,
  query: { institutionCode: string; bankAcctNum: string },
  beforeAsking: () => Promise<void>,
): Promise<AccountName> {
  const account = checkBankAccount(query.bankAcctNum, query.institutionCode, 'query')
  if (!account.ok) {
    const text = account.details.map((d) => `${d.field}: ${d.issue}`).join('; ')
    throw new ApiError(account.code, text, account.details)
  }
  await beforeAsking()
  const answer = await nodeCall('bank', () => bank.accountName(account.value))
  if (!answer.found) throw new ApiError('not_found', 'The bank has no such account')
  return { ...account.value, name: answer.name }
}
