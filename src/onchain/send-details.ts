import type { Txn } from '../transactions/txn.js'

/**
 * An on-chain send's destination details (stored as JSON, shown as destReq.reqDetails): where it
 * pays and the fee rate quoted; from its broadcast on, the rate sent at and its txid; after a fee
 * bump was followed, the txids it replaced, oldest first.
 */
export interface OnchainSendDetails {
  address: string
  feeRateSatPerVb: number
  feeRateSentSatPerVb?: number
  txid?: string
  replacedTxids?: string[]
}

/** An on-chain send's destination details: only its own flow writes them. */
export function onchainSendDetails(txn: Pick<Txn, 'destDetails'>): OnchainSendDetails {
  return txn.destDetails as unknown as OnchainSendDetails
}
