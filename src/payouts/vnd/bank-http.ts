/**
 * The real VND rail: bank payouts through a payout partner over HTTP. There is no public standard
 * for this, so we define the partner API ourselves (docs/payouts.md, "Bank payout partner API") and
 * a partner, or a small bridge in front of one, implements it:
 *
 * - `POST /v1/payouts` with `Idempotency-Key: <requestId>` creates a payout; a repeated key answers
 *   409 with the payout that key created, so a retry never pays twice.
 * - `GET /v1/payouts/{id}` reads one.
 * - `GET /v1/balance` (optional) tells the float the partner holds for us.
 * - `GET /v1/payouts?since=` (for reconciliation) lists the payouts made since a time, a page at a time.
 * - `GET /v1/accounts/{bankBin}/{accountNumber}` asks the beneficiary's bank whose account it is
 *   (the NAPAS account inquiry) before a payout that names the name it expects.
 * - Optionally the partner notifies us of changes, signed with HMAC-SHA256 under a shared secret.
 * - Incoming transfers to our account (credits): the partner notifies each one, signed as above, and
 *   `GET /v1/credits?since=` lists them, so that one missed notification is found by a poll.
 * - With a signing secret, every request we send is signed the same way, over a timestamp, the
 *   method, the path and the body (`signRequest`), so that the partner can refuse a forged or
 *   replayed request even from someone who holds the API key.
 * - A payout the beneficiary's bank sends back after `completed` reads `returned` (or `reversed`):
 *   reported as the state `reversed`, and the payout flow gives the money back.
 *
 * The request carries the beneficiary's personal data (name, account number). It goes to the
 * partner and nowhere else: no failure message built here quotes it, and nothing here logs.
 *
 * The rail is a table of functions over one set of deps (bank-http-deps.ts): the request, its
 * signature and failure codes (bank-http-request.ts), payouts and notifications
 * (bank-http-payouts.ts), incoming credits (bank-http-credits.ts), the balance, the payout history
 * and the health check (bank-http-holdings.ts), and the account inquiry (bank-http-accounts.ts).
 */
import type { BankPayoutRail, RailCheckReport } from '../../rails/rail.js'
import { bankHttpDeps, type BankHttpConfig } from './bank-http-deps.js'
import { bankPayments, bankReserves, checkBankHttp } from './bank-http-holdings.js'
import { getPayout, submitPayout, verifyNotification } from './bank-http-payouts.js'
import {
  creditPayments,
  listCredits,
  verifyCredit,
  type CreditNotice,
  type CreditPage,
} from './bank-http-credits.js'
import { accountName } from './bank-http-accounts.js'

export { BANK_TIMEOUT_MS_DEFAULT, type BankHttpConfig } from './bank-http-deps.js'
export { SIGNATURE_HEADER, SIGNATURE_MAX_AGE_MS, signRequest, TIMESTAMP_HEADER } from './bank-http-request.js'

export interface BankHttpRail extends BankPayoutRail {
  /** Reachability, whether the partner accepts our key and signature, and its balance if it shows one. */
  check(): Promise<RailCheckReport>
  /**
   * Checks a partner notification: `signature` is the `X-Partner-Signature` header, the lowercase
   * hex HMAC-SHA256 of the exact body bytes. Returns the payout it concerns, or null when the
   * signature or body is wrong. A notification is only a hint: read the payout with `getPayout`,
   * so a replayed or reordered notification can never move a payout to a wrong state.
   */
  verifyNotification(rawBody: string | Uint8Array, signature: string | undefined): { bankRef: string } | null
  /**
   * Checks a credit notification (same signature as `verifyNotification`). Unlike a payout
   * notification it carries the money fact itself: it is believed because it is signed, and a
   * replayed one names the same credit id, which the credit's recorder takes once.
   */
  verifyCredit(rawBody: string | Uint8Array, signature: string | undefined): CreditNotice
  /** One page of the partner's statement of credits booked at or after `sinceMs`, oldest first. */
  listCredits(sinceMs: number, cursor: string | null): Promise<CreditPage>
}

export function createBankHttpRail(config: BankHttpConfig): BankHttpRail {
  const deps = bankHttpDeps(config)
  return {
    name: 'bank-http',
    submitPayout: (input) => submitPayout(deps, input),
    getPayout: (bankRef) => getPayout(deps, bankRef),
    check: () => checkBankHttp(deps),
    reserves: () => bankReserves(deps),
    // Payouts that left, and the statement's credits that came in (docs/reconciliation.md).
    payments: async (sinceMs) => [
      ...(await bankPayments(deps, sinceMs)),
      ...(await creditPayments(deps, sinceMs)),
    ],
    verifyNotification: (rawBody, signature) => verifyNotification(deps, rawBody, signature),
    verifyCredit: (rawBody, signature) => verifyCredit(deps, rawBody, signature),
    listCredits: (sinceMs, cursor) => listCredits(deps, sinceMs, cursor),
    accountName: (input) => accountName(deps, input),
  }
}
