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
export interface ApprovalReason {
  side: 'source' | 'destination'
  ccy: string
  amount: string
  threshold: string
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
): ApprovalReason[] {
  if (!kind.approval) return []
  const reasons: ApprovalReason[] = []
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
