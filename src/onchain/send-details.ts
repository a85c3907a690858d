import type { Txn } from '../transactions/txn.js'

/**
 * An on-chain send's destination details (stored as JSON, shown as destReq.reqDetails): where it
 * pays and the fee rate quoted; from its broadcast on, the rate sent at and its txid; after a fee
 * bump was followed, the txids it replaced, oldest first. A completed send whose transaction is no
 * longer in the best chain carries `leftChain` (why: back to unconfirmed, in conflict with the
 * chain, or unknown to the node) and `leftChainAt` (epoch ms, when first seen so) until it is
 * mined again (send-reorgs.ts).
 */
export interface OnchainSendDetails {
  address: string
  feeRateSatPerVb: number
  feeRateSentSatPerVb?: number
  txid?: string
  replacedTxids?: string[]
  leftChain?: 'unconfirmed' | 'conflicted' | 'unknown'
  leftChainAt?: number
}

/** An on-chain send's destination details: only its own flow writes them. */
export function onchainSendDetails(txn: Pick<Txn, 'destDetails'>): OnchainSendDetails {
  return txn.destDetails as unknown as OnchainSendDetails
}
