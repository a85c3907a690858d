import { createHash } from 'node:crypto'
import type { Queryable } from '../db/db.js'
import { newId } from '../shared/ids.js'
import { decodeInvoice } from './bolt11.js'
import { RailFailure } from '../rails/rail.js'
import { postEntry } from '../ledger/ledger.js'
import { assert } from '../shared/assert.js'
import type { Flow } from '../transactions/flow.js'
import { scheduleCheck, setRailRef, type TxnRow } from '../transactions/repository.js'
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
export async function receiveFor(
  q: Queryable,
  paymentHash: string,
  lock: boolean,
): Promise<TxnRow | undefined> {
  const { rows } = await q.query<TxnRow>(
    `SELECT * FROM transactions WHERE rail_ref = $1 AND kind = 'ln_receive' ${lock ? 'FOR UPDATE' : ''}`,
    [paymentHash],
  )
  return rows[0]
}

/** Why an invoice of ours cannot be paid now, or undefined when it can. */
export function internalInvoiceIssue(
  receive: TxnRow,
  paymentRequest: string,
  now: number,
): { msg: string; issue: string } | undefined {
  if (receive.src_details.paymentRequest !== paymentRequest) {
    return {
      msg: 'invalid_payment_request',
      issue: 'does not match the invoice this service issued for that payment hash',
    }
  }
  if (receive.state === 'completed')
    return { msg: 'invoice_already_paid', issue: 'the invoice is already paid' }
  if (receive.state !== 'srccreated' || receive.expires_at <= BigInt(now)) {
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
  txn: TxnRow,
  paidSats: bigint,
  at: number,
): Promise<TxnRow> {
  const wallet = await deps.accounts.walletFor(q, txn.account_id, 'BTC')
  assert(wallet, 'the receiving account has a BTC wallet')
  // The quoted fee stands unless the payer paid less than it (a node may accept overpayment only).
  const fee = txn.src_fee > paidSats ? paidSats : txn.src_fee
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
    { src_settled: paidSats, dest_settled: paidSats - fee },
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
export async function creditSecondPayment(
  deps: BitcoinDeps,
  paymentHash: string,
): Promise<TxnRow | undefined> {
  const invoice = await deps.rails.lightning.lookupInvoice(paymentHash)
  if (invoice.state !== 'settled') return undefined
  const paidSats = invoice.amountPaidMsat / MSAT_PER_SAT
  if (paidSats <= 0n) return undefined
  const now = (deps.now ?? Date.now)()
  return deps.db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`ln_second:${paymentHash}`])
    const receive = await receiveFor(q, paymentHash, true)
    if (!receive) return undefined
    const { rows: done } = await q.query<TxnRow>(
      `SELECT * FROM transactions WHERE kind = 'deposit' AND rail_ref = $1`,
      [paymentHash],
    )
    if (done[0]) return done[0]
    const wallet = await deps.accounts.walletFor(q, receive.account_id, 'BTC')
    assert(wallet, 'the receiving account has a BTC wallet')
    const fee = receiveFee(deps.config.fees.lightning_receive!, paidSats)
    const at = BigInt(now)
    const row = await deps.repository.insertTxn(
      q,
      {
        id: newId('txn'),
        account_id: receive.account_id,
        ext_ref_id: null,
        request_hash: createHash('sha256').update(`ln_second:${paymentHash}`).digest('hex'),
        kind: 'deposit',
        state: 'srccreated',
        note: null,
        deduct_fees_from_dest: false,
        src_ccy: 'BTC',
        src_method: 'lightning',
        src_amount: paidSats,
        src_fee: fee,
        src_network_fee: 0n,
        src_details: { paymentHash, forTxnId: receive.id, secondPayment: true },
        src_created_at: at,
        src_updated_at: at,
        dest_ccy: 'BTC',
        dest_method: 'svcpay',
        dest_amount: paidSats - fee,
        dest_details: {},
        dest_created_at: at,
        dest_updated_at: at,
        fx_rate: '1',
        expires_at: at,
        kyc: null,
        source_of_funds: null,
        next_check_at: null,
        created_at: at,
        updated_at: at,
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
      { ...row, rail_ref: paymentHash },
      'completed',
      { src_settled: paidSats, dest_settled: paidSats - fee },
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
  const complete = (q: Queryable, txn: TxnRow, paidSats: bigint, at: number) =>
    completeLnReceive(deps, q, txn, paidSats, at)

  /**
   * A receive settled inside the service whose invoice the send's follow-up could not cancel on the
   * node (it only then gets a next check): cancel it now, or credit the outside payment that beat
   * the cancel. Retried while the node cannot answer.
   */
  async function cancelOnNode(txn: TxnRow, paymentHash: string): Promise<void> {
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
      const account = await deps.accounts.get(txn.account_id)
      const issued = await nodeCall('Lightning node', () =>
        rails.lightning.createInvoice({
          amountMsat: txn.src_amount * MSAT_PER_SAT,
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
        src_details: {
          paymentRequest: issued.paymentRequest,
          invoicePageUrl: invoicePageUrl(config, pageId),
        },
        rail_ref: issued.paymentHash,
        page_id: pageId,
        expires_at: BigInt(issued.expiresAtMs),
        next_check_at: ctx.now + INVOICE_POLL.minMs,
      })
    },

    async advance(txn) {
      if (txn.state === 'completed' && txn.rail_ref) return cancelOnNode(txn, txn.rail_ref)
      if (txn.state !== 'srccreated' || !txn.rail_ref) return
      const at = now()
      let invoice
      try {
        invoice = await rails.lightning.lookupInvoice(txn.rail_ref)
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
      if (invoice.state === 'canceled' || BigInt(at) >= txn.expires_at + BigInt(INVOICE_EXPIRY_GRACE_MS)) {
        await deps.transactions().apply(txn.id, async (_q, t, move) => {
          if (t.state === 'srccreated') await move('expired', { msg: 'invoice_expired' })
        })
        return
      }
      const until = Number(txn.expires_at) + INVOICE_EXPIRY_GRACE_MS
      const next = Math.min(at + pollDelayMs(Number(txn.updated_at), at, INVOICE_POLL), until)
      await checkAgainAt(deps.db, txn, Math.max(next, at + 1_000))
    },
  }
}
