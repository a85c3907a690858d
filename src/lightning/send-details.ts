import type { Txn } from '../transactions/txn.js'

/**
 * A Lightning send's destination details (stored as JSON, shown as destReq.reqDetails): the invoice
 * its quote pays; once completed, the preimage, and `internal` when the invoice was a receive of
 * ours settled in the books.
 */
export interface LnSendDetails {
  paymentRequest: string
  paymentHash: string
  preimage?: string | null
  internal?: boolean
}

/** A Lightning send's destination details: only its own flow writes them. */
export function lnSendDetails(txn: Pick<Txn, 'destDetails'>): LnSendDetails {
  return txn.destDetails as unknown as LnSendDetails
}
