import type { Queryable } from '../db/db.js'
import type { TxnId } from '../shared/ids.js'
import { nowBy } from '../shared/clock.js'
import { voidHolds } from '../ledger/ledger.js'
import { PAUSED_RECHECK_MS, RailFailure, type PayoutState } from '../rails/rail.js'
import { assert } from '../shared/assert.js'
import { WAKE_CHANNEL } from '../events/channels.js'
import type { ConfirmContext, Flow } from '../transactions/flow.js'
import { scheduleCheck } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import { postWalletEntry } from '../transactions/wallet-entry.js'
import type { PayoutFlowDeps, PayoutNetwork } from './deps.js'
import { payoutPostings } from './postings.js'
import { lookForReturn } from './returns.js'

/**
 * Payouts out of an internal wallet to an outside network: USDT over TRON (`tron`) and VND to a
 * Vietnamese bank account (`vnd-instant`). Both follow the contract's payout sequence:
 *
 *   quoted -> srccreated (funds held) -> destsent (txHash / bankRef) -> completed | failed | rejected
 *
 * Confirm only moves the transaction to `srccreated` and wakes the worker; the worker hands the
 * payout to the rail (outside any database transaction), records the rail's reference at
 * `destsent`, and asks the rail again until it reports an outcome. A check the flow makes before
 * sending (a VND payout's beneficiary name) may refuse it instead: `rejected`, funds released. The hold placed at create or
 * confirm stays open until that outcome: `completed` posts it (wallet out, fee to revenue, the rest
 * to the network's system account, through FX liquidity when the currencies differ), `failed` and
 * `rejected` void it. Nothing is posted at `destsent`, so an outcome never has to be reversed.
 *
 * A bank transfer can still come back after the partner reported it `completed` (the beneficiary's
 * bank returns it: account closed, name mismatch found late). Told by a partner notification, the
 * worker reads the payout again; `returned` then creates a `payout_return` transaction, completed,
 * whose entry is the payout's entry reversed: the wallet gets back all it paid, fee included. The
 * payout itself stays `completed` (a final state stays final) and names its return in
 * destReq.reqDetails.returnTxnId. One return per payout, however often the partner says so. A
 * payout reported returned before we saw it completed simply fails, its hold released.
 */
export function payoutFlow(deps: PayoutFlowDeps, net: PayoutNetwork): Flow {
  return {
    kind: net.kind,
    quote: (ctx) => net.quote(ctx),
    confirm: (q, _txn, ctx) => confirmPayout(q, ctx),
    advance: (txn) => advancePayout(deps, net, txn),
  }
}

/** The service has placed the hold; the worker submits the payout at once. */
async function confirmPayout(q: Queryable, ctx: ConfirmContext): Promise<Txn> {
  const row = await ctx.transition('srccreated', { nextCheckAtMs: ctx.now })
  await q.notify(WAKE_CHANNEL)
  return row
}

async function advancePayout(deps: PayoutFlowDeps, net: PayoutNetwork, txn: Txn): Promise<void> {
  if (txn.state === 'srccreated') await submitPayout(deps, net, txn)
  else if (txn.state === 'destsent') await checkPayout(deps, net, txn)
  else if (txn.state === 'completed' && net.kind === 'vnd_payout') await lookForReturn(deps, net, txn)
}

/** Release the funds and end the payout as failed or rejected. */
function endWithoutPaying(
  deps: PayoutFlowDeps,
  txnId: TxnId,
  from: Txn['state'],
  to: 'failed' | 'rejected',
  reason: string,
  details?: Record<string, unknown>,
) {
  return deps.transactions().apply(txnId, async (q, txn, move) => {
    if (txn.state !== from) return
    await voidHolds(q, txn.id, nowBy(deps))
    await move(to, {
      msg: reason,
      ...(details ? { destDetails: { ...txn.destDetails, ...details } } : {}),
    })
  })
}

async function submitPayout(deps: PayoutFlowDeps, net: PayoutNetwork, txn: Txn): Promise<void> {
  // The brake holds the rail: nothing is submitted; the payout waits in srccreated, its funds held,
  // and is looked at again.
  if (await deps.brake.pausedFor(deps.db, net.rail)) {
    deps.log.warn({ txnId: txn.id, kind: net.kind }, 'payout waits: sends on the rail are paused')
    await scheduleCheck(deps.db, txn.id, nowBy(deps) + PAUSED_RECHECK_MS, 'earliest', { state: 'srccreated' })
    return
  }
  let ref: string
  try {
    const submitted = await net.submit(txn)
    if (typeof submitted !== 'string') {
      // A check before sending refused it (the beneficiary's name): nothing left, funds go back.
      await endWithoutPaying(deps, txn.id, 'srccreated', 'rejected', submitted.rejected)
      return
    }
    ref = submitted
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    if (!err.retryable) {
      // The network refused the payout outright: nothing left, so the funds go back. A refusal
      // of the request itself (the rails' `rejected`) ends it rejected, anything else failed.
      if (err.code === 'rejected')
        await endWithoutPaying(deps, txn.id, 'srccreated', 'rejected', net.refusedReason)
      else await endWithoutPaying(deps, txn.id, 'srccreated', 'failed', err.code)
      return
    }
    // A retryable failure is tried again when the worker's claim on the row lapses; resubmitting
    // is safe because the rail is idempotent by the transaction id.
    deps.log.warn({ txnId: txn.id, kind: net.kind, code: err.code }, 'payout submission will be retried')
    return
  }
  await deps.transactions().apply(txn.id, async (_q, locked, move) => {
    if (locked.state !== 'srccreated') return
    await move('destsent', {
      railRef: ref,
      destDetails: { ...locked.destDetails, [net.refField]: ref },
      nextCheckAtMs: nowBy(deps) + net.pollMs,
    })
  })
}

async function checkPayout(deps: PayoutFlowDeps, net: PayoutNetwork, txn: Txn): Promise<void> {
  assert(txn.railRef, 'a payout at destsent has its rail reference')
  let state: PayoutState & { details?: Record<string, unknown> }
  try {
    state = await net.check(txn.railRef, txn)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    if (!err.retryable) {
      // The network no longer knows a payout it accepted: where the money is needs a person.
      // The hold stays open until an operator settles it.
      await deps.transactions().apply(txn.id, async (_q, locked, move) => {
        if (locked.state === 'destsent') await move('error', { msg: err.code })
      })
      return
    }
    deps.log.warn({ txnId: txn.id, kind: net.kind, code: err.code }, 'payout status check will be retried')
    return
  }
  switch (state.status) {
    case 'pending':
      // Put off the next look (no event: nothing changed).
      await scheduleCheck(deps.db, txn.id, nowBy(deps) + net.pollMs, 'exact', { state: 'destsent' })
      return
    case 'failed':
    case 'rejected':
      await endWithoutPaying(deps, txn.id, 'destsent', state.status, state.reason, state.details)
      return
    case 'reversed':
      // Sent back before we saw it completed: nothing was posted, so releasing the hold returns
      // the money, and the payout has failed.
      await endWithoutPaying(deps, txn.id, 'destsent', 'failed', state.reason)
      return
    case 'completed':
      await deps.transactions().apply(txn.id, async (q, locked, move) => {
        if (locked.state !== 'destsent') return
        await postWalletEntry(
          deps.accounts,
          q,
          locked,
          { kind: net.kind, now: nowBy(deps), settleHolds: true },
          (walletId) => payoutPostings(locked, walletId, net.system),
        )
        await move('completed', {
          srcSettledMinor: locked.srcAmountMinor,
          destSettledMinor: locked.destAmountMinor,
          ...(state.details ? { destDetails: { ...locked.destDetails, ...state.details } } : {}),
        })
      })
      return
  }
}
