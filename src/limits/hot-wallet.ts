import type { ReviewCheck } from '../approvals/review.js'
import type { LimitsConfig } from '../config/limits.js'
import { decimalMinor } from '../config/limits.js'
import type { Metrics } from '../http/observability.js'
import type { RailKind } from '../rails/rail.js'
import { formatMinor } from '../shared/amount.js'
import type { KindRegistry } from '../transactions/kinds.js'
import { lockRailCap, quotedUsage, railHourUse } from './repository.js'

/** A rail's hourly cap, in minor units of the currency the ledger keeps for it. */
export interface RailCap {
  rail: RailKind
  ccy: string
  capMinor: bigint
}

/**
 * HOT_WALLET_CAP_<RAIL>_PER_HOUR in the rail's currency (the one the kind registry's reconciled
 * kind keeps for the rail: BTC for lightning and onchain, USDT for tron, VND for bank).
 */
export function railCaps(config: LimitsConfig, kinds: Pick<KindRegistry, 'railCurrencies'>): RailCap[] {
  return Object.entries(config.hotWalletCaps).map(([rail, text]) => {
    const rc = kinds.railCurrencies.find((r) => r.rail === rail)
    if (!rc)
      throw new Error(`HOT_WALLET_CAP_${rail.toUpperCase()}_PER_HOUR: no kind sends by the ${rail} rail`)
    return {
      rail: rail as RailKind,
      ccy: rc.ccy,
      capMinor: decimalMinor(`HOT_WALLET_CAP_${rail.toUpperCase()}_PER_HOUR`, text, rc.ccy),
    }
  })
}

/**
 * The hot-wallet caps as a review check of the approval gate (src/approvals/review.ts): a send that
 * would take more out of its rail's wallet within the rolling hour than the cap allows waits in
 * `processing` for a second operator instead of going out; their approval pays it, a rejection or
 * the approval's expiry releases its hold. Checked under a lock of the rail, in the confirm's
 * database transaction, after the limits gate has counted the send (limit_usage): what left is the
 * sends on the rail counted in the last hour that still count and are not themselves waiting.
 */
export function hotWalletCheck(
  caps: readonly RailCap[],
  kinds: Pick<KindRegistry, 'railOfSend' | 'declaration'>,
  metrics?: Pick<Metrics, 'counter'>,
): ReviewCheck {
  const byRail = new Map(caps.map((c) => [c.rail, c]))
  const holds = metrics?.counter(
    'svcpay_limit_holds_total',
    'Sends held for an operator by a limit, by reason',
    ['reason'],
  )
  const capOf = (kind: string) => {
    const rail = kinds.railOfSend(kind)
    const d = kinds.declaration(kind)
    return rail && d.pairs.length > 0 ? byRail.get(rail) : undefined
  }
  return {
    name: 'hot_wallet_cap',
    concerns: (kind) => capOf(kind) !== undefined,
    async reasons(q, txn, at) {
      const cap = capOf(txn.kind)
      if (!cap) return []
      await lockRailCap(q, cap.rail)
      const usage = await quotedUsage(q, txn.id)
      const amount = usage?.railMinor ?? txn.destAmountMinor
      const used = await railHourUse(q, cap.rail, at, txn.id)
      if (used.sum + amount <= cap.capMinor) return []
      holds?.inc({ reason: 'hot_wallet_cap' })
      return [
        {
          rule: 'hot_wallet_cap',
          text: `${cap.rail} hot wallet: ${formatMinor(used.sum, cap.ccy)} ${cap.ccy} sent in the last hour + ${formatMinor(amount, cap.ccy)} ${cap.ccy} > ${formatMinor(cap.capMinor, cap.ccy)} ${cap.ccy} per hour`,
        },
      ]
    },
  }
}
