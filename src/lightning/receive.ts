import type { Queryable } from '../db/db.js'
import { nowBy } from '../shared/clock.js'
import { decodeInvoice } from './bolt11.js'
import { RailFailure } from '../rails/rail.js'
import { assert } from '../shared/assert.js'
import type { ConfirmContext, Flow, QuoteContext } from '../transactions/flow.js'
import { scheduleCheck } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import { postReceiveEntry, receiveFxQuote } from '../transactions/receive-fx.js'
import { receiveCompletionMsg } from '../transactions/receive-outcome.js'
import { systemAccountId } from '../ledger/ledger.js'
import { allInRate } from '../rates/fx.js'
import { checkAgainAt, pollDelayMs } from '../bitcoin/schedule.js'
import { invoicePageUrl, newPageId } from '../bitcoin/hosted-page.js'
import { nodeCall } from '../rails/node-call.js'
import { receiveQuote } from '../bitcoin/receive-quote.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { canonicalInvoice, MSAT_PER_SAT } from './invoices.js'
import { creditSecondPayment } from './second-payment.js'
import { lnReceiveExtras, type LnReceiveExtras } from './receive-details.js'

/** An open invoice is looked at every 2 s at first, backing off to every 30 s; a sandbox payment wakes it at once. */
const INVOICE_POLL = { minMs: 2_000, maxMs: 30_000 }
/** After its expiry a node may still settle an invoice whose payment was already arriving; we wait this long. */
const INVOICE_EXPIRY_GRACE_MS = 60_000
/** A node that could not be reached is tried again after this long. */
export const RAIL_RETRY_MS = 15_000

/** What the node issued at `prepareConfirm`, for the confirm. */
interface IssuedInvoice {
  paymentRequest: string
  paymentHash: string
  expiresAtMs: number
}

/**
 * Lightning receive: confirm issues a BOLT11 invoice (srccreated); the worker asks the node about it
 * until it is settled (completed, the wallet credited with what was paid less the receive fee) or
 * expired. An invoice paid by another account of this service is settled at that account's confirm.
 * The wallet credited may be one in another currency (USDT, VND, ...): the bitcoin is then
 * converted at the rate quoted (src/transactions/receive-fx.ts).
 */
export function lnReceiveFlow(deps: BitcoinDeps): Flow {
  return {
    kind: 'ln_receive',
    quote: (ctx) => quoteLnReceive(deps, ctx),
    prepareConfirm: (txn) => issueInvoice(deps, txn),
    confirm: (_q, txn, ctx) => confirmLnReceive(deps, txn, ctx),
    advance: (txn) => advanceLnReceive(deps, txn),
  }
}

async function quoteLnReceive(deps: BitcoinDeps, { input, rates }: QuoteContext) {
  const extras = lnReceiveExtras(input.sourceReq.reqDetails)
  if ('kind' in extras) return extras
  const feeRule = deps.config.fees.lightning_receive!
  const srcDetails = { paymentRequest: null, invoicePageUrl: null, ...extras }
  const dest = input.destReq.ccy
  if (dest === 'BTC') return receiveQuote(input, feeRule, srcDetails)
  const fx = allInRate(
    deps.rates.perBtc(rates, 'BTC'),
    deps.rates.perBtc(rates, dest),
    deps.config.fxSpreadBps,
  )
  return receiveFxQuote({ input, fx, feeRule, srcDetails })
}

/** Outside the confirm transaction: the node issues the invoice. */
async function issueInvoice(deps: BitcoinDeps, txn: Txn): Promise<IssuedInvoice> {
  const account = await deps.accounts.get(txn.accountId)
  const { descriptionHash } = txn.srcDetails as LnReceiveExtras
  const issued = await nodeCall('Lightning node', () =>
    deps.rails.lightning.createInvoice({
      amountMsat: txn.srcAmountMinor * MSAT_PER_SAT,
      description: `svcpay ${account?.displayName ?? ''}`.trim(),
      ...(descriptionHash ? { descriptionHash } : {}),
      expirySeconds: deps.config.invoiceExpiryS,
    }),
  )
  const decoded = decodeInvoice(issued.paymentRequest)
  assert(!('error' in decoded), 'the node issued an invoice we can read')
  return {
    ...issued,
    paymentRequest: canonicalInvoice(issued.paymentRequest),
    expiresAtMs: decoded.expiresAtMs,
  }
}

async function confirmLnReceive(deps: BitcoinDeps, txn: Txn, ctx: ConfirmContext): Promise<Txn> {
  const issued = ctx.prepared as IssuedInvoice | undefined
  assert(issued, 'the invoice was issued before confirm')
  const pageId = newPageId()
  return ctx.transition('srccreated', {
    srcDetails: {
      // The quote's extras (a description hash, a payer's comment) stay.
      ...txn.srcDetails,
      paymentRequest: issued.paymentRequest,
      invoicePageUrl: invoicePageUrl(deps.config, pageId),
    },
    railRef: issued.paymentHash,
    pageId: pageId,
    expiresAtMs: issued.expiresAtMs,
    nextCheckAtMs: ctx.now + INVOICE_POLL.minMs,
  })
}

/**
 * Credit a Lightning receive (locked, in srccreated) with what its payer paid, less the receive fee,
 * converted at its quoted rate when its wallet is not the BTC one (an overpayment too, rounded
 * down), and complete it, inside the caller's database transaction; `msg` says when what was paid
 * is not the invoice's amount (receive-outcome.ts). The worker does this when the node
 * reports the invoice settled; the sandbox payer does it in the same transaction as the payment, so
 * that no internal send can pay an invoice that an outside payer has already paid.
 */
export async function completeLnReceive(
  deps: Pick<BitcoinDeps, 'accounts' | 'repository'>,
  q: Queryable,
  txn: Txn,
  paidSats: bigint,
  at: number,
): Promise<Txn> {
  // The quoted fee stands unless the payer paid less than it (a node may accept overpayment only).
  const fee = txn.srcFeeMinor > paidSats ? paidSats : txn.srcFeeMinor
  const credited = await postReceiveEntry(deps.accounts, q, txn, {
    railAccount: systemAccountId('lightning', 'BTC'),
    receivedMinor: paidSats,
    feeMinor: fee,
    kind: 'ln_receive',
    now: at,
  })
  return deps.repository.transition(
    q,
    txn,
    'completed',
    {
      // An invoice with an amount is never settled for less (LND refuses it), but may be for more.
      msg: receiveCompletionMsg(txn.srcAmountMinor, paidSats),
      srcSettledMinor: paidSats,
      destSettledMinor: credited,
    },
    { now: at },
  )
}

/**
 * The worker's step: a receive in srccreated follows its invoice on the node; one completed inside
 * the service whose invoice is still open there gets it cancelled.
 */
async function advanceLnReceive(deps: BitcoinDeps, txn: Txn): Promise<void> {
  if (txn.state === 'completed' && txn.railRef) return cancelOnNode(deps, txn, txn.railRef)
  if (txn.state !== 'srccreated' || !txn.railRef) return
  const at = nowBy(deps)
  let invoice
  try {
    invoice = await deps.rails.lightning.lookupInvoice(txn.railRef)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    await checkAgainAt(deps.db, txn, at + RAIL_RETRY_MS)
    return
  }
  if (invoice.state === 'settled') {
    const paidSats = invoice.amountPaidMsat / MSAT_PER_SAT
    await deps.transactions().apply(txn.id, async (q, t) => {
      if (t.state === 'srccreated') await completeLnReceive(deps, q, t, paidSats, nowBy(deps))
    })
    return
  }
  if (invoice.state === 'canceled' || at >= txn.expiresAtMs + INVOICE_EXPIRY_GRACE_MS) {
    await deps.transactions().apply(txn.id, async (_q, t, move) => {
      if (t.state === 'srccreated') await move('expired', { msg: 'invoice_expired' })
    })
    return
  }
  const until = txn.expiresAtMs + INVOICE_EXPIRY_GRACE_MS
  const next = Math.min(at + pollDelayMs(txn.updatedAtMs, at, INVOICE_POLL), until)
  await checkAgainAt(deps.db, txn, Math.max(next, at + 1_000))
}

/**
 * A receive settled inside the service whose invoice the send's follow-up could not cancel on the
 * node (it only then gets a next check): cancel it now, or credit the outside payment that beat
 * the cancel. Retried while the node cannot answer.
 */
async function cancelOnNode(deps: BitcoinDeps, txn: Txn, paymentHash: string): Promise<void> {
  try {
    await deps.rails.lightning.cancelInvoice(paymentHash)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    if (err.code === 'invoice_already_settled') await creditSecondPayment(deps, paymentHash)
    else if (err.retryable) return checkAgainAt(deps.db, txn, nowBy(deps) + RAIL_RETRY_MS)
    // Any other refusal (the node no longer has the invoice) leaves nothing that can be paid.
  }
  await scheduleCheck(deps.db, txn.id, null, 'exact', { state: 'completed' })
}
