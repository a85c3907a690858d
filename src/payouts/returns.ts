import { createHash } from 'node:crypto'
import { nowBy } from '../shared/clock.js'
import type { Queryable } from '../db/db.js'
import { newTxnId, type TxnId } from '../shared/ids.js'
import { assert } from '../shared/assert.js'
import { WAKE_CHANNEL } from '../events/channels.js'
import { RailFailure, type PayoutState } from '../rails/rail.js'
import { getTxn, markPayoutReturned, scheduleCheck, settleReturn } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import { walletDebit } from '../transactions/money.js'
import { postEntry } from '../ledger/ledger.js'
import type { PayoutFlowDeps, PayoutNetwork } from './deps.js'
import { returnPostings } from './postings.js'
import { VND_PAYOUT } from './kinds.js'

/**
 * A completed payout the partner says changed (checkPayoutNow): read it, and when it came back,
 * return the money. A partner that cannot answer now is asked again later (the worker's lease
 * and the rail's backoff); any answer ends the look.
 */
export async function lookForReturn(deps: PayoutFlowDeps, net: PayoutNetwork, txn: Txn): Promise<void> {
  if (!txn.railRef || typeof txn.destDetails.returnTxnId === 'string') return stopLooking(deps, txn.id)
  let state: PayoutState
  try {
    state = await net.check(txn.railRef, txn)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    if (err.retryable) {
      deps.log.warn({ txnId: txn.id, kind: net.kind, code: err.code }, 'payout return check will be retried')
      return
    }
    return stopLooking(deps, txn.id)
  }
  if (state.status === 'reversed') await recordReturn(deps, net, txn.id, state.reason, nowBy(deps))
  await stopLooking(deps, txn.id)
}

async function stopLooking(deps: PayoutFlowDeps, txnId: TxnId): Promise<void> {
  await scheduleCheck(deps.db, txnId, null, 'exact', { state: 'completed' })
}

/**
 * Return a completed payout's money to its wallet, once: the payout is locked, a payout that has a
 * return already is left alone, and the unique index on a return's rail_ref (migration 018) stands
 * behind that. The return is a transaction of its own, created completed with its event (webhook),
 * its entry in the same database transaction.
 */
async function recordReturn(
  deps: PayoutFlowDeps,
  net: PayoutNetwork,
  payoutId: TxnId,
  reason: string,
  at: number,
): Promise<void> {
  await deps.db.tx(async (q) => {
    const payout = await getTxn(q, payoutId, { lock: true })
    if (!payout || payout.state !== 'completed' || typeof payout.destDetails.returnTxnId === 'string') return
    const walletId = await deps.accounts.walletId(q, payout.accountId, payout.srcCcy)
    assert(walletId, 'a payout is funded from a wallet of its account')
    const stamp = at
    const refund = walletDebit(payout)
    const inserted = await deps.repository.insertTxn(q, {
      id: newTxnId(),
      accountId: payout.accountId,
      extRefId: null,
      requestHash: createHash('sha256').update(`payout_return:${payout.id}`).digest('hex'),
      kind: 'payout_return',
      state: 'completed',
      note: null,
      deductFeesFromDest: false,
      srcCcy: payout.destCcy,
      srcMethod: payout.destMethod,
      srcAmountMinor: payout.destAmountMinor,
      srcFeeMinor: 0n,
      srcNetworkFeeMinor: 0n,
      srcDetails: { payoutTxnId: payout.id, [net.refField]: payout.railRef, reason },
      srcCreatedAtMs: stamp,
      srcUpdatedAtMs: stamp,
      destCcy: payout.srcCcy,
      destMethod: 'svcpay',
      destAmountMinor: refund,
      destDetails: {},
      destCreatedAtMs: stamp,
      destUpdatedAtMs: stamp,
      fxRate: payout.fxRate,
      expiresAtMs: stamp,
      kyc: null,
      sourceOfFunds: null,
      nextCheckAtMs: null,
      createdAtMs: stamp,
      updatedAtMs: stamp,
    })
    assert(inserted, 'a payout return has no extRefId to collide on')
    const ret = await settleReturn(q, inserted.id, {
      payoutId: payout.id,
      reason,
      src: payout.destAmountMinor,
      dest: refund,
    })
    assert(ret, 'the payout return was just inserted')
    await postEntry(q, {
      txnId: ret.id,
      kind: 'payout_return',
      now: at,
      postings: returnPostings(payout, walletId, net.system),
    })
    await markPayoutReturned(q, payout, { returnTxnId: ret.id, reason, at })
    await deps.repository.recordEvent(q, ret)
    deps.log.warn(
      { txnId: payout.id, returnTxnId: ret.id, kind: net.kind, reason },
      'a completed payout came back',
    )
  })
}

/**
 * Makes the payout the rail knows as `ref` due now and wakes the worker, which then reads it from
 * the rail: a partner's notification is a hint to look, never a state by itself. A completed bank
 * payout without a return is made due too: the notification may be its return. False when no such
 * payout of that kind has that reference (settled already, or not ours).
 */
export async function checkPayoutNow(
  db: Queryable,
  kind: PayoutNetwork['kind'],
  ref: string,
  now: number,
): Promise<boolean> {
  // Only a bank payout comes back once completed (the beneficiary's bank returns it).
  const returnable = kind === VND_PAYOUT.kind
  if (!(await scheduleCheck(db, { kind, payoutRef: ref, returnable }, now, 'exact'))) return false
  await db.notify(WAKE_CHANNEL)
  return true
}
