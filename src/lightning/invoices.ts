import type { Queryable } from '../db/db.js'
import { txnByRailRef } from '../transactions/reads.js'
import type { Txn } from '../transactions/txn.js'

export const MSAT_PER_SAT = 1_000n

/** Canonical invoice text: no `lightning:` scheme, lower case (BOLT11 is case-insensitive). */
export const canonicalInvoice = (text: string) =>
  text
    .trim()
    .replace(/^lightning:/i, '')
    .toLowerCase()

/** Our own receive waiting on this payment hash, if the invoice is one this service issued. */
export function receiveFor(q: Queryable, paymentHash: string, lock: boolean): Promise<Txn | undefined> {
  return txnByRailRef(q, 'ln_receive', paymentHash, { lock })
}

/** Why an invoice of ours cannot be paid now, or undefined when it can. */
export function internalInvoiceIssue(
  receive: Txn,
  paymentRequest: string,
  now: number,
): { msg: string; issue: string } | undefined {
  if (receive.srcDetails.paymentRequest !== paymentRequest) {
    return {
      msg: 'invalid_payment_request',
      issue: 'does not match the invoice this service issued for that payment hash',
    }
  }
  if (receive.state === 'completed')
    return { msg: 'invoice_already_paid', issue: 'the invoice is already paid' }
  if (receive.state !== 'srccreated' || receive.expiresAtMs <= now) {
    return { msg: 'invoice_expired', issue: 'the invoice has expired' }
  }
  return undefined
}
