/**
 * Four-eyes approval (issue 19). A payout or on-chain send above its threshold waits in
 * `processing` with its funds held (policy.ts; the engine's confirm gate, gate.ts). Then:
 *
 * - review: the first operator with `approvals.decide` looks at it and says so; it stays waiting.
 * - approve: a different operator (not the reviewer, not the operator who made it) lets it go on;
 *   refused with 503 `sends_paused`, nothing recorded, while the brake holds the send's rail.
 *   The flow's own confirm runs from `processing`, exactly as it would have at the customer's
 *   confirm, so the send continues on its normal path (srccreated, the worker hands it to the rail).
 * - reject: any operator with `approvals.decide` refuses it: the hold is voided and the transaction
 *   ends `rejected` (msg `approval_rejected`), with its event.
 * - expiry: unanswered after APPROVAL_TTL_S, the worker does what a rejection does (msg
 *   `approval_expired`). The deadline is the transaction's next_check_at, so it survives restarts.
 *
 * Every step locks the transaction's row, then the approval's, and changes the approval with a
 * conditional update: two decisions at once are one decision and a 409. On an admin route each runs
 * inside the request's audited database transaction (src/operators/guard.ts), so the change and its
 * audit row commit together.
 */
import type { Db, Queryable } from '../db/db.js'
import { asTxnId } from '../shared/ids.js'
import type { Actor } from '../operators/service.js'
import type { TransactionsService, Mover } from '../transactions/service.js'
import { scheduleCheck } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import { voidHolds } from '../ledger/ledger.js'
import { ApiError } from '../shared/errors.js'
import { assert } from '../shared/assert.js'
import type { SendsBrake } from '../rails/rail.js'
import type { KindRegistry } from '../transactions/kinds.js'
import {
  APPROVALS_PAGE_MAX,
  listApprovals,
  lockApproval,
  recordDecision,
  recordReview,
  type ApprovalRow,
  type ApprovalStatus,
} from './repository.js'

export const NOTE_LENGTH_MAX = 500

export interface ApprovalView {
  txnId: string
  accountId: string
  type: string
  txnState: string
  status: ApprovalStatus
  /** The thresholds it went over, amounts as exact decimal text. */
  reasons: ApprovalRow['reasons']
  requestedAt: number
  expiresAt: number
  review: { operatorId: string; email: string; at: number; note: string | null } | null
  decision: { operatorId: string | null; email: string | null; at: number; note: string | null } | null
}

export interface ApprovalsService {
  list(f: { status: ApprovalStatus; limit: number; cursor?: string }): Promise<{
    data: ApprovalView[]
    nextCursor: string | null
  }>
  review(txnId: string, actor: Actor, note: string | null): Promise<ApprovalView>
  approve(txnId: string, actor: Actor, note: string | null): Promise<ApprovalView>
  reject(txnId: string, actor: Actor, reason: string): Promise<ApprovalView>
}

export function present(a: ApprovalRow, txnState: string, type: string): ApprovalView {
  return {
    txnId: a.txn_id,
    accountId: a.account_id,
    type,
    txnState,
    status: a.status,
    reasons: a.reasons,
    requestedAt: Number(a.requested_at),
    expiresAt: Number(a.expires_at),
    review:
      a.reviewed_by === null
        ? null
        : {
            operatorId: a.reviewed_by,
            email: a.reviewed_by_email ?? '',
            at: Number(a.reviewed_at),
            note: a.review_note,
          },
    decision:
      a.decided_at === null
        ? null
        : {
            operatorId: a.decided_by,
            email: a.decided_by_email,
            at: Number(a.decided_at),
            note: a.decision_note,
          },
  }
}

/** The message of a step refused because the approval is no longer open. */
function closedMessage(a: ApprovalRow, txn: Txn): string {
  if (a.status !== 'waiting') return `This transaction's approval is ${a.status} already`
  return `This transaction is ${txn.state}, no longer waiting for approval`
}

export function createApprovalsService(deps: {
  db: Db
  transactions: TransactionsService
  /** RECONCILE_HALT_SENDS: an approval on a paused rail is refused (`sends_paused`), recording nothing. */
  brake?: SendsBrake
  /** The kind registry: the rail an approved send leaves by. */
  kinds: Pick<KindRegistry, 'railOfSend'>
  now?: () => number
}): ApprovalsService {
  const now = deps.now ?? Date.now

  /**
   * Runs `step` on a waiting approval under the locks of its transaction and its row; refuses one
   * that does not exist (404), is decided or past its deadline (409).
   */
  async function onWaiting(
    txnId: string,
    step: (q: Queryable, txn: Txn, a: ApprovalRow, move: Mover, at: number) => Promise<ApprovalView>,
  ): Promise<ApprovalView> {
    let view: ApprovalView | undefined
    await deps.transactions.apply(asTxnId(txnId), async (q, txn, move) => {
      const a = await lockApproval(q, txn.id)
      if (!a) return
      if (a.status !== 'waiting' || txn.state !== 'processing')
        throw new ApiError('invalid_state', closedMessage(a, txn))
      const at = now()
      if (BigInt(at) >= a.expires_at)
        throw new ApiError(
          'invalid_state',
          'The time to approve this transaction is over; its funds are released',
        )
      view = await step(q, txn, a, move, at)
    })
    if (!view) throw new ApiError('not_found', 'No approval for this transaction')
    return view
  }

  const by = (actor: Actor) => ({ operatorId: actor.operatorId, email: actor.email })

  return {
    async list(f) {
      const limit = Math.min(Math.max(f.limit, 1), APPROVALS_PAGE_MAX)
      const after = f.cursor ? decodeCursor(f.cursor) : undefined
      const rows = await listApprovals(deps.db, {
        status: f.status,
        limit: limit + 1,
        ...(after ? { after } : {}),
      })
      const page = rows.slice(0, limit)
      const last = page.at(-1)
      return {
        data: page.map((r) => present(r, r.txn_state, r.kind)),
        nextCursor: rows.length > limit && last ? encodeCursor(last.requested_at, last.txn_id) : null,
      }
    },

    review(txnId, actor, note) {
      return onWaiting(txnId, async (q, txn, a, _move, at) => {
        if (a.reviewed_by !== null)
          throw new ApiError(
            'invalid_state',
            `This transaction was reviewed already by ${a.reviewed_by_email ?? a.reviewed_by}; it now needs another operator's approval`,
          )
        return present(await recordReview(q, txn.id, by(actor), note, at), txn.state, txn.kind)
      })
    },

    approve(txnId, actor, note) {
      return onWaiting(txnId, async (q, txn, a, move, at) => {
        if (a.reviewed_by === null)
          throw new ApiError(
            'invalid_state',
            'This transaction has not been reviewed yet: one operator reviews it, another approves it',
          )
        if (actor.operatorId === a.reviewed_by || actor.operatorId === a.created_by)
          throw new ApiError(
            'forbidden',
            'The operator who made or reviewed a transaction cannot approve it: another operator must approve it',
          )
        // The brake: an approval lets the money go, so on a paused rail it is refused before
        // anything is written; the approval stays waiting (until its deadline) for a later try.
        await deps.brake?.refuseIfPaused(q, deps.kinds.railOfSend(txn.kind))
        const decided = await recordDecision(q, txn.id, 'approved', by(actor), note, at)
        assert(decided, 'a waiting approval under its row lock can be decided')
        const flow = deps.transactions.flows.get(txn.kind)
        assert(flow?.confirm, `flow ${txn.kind} confirms`)
        // The customer's confirm, resumed: the flow moves it on from processing as it would have
        // from quoted (srccreated, the worker woken), with the hold placed then.
        const moved = await flow.confirm(q, txn, { now: at, prepared: undefined, transition: move })
        return present(decided, moved.state, txn.kind)
      })
    },

    reject(txnId, actor, reason) {
      return onWaiting(txnId, async (q, txn, _a, move, at) => {
        const decided = await recordDecision(q, txn.id, 'rejected', by(actor), reason, at)
        assert(decided, 'a waiting approval under its row lock can be decided')
        await voidHolds(q, txn.id, at)
        const moved = await move('rejected', { msg: 'approval_rejected' })
        return present(decided, moved.state, txn.kind)
      })
    },
  }
}

/**
 * The worker's look at a transaction in `processing` whose next check came due (the approval gate's
 * `heldDue`, src/approvals/gate.ts): past the approval's deadline, it expires (hold voided,
 * `rejected` with msg `approval_expired`, its event); before it (the worker's claim moved the
 * check), the check goes back to the deadline. The engine calls it for a transaction in
 * `processing` only, and approval is the one gate that holds (service.ts asserts a single hold), so
 * the approval is there.
 */
export async function expireApprovalIfDue(q: Queryable, txn: Txn, move: Mover, at: number): Promise<void> {
  const a = await lockApproval(q, txn.id)
  assert(a, 'a transaction in processing has its approval')
  if (a.status !== 'waiting' || BigInt(at) < a.expires_at) {
    await scheduleCheck(q, txn.id, a.expires_at, 'exact', { state: 'processing' })
    return
  }
  await recordDecision(q, txn.id, 'expired', null, 'not approved within APPROVAL_TTL_S', at)
  await voidHolds(q, txn.id, at)
  await move('rejected', { msg: 'approval_expired' })
}

function encodeCursor(requestedAt: bigint, txnId: string): string {
  return Buffer.from(`${requestedAt}:${txnId}`).toString('base64url')
}

function decodeCursor(cursor: string): { requestedAt: bigint; txnId: string } {
  const m = /^(\d{1,16}):([A-Za-z0-9_]{1,64})$/.exec(
    cursor.length <= 200 ? Buffer.from(cursor, 'base64url').toString() : '',
  )
  if (!m) throw new ApiError('invalid_request', 'cursor: not a cursor this listing gave')
  return { requestedAt: BigInt(m[1]!), txnId: m[2]! }
}
