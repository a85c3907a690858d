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
export type CreditSink = (credit: BankCredit) => Promise<void> // idempotent on bankRef; throws if it could not record
