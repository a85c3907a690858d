import type { KindRegistry } from '../transactions/kinds.js'
import { PASS, type ConfirmGate } from '../transactions/gates.js'
import { approvalReasons } from './policy.js'
import { insertApproval } from './repository.js'
import { expireApprovalIfDue } from './service.js'

/**
 * Four-eyes approval as a confirm gate of the engine (src/transactions/gates.ts): a confirm above
 * its threshold holds the funds and waits in `processing` for a second operator until
 * APPROVAL_TTL_S has passed, when the worker hands it back here to expire. It concerns the kinds
 * whose declaration asks for approval even while no APPROVAL_THRESHOLD_<CCY> is set: a send that
 * waited from before its threshold was removed must still expire. Its check reads nothing.
 */
export function approvalGate(
  settings: { approvalThresholds: Readonly<Record<string, bigint>>; approvalTtlS: number },
  kinds: Pick<KindRegistry, 'declaration'>,
): ConfirmGate {
  return {
    name: 'four-eyes approval',
    concerns: (kind) => kinds.declaration(kind).approval,
    async atConfirm(_q, txn, at) {
      const reasons = approvalReasons(kinds.declaration(txn.kind), txn, settings.approvalThresholds)
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
