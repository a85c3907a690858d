import type { Txn } from '../transactions/txn.js'

/**
 * A Lightning send's destination details (stored as JSON, shown as destReq.reqDetails): the invoice
 * its quote pays, and the address or LNURL it came from; once completed, the preimage, and `internal` when the invoice was a receive of
 * ours settled in the books.
 */
export interface LnSendDetails {
  paymentRequest: string
  paymentHash: string
  /** The Lightning Address (LUD-16) or LNURL (LUD-01/17) the invoice was fetched from, if any. */
  lnAddress?: string
  lnurl?: string
  /** The LUD-12 comment passed to the payee. */
  comment?: string
  /**
   * A send to an address of this service: its username. Until the confirm asks that address for
   * its invoice, `paymentRequest` and `paymentHash` are empty (see `isLocalPending`).
   */
  localUsername?: string
  preimage?: string | null
  internal?: boolean
}

/** A send to an address of ours whose invoice has not been asked for yet. */
export function isLocalPending(txn: Pick<Txn, 'destDetails'>): boolean {
  const d = lnSendDetails(txn)
  return typeof d.localUsername === 'string' && !d.paymentHash
}

/** The send with the invoice its payee (an address of ours) issued at confirm. */
export function withLocalInvoice<T extends Pick<Txn, 'destDetails'>>(
  txn: T,
  invoice: { paymentRequest: string; paymentHash: string },
): T {
  return { ...txn, destDetails: { ...txn.destDetails, ...invoice } }
}

/** A Lightning send's destination details: only its own flow writes them. */
export function lnSendDetails(txn: Pick<Txn, 'destDetails'>): LnSendDetails {
  return txn.destDetails as unknown as LnSendDetails
}
