/**
 * An incoming bank transfer (a credit to our collecting account) as the bank partner reports it,
 * and the one function every credit is handed to. The bank rail (src/payouts/vnd/bank-http-credits.ts,
 * the partner's signed notification and the statement poll in src/payouts/vnd/bank-credit-poll.ts)
 * produces them; the VND pay-in (src/payins) records and matches them. They stand here, with the
 * rail, because the pay-in already builds on the bank rail and the rail must not reach up into it.
 */
export interface BankCredit {
  /** The partner's id of the incoming transfer, unique and stable: the dedupe key. [A-Za-z0-9._:-]{1,128} */
  bankRef: string
  /** Whole đồng, > 0. */
  amountMinor: bigint
  /** The transfer's description as the bank shows it (free text, may be mangled), at most 500 chars. */
  memo: string
  /** When the bank booked it, epoch ms (the partner's clock). */
  bookedAtMs: number
  /** The payer's bank BIN and account if the partner gives them (personal data: never logged). */
  payer?: { bankBin?: string; accountNumber?: string; name?: string }
}
/**
 * The largest credit taken, in whole đồng (just under 10^15, far above any real transfer): a bigger
 * amount is a fault at the partner, left out rather than allowed to overflow the ledger's sums.
 */
export const BANK_CREDIT_AMOUNT_MAX = 999_999_999_999_999n

export type CreditSink = (credit: BankCredit) => Promise<void> // idempotent on bankRef; throws if it could not record
