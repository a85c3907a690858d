/**
 * Which confirmed transactions wait for a second operator: pure, no I/O. A payout (TRON USDT, VND
 * to a bank) or an on-chain send waits when either of its sides is above the threshold configured
 * for that side's currency (APPROVAL_THRESHOLD_<CCY>). Both sides are looked at because a VND payout
 * may be funded from BTC or USDT: a threshold in VND catches it by what leaves, one in BTC by what it
 * costs the wallet. A currency without a threshold never makes a transaction wait.
 */
import { formatMinor } from '../shared/amount.js'
import type { KindDeclaration } from '../transactions/kinds.js'
import type { TxnKind } from '../transactions/state-machine.js'

/** One threshold a transaction went over, in exact decimal text. */
export interface ThresholdReason {
  side: 'source' | 'destination'
  ccy: string
  amount: string
  threshold: string
}

/**
 * Why another module held a send for an operator (a hot-wallet cap, a screening hit: review.ts),
 * in words for operators only; the customer sees `processing` and nothing of this.
 */
export interface ReviewReason {
  /** The rule's stable name (`hot_wallet_cap`, `screening`, ...). */
  rule: string
  text: string
}

export type ApprovalReason = ThresholdReason | ReviewReason

/** An approval reason in words, amounts written by `decimal` (the console's locale, or as is). */
export function reasonText(r: ApprovalReason, decimal: (text: string) => string = (t) => t): string {
  if ('rule' in r) return r.text
  return `${decimal(r.amount)} ${r.ccy} > ${decimal(r.threshold)} ${r.ccy}`
}

interface Sides {
  kind: TxnKind
  srcCcy: string
  srcAmountMinor: bigint
  destCcy: string
  destAmountMinor: bigint
}

/**
 * The thresholds `txn` is above; empty when it needs no approval. Whether its kind can need one at
 * all (a send or payout that moves money out to someone outside the service) is its declaration's.
 */
export function approvalReasons(
  kind: Pick<KindDeclaration, 'approval'>,
  txn: Sides,
  thresholds: Readonly<Record<string, bigint>>,
): ThresholdReason[] {
  if (!kind.approval) return []
  const reasons: ThresholdReason[] = []
  const sides = [
    ['source', txn.srcCcy, txn.srcAmountMinor],
    ['destination', txn.destCcy, txn.destAmountMinor],
  ] as const
  for (const [side, ccy, amount] of sides) {
    const threshold = thresholds[ccy]
    if (threshold === undefined || amount <= threshold) continue
    // One currency on both sides (a TRON payout, a VND payout from VND): one reason is enough.
    if (reasons.some((r) => r.ccy === ccy)) continue
    reasons.push({ side, ccy, amount: formatMinor(amount, ccy), threshold: formatMinor(threshold, ccy) })
  }
  return reasons
}
