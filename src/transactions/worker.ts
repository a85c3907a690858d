import type { Db } from '../db/db.js'
import type { TransactionsService } from './service.js'
import { claimDue, getTxn, scheduleCheck } from './repository.js'
import type { RailOpsConfig } from '../config/rail-ops.js'
import { recordAttempts, withAttemptLog, type AttemptLog } from '../rails/attempts.js'

/** How long a claimed transaction is left to one worker before another may look at it. */
export const CLAIM_LEASE_MS = 30_000
const BATCH_MAX = 50

/**
 * One pass of the transaction worker: claim transactions whose `next_check_at` is due (several
 * workers skip each other's rows), push each lease forward, then expire quotes or let the flow
 * move them on. Returns true when the batch was full (more work is likely waiting).
 */
export async function runDueTransactions(deps: {
  db: Db
  transactions: TransactionsService
  now?: () => number
  log: { error(obj: object, msg: string): void }
  /**
   * With it, what the rails answered is kept per transaction and a retryable failure puts the next
   * look off by the rail's backoff (src/rails/attempts.ts). The service always passes it.
   */
  railOps?: RailOpsConfig
}): Promise<boolean> {
  const now = (deps.now ?? Date.now)()
  const ids = await claimDue(deps.db, now, CLAIM_LEASE_MS, BATCH_MAX)
  for (const id of ids) {
    try {
      const txn = await getTxn(deps.db, id)
      if (!txn) continue
      if (txn.state === 'quoted') {
        await deps.transactions.expireQuote(id)
        continue
      }
      if (txn.state === 'processing') {
        // Held by a confirm gate (a second operator's approval): only its deadline is the
        // worker's business, and the gate's.
        await deps.transactions.heldDue(id, (deps.now ?? Date.now)())
        continue
      }
      const flow = deps.transactions.flows.get(txn.kind)
      if (!flow?.advance) continue
      if (!deps.railOps) {
        await flow.advance(txn)
        continue
      }
      const log: AttemptLog = { calls: [] }
      try {
        await withAttemptLog(log, () => flow.advance!(txn))
      } finally {
        const retryAt = await recordAttempts(deps.db, txn, log, deps.railOps, (deps.now ?? Date.now)())
        // A retryable failure puts the next look off by the rail's backoff.
        if (retryAt !== undefined)
          await scheduleCheck(deps.db, txn.id, retryAt, 'latest', { state: txn.state, scheduled: true })
      }
    } catch (err) {
      // The lease brings it back later; one bad transaction must not stop the others.
      deps.log.error({ txnId: id, error: (err as Error).message }, 'advancing a transaction failed')
    }
  }
  return ids.length === BATCH_MAX
}
