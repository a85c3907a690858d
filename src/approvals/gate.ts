import type { KindRegistry } from '../transactions/kinds.js'
import { PASS, type ConfirmGate } from '../transactions/gates.js'
import { approvalReasons, type ApprovalReason } from './policy.js'
import { insertApproval } from './repository.js'
import type { ReviewCheck } from './review.js'
import { expireApprovalIfDue } from './service.js'

/**
 * Four-eyes approval as a confirm gate of the engine (src/transactions/gates.ts): a confirm above
 * its threshold, or one a review check (review.ts) holds, keeps its funds held and waits in
 * `processing` for a second operator until APPROVAL_TTL_S has passed, when the worker hands it back
 * here to expire. It concerns the kinds whose declaration asks for approval even while no
 * APPROVAL_THRESHOLD_<CCY> is set: a send that waited from before its threshold was removed must
 * still expire. Its threshold check reads nothing.
 */
export function approvalGate(
  settings: { approvalThresholds: Readonly<Record<string, bigint>>; approvalTtlS: number },
  kinds: Pick<KindRegistry, 'declaration'>,
  reviews: readonly ReviewCheck[] = [],
): ConfirmGate {
  const byKind = new Map<string, readonly ReviewCheck[]>()
  const reviewsOf = (kind: string) => {
    let mine = byKind.get(kind)
    if (mine) return mine
    mine = reviews.filter((r) => r.concerns(kind))
    const waits = kinds.declaration(kind).transitions.quoted?.includes('processing')
    if (mine.length > 0 && !waits) {
      throw new Error(`review check ${mine[0]!.name} concerns ${kind}, which cannot wait in processing`)
    }
    byKind.set(kind, mine)
    return mine
  }
  return {
    name: 'four-eyes approval',
    concerns: (kind) => kinds.declaration(kind).approval || reviewsOf(kind).length > 0,
    async atConfirm(q, txn, at) {
      const reasons: ApprovalReason[] = approvalReasons(
        kinds.declaration(txn.kind),
        txn,
        settings.approvalThresholds,
      )
      for (const check of reviewsOf(txn.kind)) reasons.push(...(await check.reasons(q, txn, at)))
      if (reasons.length === 0) return PASS
      const until = at + settings.approvalTtlS * 1000
      return {
        verdict: 'hold',
        until,
        record: (q) => insertApproval(q, { txn, reasons, requestedAt: at, expiresAt: until }),
      }
    },
    heldDue: expireApprovalIfDue,
  }
}
