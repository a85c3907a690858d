/**
 * The beneficiary name check a VND payout goes through before it is sent, when the sender gave
 * `reqDetails.expectedName` (docs/payouts.md, "Beneficiary name check"). It runs in the worker's
 * submission path, outside any database transaction while the bank is asked. The name the bank
 * gives is compared and dropped: it is never stored, logged or put in a message.
 */
import { nameMatches } from '../fiat/beneficiary-name.js'
import { setDestDetails } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import type { VndPayoutDeps } from './deps.js'

/** The `msg` of a payout refused by the check. */
export const NAME_CHECK_REASONS = {
  mismatch: 'beneficiary_name_mismatch',
  notFound: 'beneficiary_account_not_found',
} as const

/** What `destReq.reqDetails.nameCheck` holds once the bank's name matched. */
export const NAME_CHECK_MATCHED = 'matched'

/**
 * Asks the bank whose account the payout goes to and compares the holder's name with
 * `expectedName`. Answers the refusal of a payout that must not be sent, or undefined when it may
 * go (no expected name, or a match). A bank that cannot answer raises its retryable `RailFailure`,
 * so the payout is tried again later and never sent unchecked.
 *
 * A match is recorded on the transaction (`nameCheck: 'matched'`) before the payout is sent, and a
 * payout with that mark is not asked about again: once a submission may have reached the partner
 * (its answer lost), a second inquiry answering differently must not release funds the partner
 * may already be paying out.
 */
export async function checkBeneficiaryName(
  deps: VndPayoutDeps,
  txn: Txn,
  account: { bankAcctNum: string; institutionCode: string },
): Promise<{ rejected: string } | undefined> {
  const expected = txn.destDetails.expectedName
  if (typeof expected !== 'string' || txn.destDetails.nameCheck === NAME_CHECK_MATCHED) return undefined
  const answer = await deps.bank.accountName(account)
  if (!answer.found) return { rejected: NAME_CHECK_REASONS.notFound }
  if (!nameMatches(expected, answer.name)) return { rejected: NAME_CHECK_REASONS.mismatch }
  let recorded = false
  await deps.transactions().apply(txn.id, async (q, locked) => {
    if (locked.state !== 'srccreated') return
    await setDestDetails(q, txn.id, { ...locked.destDetails, nameCheck: NAME_CHECK_MATCHED })
    recorded = true
  })
  // Moved on meanwhile: this attempt sends nothing, and its refusal changes nothing either (the
  // lifecycle ends a payout only from the state it was read in).
  return recorded ? undefined : { rejected: NAME_CHECK_REASONS.mismatch }
}
