import type { FeeRule } from '../config/config.js'
import { systemAccountId, type Posting } from '../ledger/ledger.js'
import { ONE } from '../rates/fx.js'
import { receiveIntoWalletPostings } from '../transactions/receive-fx.js'
import { feeFor } from '../transactions/money.js'

/** The receive fee on what actually arrived; never more than the amount itself. */
export function receiveFee(rule: FeeRule, receivedSats: bigint): bigint {
  const fee = feeFor(rule, receivedSats)
  return fee > receivedSats ? receivedSats : fee
}

/** Postings of money arriving from a network: the network account pays, the wallet and the fee account receive. */
export function receivePostings(
  system: 'lightning' | 'onchain',
  walletId: string,
  receivedSats: bigint,
  feeSats: bigint,
): Posting[] {
  return receiveIntoWalletPostings({
    railAccount: systemAccountId(system, 'BTC'),
    walletId,
    srcCcy: 'BTC',
    destCcy: 'BTC',
    receivedMinor: receivedSats,
    feeMinor: feeSats,
    fxRate: ONE,
  }).postings
}
