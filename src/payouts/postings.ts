import { systemAccountId, type Posting, type SystemPurpose } from '../ledger/ledger.js'
import { assert } from '../shared/assert.js'
import { walletOutPostings } from '../transactions/money.js'
import type { Txn } from '../transactions/txn.js'

/**
 * The entry of a completed payout. Exactly the destination amount leaves by the network's account,
 * because that is what the network moves: a TRON payout's network fee is burned in TRX, so the USDT
 * the customer paid for it stays in the hot wallet and goes to revenue with the service fee, and
 * reconciliation finds the hot wallet's USDT equal to the books (docs/reconciliation.md).
 */
export function payoutPostings(payout: Txn, walletId: string, system: SystemPurpose): Posting[] {
  const postings = walletOutPostings(payout, walletId, { system })
  if (payout.srcCcy !== payout.destCcy) return postings
  const out = systemAccountId(system, payout.destCcy)
  const leaving = postings.find((p) => p.accountId === out)
  const fees = postings.find((p) => p.accountId === systemAccountId('fees', payout.srcCcy))
  assert(leaving !== undefined && fees !== undefined, 'a payout posts to its network and to revenue')
  const kept = leaving.amount - payout.destAmountMinor
  assert(kept >= 0n, 'a payout never sends more than the wallet paid for it')
  return postings.map((p) =>
    p === leaving
      ? { ...p, amount: payout.destAmountMinor }
      : p === fees
        ? { ...p, amount: p.amount + kept }
        : p,
  )
}

/**
 * The entry of a returned payout: its completion entry with every posting's sign turned, so the
 * wallet gets back its whole debit and the network, FX and fee accounts give back what they got.
 */
export function returnPostings(payout: Txn, walletId: string, system: SystemPurpose): Posting[] {
  return payoutPostings(payout, walletId, system).map((posting) => ({
    ...posting,
    amount: -posting.amount,
  }))
}
