import { sql } from '../db/sql.js'
import type { TxnId } from '../shared/ids.js'
import type { Queryable } from '../db/db.js'
import { PAUSED_RECHECK_MS, RailFailure, type LightningPaymentState } from '../rails/rail.js'
import { systemAccountId, voidHolds, type Posting } from '../ledger/ledger.js'
import { heldMinor } from '../ledger/reads.js'
import { ceilDiv } from '../shared/amount.js'
import type { ConfirmContext, Flow } from '../transactions/flow.js'
import { scheduleCheck } from '../transactions/repository.js'
import { otherStateByRailRef } from '../transactions/reads.js'
import type { Txn } from '../transactions/txn.js'
import { walletDebit } from '../transactions/money.js'
import { postWalletEntry } from '../transactions/wallet-entry.js'
import { checkAgainAt, wakeWorkers } from '../bitcoin/schedule.js'
import type { LightningDeps } from './deps.js'
import { internalInvoiceIssue, MSAT_PER_SAT, receiveFor } from './invoices.js'
import { completeLnReceive, RAIL_RETRY_MS } from './receive.js'
import { creditSecondPayment } from './second-payment.js'
import { quoteLnSend } from './send-quote.js'
import { isLocalPending, lnSendDetails, withLocalInvoice, type LnSendDetails } from './send-details.js'
import { localInvoice } from './send-destination.js'
import { ApiError } from '../shared/errors.js'
import { LN_SEND } from './kinds.js'

/** A payment in flight is asked about again this often. */
const PAYMENT_POLL_MS = 2_000
/** How long a receive's own check waits while an internal send cancels its invoice and settles it. */
const SETTLE_INSIDE_MS = 30_000

/** What the send's functions are given: the Lightning deps with the clock filled in. */
export type LnSendDeps = LightningDeps & { now: () => number }

/**
 * Lightning send: quote checks the invoice and the amount rules; confirm holds amount + fees and
 * either settles an invoice of this service at once (both transactions complete, no routing fee)
 * or leaves the payment to the worker (srccreated). The worker pays through the node, idempotent
 * by payment hash: completed with the preimage and the unused routing fee returned, or failed with
 * the hold released.
 */
export function lnSendFlow(options: LightningDeps): Flow {
  const deps: LnSendDeps = { ...options, now: options.now ?? Date.now }
  return {
    kind: 'ln_send',
    quote: (ctx) => quoteLnSend(deps, ctx),
    prepareConfirm: (txn) => prepareLnSendConfirm(deps, txn),
    confirm: (q, txn, ctx) => confirmLnSend(deps, q, txn, ctx),
    afterConfirm: (txn) => cancelSettledInvoice(deps, txn),
    advance: (txn) => advanceLnSend(deps, txn),
  }
}

/**
 * Whether confirming `txn` now would settle `receive` inside the service: the invoice is still
 * payable, for this amount, and the send's funds are already held. Without a hold (a quote made
 * before the wallet was funded) the confirm may still fail for want of funds, and an invoice is
 * not cancelled on the node for a payment that may never come.
 */
async function willSettleInside(deps: LnSendDeps, txn: Txn, receive: Txn): Promise<boolean> {
  const { now } = deps
  const paymentRequest = lnSendDetails(txn).paymentRequest
  if (internalInvoiceIssue(receive, paymentRequest, now()) || receive.srcAmountMinor !== txn.destAmountMinor)
    return false
  return fundsHeld(deps, txn)
}

/** The wallet pays `walletDebit` less whatever part of the fee limit the route did not use. */
export function sendPostings(
  txn: Pick<Txn, 'srcAmountMinor' | 'srcFeeMinor' | 'srcNetworkFeeMinor' | 'deductFeesFromDest'>,
  walletId: string,
  routingFeeSats: bigint,
): Posting[] {
  const debit = walletDebit(txn) - (txn.srcNetworkFeeMinor - routingFeeSats)
  return [
    { accountId: walletId, ccy: 'BTC', amount: -debit },
    { accountId: systemAccountId('fees', 'BTC'), ccy: 'BTC', amount: txn.srcFeeMinor },
    { accountId: systemAccountId('lightning', 'BTC'), ccy: 'BTC', amount: debit - txn.srcFeeMinor },
  ]
}

/** Settles the send's hold with its journal entry; returns the patch that completes it. */
async function completeSend(
  deps: LnSendDeps,
  q: Queryable,
  txn: Txn,
  routingFeeSats: bigint,
  preimage: string | null,
  at: number,
) {
  await postWalletEntry(deps.accounts, q, txn, { kind: 'ln_send', now: at, settleHolds: true }, (walletId) =>
    sendPostings(txn, walletId, routingFeeSats),
  )
  return {
    srcNetworkFeeMinor: routingFeeSats,
    srcSettledMinor: txn.srcAmountMinor,
    destSettledMinor: txn.destAmountMinor,
    destDetails: { ...lnSendDetails(txn), preimage } satisfies LnSendDetails,
  }
}

/** Fails a send still in flight, releasing its hold. */
async function failSend(deps: LnSendDeps, txnId: TxnId, reason: string) {
  const { now } = deps
  await deps.transactions().apply(txnId, async (q, t, move) => {
    if (t.state !== 'srccreated') return
    await voidHolds(q, t.id, now())
    await move('failed', { msg: reason })
  })
}

/** What the confirm of a send learns before its database transaction. */
interface Prepared {
  nodeSettled: boolean
  /** A send to an address of ours: the invoice that address issued for it just now. */
  local?: { paymentRequest: string; paymentHash: string }
}

/**
 * Before the confirm transaction. A send to an address of ours asks that address for its invoice
 * now, which creates the payee's receive, but only when the confirm will settle it at once: the
 * quote's hold covers the send (the engine does not prepare a confirm that a gate refuses or
 * holds). Otherwise the confirm leaves the send to the worker (`advanceLocalSend`), which asks once
 * the funds are held. Then, as for any invoice of ours, it is cancelled on the node first.
 */
async function prepareLnSendConfirm(deps: LnSendDeps, txn: Txn): Promise<Prepared> {
  if (!isLocalPending(txn)) return cancelInternalInvoiceFirst(deps, txn)
  if (!(await fundsHeld(deps, txn))) return { nodeSettled: false }
  const local = await askLocalAddress(deps, txn)
  if ('refused' in local) {
    const d = lnSendDetails(txn)
    const field = d.lnurl !== undefined ? 'destReq.reqDetails.lnurl' : 'destReq.reqDetails.lnAddress'
    const issue = `the address refused: ${local.refused}`
    throw new ApiError('invalid_payment_request', `${field}: ${issue}`, [{ field, issue }])
  }
  const { nodeSettled } = await cancelInternalInvoiceFirst(deps, withLocalInvoice(txn, local))
  return { nodeSettled, local }
}

const askLocalAddress = (deps: LnSendDeps, txn: Txn) => {
  const d = lnSendDetails(txn)
  return localInvoice(deps, d.localUsername!, txn.destAmountMinor, d.comment, deps.now(), txn.id)
}

/** Whether the send's funds are already held (by its quote, or by its confirm). */
async function fundsHeld(deps: LnSendDeps, txn: Txn): Promise<boolean> {
  return (await heldMinor(deps.db, txn.id)) >= walletDebit(txn)
}

/**
 * Before the confirm transaction. An invoice of ours is settled inside the service. Before that, it
 * must stop being payable on the node, or an outside payer could pay it too and nobody would be
 * credited: cancel it there first, then ask the node where it stands. Settled means an outside payer
 * was first (the worker has not seen it yet): the invoice is paid and this send fails. Cancelled
 * means only this settlement can pay it. No answer leaves it to the cancel after the settlement.
 */
export async function cancelInternalInvoiceFirst(
  deps: LnSendDeps,
  txn: Txn,
): Promise<{ nodeSettled: boolean }> {
  const { rails, now } = deps
  const paymentHash = lnSendDetails(txn).paymentHash
  const receive = await receiveFor(deps.db, paymentHash, false)
  if (!receive) return { nodeSettled: false }
  if (await willSettleInside(deps, txn, receive)) {
    // Keep the receive's own check off the node for a while, so that it does not take the
    // cancel for an expiry before this settlement commits.
    await scheduleCheck(deps.db, receive.id, now() + SETTLE_INSIDE_MS, 'latest', { state: 'srccreated' })
    try {
      await rails.lightning.cancelInvoice(paymentHash)
    } catch (err) {
      // LND refuses to cancel a settled invoice: an outside payer was first.
      if (err instanceof RailFailure && err.code === 'invoice_already_settled') return { nodeSettled: true }
    }
  }
  const onNode = await rails.lightning.lookupInvoice(paymentHash).catch(() => undefined)
  return { nodeSettled: onNode?.state === 'settled' }
}

/**
 * Inside the confirm transaction: an invoice of ours is settled here, both sides at once; any other
 * is left to the worker, one transaction per payment hash.
 */
export async function confirmLnSend(
  deps: LnSendDeps,
  q: Queryable,
  quoted: Txn,
  ctx: ConfirmContext,
): Promise<Txn> {
  let txn = quoted
  if (isLocalPending(quoted)) {
    const local = (ctx.prepared as Prepared | undefined)?.local
    if (!local) {
      // Funds held only now, or approved by an operator: the worker asks the address.
      await wakeWorkers(q)
      return ctx.transition('srccreated', { nextCheckAtMs: ctx.now })
    }
    // Every transition below records the invoice the address issued.
    txn = withLocalInvoice(quoted, local)
    const transition = ctx.transition
    ctx = {
      ...ctx,
      transition: (to, patch = {}) => transition(to, { destDetails: txn.destDetails, ...patch }),
    }
  }
  const paymentRequest = lnSendDetails(txn).paymentRequest
  const paymentHash = lnSendDetails(txn).paymentHash
  const receive = await receiveFor(q, paymentHash, true)
  if (receive && (ctx.prepared as { nodeSettled?: boolean } | undefined)?.nodeSettled) {
    await voidHolds(q, txn.id, ctx.now)
    return ctx.transition('failed', { msg: 'invoice_already_paid', railRef: paymentHash })
  }
  if (!receive) {
    // The node pays a payment hash once and reports that one payment to every later call, so
    // a second transaction of ours for the same invoice would be charged for the first one's
    // payment. One transaction per hash goes out; the lock orders concurrent confirms.
    await q.query(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`ln_send:${paymentHash}`}, 0))`)
    const other = await otherStateByRailRef(q, {
      kind: 'ln_send',
      railRef: paymentHash,
      exceptId: txn.id,
      states: ['srccreated', 'completed'],
    })
    if (other) {
      await voidHolds(q, txn.id, ctx.now)
      return ctx.transition('failed', {
        msg: other === 'completed' ? 'invoice_already_paid' : 'payment_in_flight',
        railRef: paymentHash,
      })
    }
    await wakeWorkers(q)
    return ctx.transition('srccreated', { railRef: paymentHash, nextCheckAtMs: ctx.now })
  }
  const issue = internalInvoiceIssue(receive, paymentRequest, ctx.now)
  if (issue || receive.srcAmountMinor !== txn.destAmountMinor) {
    await voidHolds(q, txn.id, ctx.now)
    return ctx.transition('failed', {
      msg: issue?.msg ?? 'incorrect_payment_details',
      railRef: paymentHash,
    })
  }
  // Both sides settle in this one database transaction: the sender's entry pays the Lightning
  // account, the receiver's entry is paid from it, so it nets to zero as if routed.
  const patch = await completeSend(deps, q, txn, 0n, null, ctx.now)
  // The receive is credited as a payment from outside would be, into its wallet at its quoted rate.
  await completeLnReceive(deps, q, receive, receive.srcAmountMinor, ctx.now)
  return ctx.transition('completed', {
    ...patch,
    destDetails: { ...patch.destDetails, internal: true },
    railRef: paymentHash,
  })
}

/**
 * After the confirm committed. An invoice of ours paid inside the service is still open on the
 * node: cancel it there, so that an outside payer cannot pay it a second time with nobody credited.
 */
export async function cancelSettledInvoice(deps: LnSendDeps, txn: Txn): Promise<void> {
  const { rails, now } = deps
  if (txn.state === 'completed' && lnSendDetails(txn).internal === true && txn.railRef) {
    const hash = txn.railRef
    // The receive of that invoice, once completed by this send.
    const receive = { kind: 'ln_receive', railRef: hash } as const
    try {
      await rails.lightning.cancelInvoice(hash)
    } catch (err) {
      // The node could not be told, or says the invoice is paid there: the receive's own check
      // keeps at it until the invoice is cancelled on the node or its payment there credited.
      await scheduleCheck(deps.db, receive, now() + RAIL_RETRY_MS, 'exact', { state: 'completed' })
      if (!(err instanceof RailFailure) || err.code !== 'invoice_already_settled') throw err
      // An outside payer paid the invoice on the node before it could be cancelled: that money
      // has arrived and belongs to the invoice's owner, already paid by this send. Credit it
      // now; the receive's check is then left with nothing to do.
      await creditSecondPayment(deps, hash)
      await scheduleCheck(deps.db, receive, null, 'exact', { state: 'completed' })
    }
  }
}

/**
 * The worker's step for a send in flight: follow the node's record of the payment hash, pay it
 * only when the node has none, and complete or fail the send on the outcome.
 */
export async function advanceLnSend(deps: LnSendDeps, txn: Txn): Promise<void> {
  const { rails, now } = deps
  if (txn.state !== 'srccreated') return
  if (isLocalPending(txn)) return advanceLocalSend(deps, txn)
  let result: LightningPaymentState
  try {
    // The node's record of the hash first: a payment it has (in flight, paid, failed) is
    // followed, never sent again. Sending again would be refused once the invoice expired
    // (LND checks the expiry before it looks for the payment) and would restart a failed one.
    result = await rails.lightning.lookupPayment(lnSendDetails(txn).paymentHash)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    // Without the node's record nothing can be decided, whatever the failure (even a refused
    // macaroon): a payment may be in flight, so the hold stays and the node is asked again.
    if (!err.retryable)
      deps.log?.error(
        { txnId: txn.id, code: err.code },
        'the Lightning node refuses to say where a payment stands',
      )
    await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
    return
  }
  if (result.status === 'unknown' && (await deps.brake.pausedFor(deps.db, LN_SEND.rail))) {
    // The brake holds the rail: nothing is sent; the send waits in srccreated, its funds held, and
    // is looked at again (a payment the node already has is still followed above).
    deps.log?.warn({ txnId: txn.id }, 'Lightning send waits: sends on the rail are paused')
    await checkAgainAt(deps.db, txn, now() + PAUSED_RECHECK_MS)
    return
  }
  try {
    if (result.status === 'unknown') {
      result = await rails.lightning.sendPayment({
        paymentRequest: lnSendDetails(txn).paymentRequest,
        amountMsat: txn.destAmountMinor * MSAT_PER_SAT,
        feeLimitMsat: txn.srcNetworkFeeMinor * MSAT_PER_SAT,
      })
    }
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    if (err.retryable) await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
    else await failSend(deps, txn.id, err.code)
    return
  }
  if (result.status === 'succeeded') {
    let feeSats = ceilDiv(result.feeMsat, MSAT_PER_SAT)
    if (feeSats > txn.srcNetworkFeeMinor) {
      // A node must not exceed the limit it was given; if one does, the customer is still
      // charged no more than quoted and the difference is ours to look into.
      deps.log?.error(
        { txnId: txn.id, feeMsat: String(result.feeMsat) },
        'a payment exceeded its routing-fee limit',
      )
      feeSats = txn.srcNetworkFeeMinor
    }
    await deps.transactions().apply(txn.id, async (q, t, move) => {
      if (t.state !== 'srccreated') return
      const at = now()
      await move('completed', await completeSend(deps, q, t, feeSats, result.preimage, at))
    })
    return
  }
  if (result.status === 'failed') return failSend(deps, txn.id, result.reason)
  await checkAgainAt(deps.db, txn, now() + PAYMENT_POLL_MS)
}

/**
 * The worker's step for a send to an address of ours whose confirm did not settle it at once (its
 * funds were held only at confirm, or an operator approved it): ask the address for its invoice
 * now, and settle it inside the service as the confirm would have; a refusal fails the send and
 * releases its hold.
 */
async function advanceLocalSend(deps: LnSendDeps, txn: Txn): Promise<void> {
  const { now } = deps
  const local = await askLocalAddress(deps, txn)
  if ('refused' in local) return failSend(deps, txn.id, 'incorrect_payment_details')
  const { nodeSettled } = await cancelInternalInvoiceFirst(deps, withLocalInvoice(txn, local))
  let settled: Txn | undefined
  await deps.transactions().apply(txn.id, async (q, t, move) => {
    if (t.state !== 'srccreated' || !isLocalPending(t)) return
    settled = await confirmLnSend(deps, q, t, {
      now: now(),
      prepared: { nodeSettled, local } satisfies Prepared,
      transition: move,
    })
  })
  if (settled) await cancelSettledInvoice(deps, settled)
}
