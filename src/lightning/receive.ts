import { createHash } from 'node:crypto'
import type { Queryable } from '../db/db.js'
import { newId } from '../shared/ids.js'
import { decodeInvoice } from './bolt11.js'
import { RailFailure } from '../rails/rail.js'
import { postEntry } from '../ledger/ledger.js'
import { assert } from '../shared/assert.js'
import type { Flow } from '../transactions/flow.js'
import { scheduleCheck, setRailRef } from '../transactions/repository.js'
import { txnFromRow, type Txn } from '../transactions/txn.js'
import {
  checkAgainAt,
  invoicePageUrl,
  newPageId,
  nodeCall,
  pollDelayMs,
  receivePostings,
  receiveFee,
  receiveQuote,
  type BitcoinDeps,
} from '../bitcoin/common.js'

export const MSAT_PER_SAT = 1_000n
/** An open invoice is looked at every 2 s at first, backing off to every 30 s; a sandbox payment wakes it at once. */
const INVOICE_POLL = { minMs: 2_000, maxMs: 30_000 }
/** After its expiry a node may still settle an invoice whose payment was already arriving; we wait this long. */
const INVOICE_EXPIRY_GRACE_MS = 60_000
/** A node that could not be reached is tried again after this long. */
export const RAIL_RETRY_MS = 15_000

/** Canonical invoice text: no `lightning:` scheme, lower case (BOLT11 is case-insensitive). */
export const canonicalInvoice = (text: string) =>
  text
    .trim()
    .replace(/^lightning:/i, '')
    .toLowerCase()

/** Our own receive waiting on this payment hash, if the invoice is one this service issued. */
export async function receiveFor(q: Queryable, paymentHash: string, lock: boolean): Promise<Txn | undefined> {
  const { rows } = await q.query(
    `SELECT * FROM transactions WHERE rail_ref = $1 AND kind = 'ln_receive' ${lock ? 'FOR UPDATE' : ''}`,
    [paymentHash],
  )
  return rows[0] ? txnFromRow(rows[0]) : undefined
}

/** Why an invoice of ours cannot be paid now, or undefined when it can. */
export function internalInvoiceIssue(
  receive: Txn,
  paymentRequest: string,
  now: number,
): { msg: string; issue: string } | undefined {
  if (receive.srcDetails.paymentRequest !== paymentRequest) {
    return {
      msg: 'invalid_payment_request',
      issue: 'does not match the invoice this service issued for that payment hash',
    }
  }
  if (receive.state === 'completed')
    return { msg: 'invoice_already_paid', issue: 'the invoice is already paid' }
  if (receive.state !== 'srccreated' || receive.expiresAtMs <= now) {
    return { msg: 'invoice_expired', issue: 'the invoice has expired' }
  }
  return undefined
}

/**
 * Credit a Lightning receive (locked, in srccreated) with what its payer paid, less the receive fee,
 * and complete it, inside the caller's database transaction. The worker does this when the node
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
  const wallet = await deps.accounts.walletFor(q, txn.accountId, 'BTC')
  assert(wallet, 'the receiving account has a BTC wallet')
  // The quoted fee stands unless the payer paid less than it (a node may accept overpayment only).
  const fee = txn.srcFeeMinor > paidSats ? paidSats : txn.srcFeeMinor
  await postEntry(q, {
    txnId: txn.id,
    kind: 'ln_receive',
    now: at,
    postings: receivePostings('lightning', wallet.id, paidSats, fee),
  })
  return deps.repository.transition(
    q,
    txn,
    'completed',
    { srcSettledMinor: paidSats, destSettledMinor: paidSats - fee },
    { now: at },
  )
}

/**
 * An invoice of ours that was paid twice: settled inside the service by another account's send, and
 * also on the node by an outside payer before the node's copy could be cancelled. The node holds the
 * outside payer's money, so it is credited to the invoice's owner as a `deposit` of its own (method
 * lightning, `rail_ref` the payment hash; at most one per hash), completed at once, with the
 * Lightning receive fee. Nothing is dropped, and nothing is credited twice.
 */
export async function creditSecondPayment(deps: BitcoinDeps, paymentHash: string): Promise<Txn | undefined> {
  const invoice = await deps.rails.lightning.lookupInvoice(paymentHash)
  if (invoice.state !== 'settled') return undefined
  const paidSats = invoice.amountPaidMsat / MSAT_PER_SAT
  if (paidSats <= 0n) return undefined
  const now = (deps.now ?? Date.now)()
  return deps.db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`ln_second:${paymentHash}`])
    const receive = await receiveFor(q, paymentHash, true)
    if (!receive) return undefined
    const { rows: done } = await q.query(
      `SELECT * FROM transactions WHERE kind = 'deposit' AND rail_ref = $1`,
      [paymentHash],
    )
    if (done[0]) return txnFromRow(done[0])
    const wallet = await deps.accounts.walletFor(q, receive.accountId, 'BTC')
    assert(wallet, 'the receiving account has a BTC wallet')
    const fee = receiveFee(deps.config.fees.lightning_receive!, paidSats)
    const at = now
    const row = await deps.repository.insertTxn(
      q,
      {
        id: newId('txn'),
        accountId: receive.accountId,
        extRefId: null,
        requestHash: createHash('sha256').update(`ln_second:${paymentHash}`).digest('hex'),
        kind: 'deposit',
        state: 'srccreated',
        note: null,
        deductFeesFromDest: false,
        srcCcy: 'BTC',
        srcMethod: 'lightning',
        srcAmountMinor: paidSats,
        srcFeeMinor: fee,
        srcNetworkFeeMinor: 0n,
        srcDetails: { paymentHash, forTxnId: receive.id, secondPayment: true },
        srcCreatedAtMs: at,
        srcUpdatedAtMs: at,
        destCcy: 'BTC',
        destMethod: 'svcpay',
        destAmountMinor: paidSats - fee,
        destDetails: {},
        destCreatedAtMs: at,
        destUpdatedAtMs: at,
        fxRate: '1',
        expiresAtMs: at,
        kyc: null,
        sourceOfFunds: null,
        nextCheckAtMs: null,
        createdAtMs: at,
        updatedAtMs: at,
      },
      { event: true },
    )
    assert(row, 'a deposit transaction has no extRefId to collide on')
    await setRailRef(q, row.id, paymentHash)
    await postEntry(q, {
      txnId: row.id,
      kind: 'deposit',
      now,
      postings: receivePostings('lightning', wallet.id, paidSats, fee),
    })
    return deps.repository.transition(
      q,
      { ...row, railRef: paymentHash },
      'completed',
      { srcSettledMinor: paidSats, destSettledMinor: paidSats - fee },
      { now },
    )
  })
}

/**
 * Lightning receive: confirm issues a BOLT11 invoice (srccreated); the worker asks the node about it
 * until it is settled (completed, the wallet credited with what was paid less the receive fee) or
 * expired. An invoice paid by another account of this service is settled at that account's confirm.
 */
export function lnReceiveFlow(deps: BitcoinDeps): Flow {
  const { config, rails } = deps
  const now = deps.now ?? Date.now
  const rule = config.fees.lightning_receive!
  const complete = (q: Queryable, txn: Txn, paidSats: bigint, at: number) =>
    completeLnReceive(deps, q, txn, paidSats, at)

  /**
   * A receive settled inside the service whose invoice the send's follow-up could not cancel on the
   * node (it only then gets a next check): cancel it now, or credit the outside payment that beat
   * the cancel. Retried while the node cannot answer.
   */
  async function cancelOnNode(txn: Txn, paymentHash: string): Promise<void> {
    try {
      await rails.lightning.cancelInvoice(paymentHash)
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      if (err.code === 'invoice_already_settled') await creditSecondPayment(deps, paymentHash)
      else if (err.retryable) return checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
      // Any other refusal (the node no longer has the invoice) leaves nothing that can be paid.
    }
    await scheduleCheck(deps.db, txn.id, null, 'exact', { state: 'completed' })
  }

  return {
    kind: 'ln_receive',
    async quote({ input }) {
      return receiveQuote(input, rule, { paymentRequest: null, invoicePageUrl: null })
    },

    async prepareConfirm(txn) {
      const account = await deps.accounts.get(txn.accountId)
      const issued = await nodeCall('Lightning node', () =>
        rails.lightning.createInvoice({
          amountMsat: txn.srcAmountMinor * MSAT_PER_SAT,
          description: `svcpay ${account?.displayName ?? ''}`.trim(),
          expirySeconds: config.invoiceExpiryS,
        }),
      )
      const decoded = decodeInvoice(issued.paymentRequest)
      assert(!('error' in decoded), 'the node issued an invoice we can read')
      return {
        ...issued,
        paymentRequest: canonicalInvoice(issued.paymentRequest),
        expiresAtMs: decoded.expiresAtMs,
      }
    },

    async confirm(_q, txn, ctx) {
      const issued = ctx.prepared as { paymentRequest: string; paymentHash: string; expiresAtMs: number }
      assert(issued, 'the invoice was issued before confirm')
      const pageId = newPageId()
      return ctx.transition('srccreated', {
        srcDetails: {
          paymentRequest: issued.paymentRequest,
          invoicePageUrl: invoicePageUrl(config, pageId),
        },
        railRef: issued.paymentHash,
        pageId: pageId,
        expiresAtMs: issued.expiresAtMs,
        nextCheckAtMs: ctx.now + INVOICE_POLL.minMs,
      })
    },

    async advance(txn) {
      if (txn.state === 'completed' && txn.railRef) return cancelOnNode(txn, txn.railRef)
      if (txn.state !== 'srccreated' || !txn.railRef) return
      const at = now()
      let invoice
      try {
        invoice = await rails.lightning.lookupInvoice(txn.railRef)
      } catch (err) {
        if (!(err instanceof RailFailure)) throw err
        await checkAgainAt(deps.db, txn, at + RAIL_RETRY_MS)
        return
      }
      if (invoice.state === 'settled') {
        const paidSats = invoice.amountPaidMsat / MSAT_PER_SAT
        await deps.transactions().apply(txn.id, async (q, t) => {
          if (t.state === 'srccreated') await complete(q, t, paidSats, now())
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
    },
  }
}
