import { createHash } from 'node:crypto'
import type { Queryable } from '../db/db.js'
import { newId } from '../shared/ids.js'
import { decodeInvoice, type DecodedInvoice } from '../rails/lightning/bolt11.js'
import { RailFailure, type LightningPaymentState } from '../rails/rail.js'
import { postEntry, systemAccountId, voidHolds, type Posting } from '../ledger/ledger.js'
import { formatMinor, ceilDiv } from '../shared/amount.js'
import { assert } from '../shared/assert.js'
import { fieldError } from '../shared/errors.js'
import { ONE } from '../rates/fx.js'
import type { CreateInput, Flow } from './flow.js'
import { scheduleCheck, setRailRef, type TxnRow } from './repository.js'
import { requestedAmount, walletAmounts, walletDebit } from './money.js'
import { isMoneyError } from './errors.js'
import {
  checkAgainAt,
  invoicePageUrl,
  newPageId,
  nodeCall,
  pollDelayMs,
  receivePostings,
  receiveFee,
  receiveQuote,
  wakeWorkers,
  type BitcoinDeps,
} from './bitcoin-common.js'

const MSAT_PER_SAT = 1_000n
/** The routing-fee limit of a send: the larger of 10 sats and 0.5% of the amount. */
export const ROUTING_FEE_MIN_SATS = 10n
export const ROUTING_FEE_BPS = 50n
/** An open invoice is looked at every 2 s at first, backing off to every 30 s; a sandbox payment wakes it at once. */
const INVOICE_POLL = { minMs: 2_000, maxMs: 30_000 }
/** After its expiry a node may still settle an invoice whose payment was already arriving; we wait this long. */
const INVOICE_EXPIRY_GRACE_MS = 60_000
/** A payment in flight is asked about again this often. */
const PAYMENT_POLL_MS = 2_000
/** A node that could not be reached is tried again after this long. */
const RAIL_RETRY_MS = 15_000
/** How long a receive's own check waits while an internal send cancels its invoice and settles it. */
const SETTLE_INSIDE_MS = 30_000

const PAYMENT_REQUEST_FIELD = 'destReq.reqDetails.paymentRequest'

export function routingFeeLimitSats(amountSats: bigint): bigint {
  const pct = ceilDiv(amountSats * ROUTING_FEE_BPS, 10_000n)
  return pct > ROUTING_FEE_MIN_SATS ? pct : ROUTING_FEE_MIN_SATS
}

/** Canonical invoice text: no `lightning:` scheme, lower case (BOLT11 is case-insensitive). */
export const canonicalInvoice = (text: string) =>
  text
    .trim()
    .replace(/^lightning:/i, '')
    .toLowerCase()

/** Our own receive waiting on this payment hash, if the invoice is one this service issued. */
async function receiveFor(q: Queryable, paymentHash: string, lock: boolean): Promise<TxnRow | undefined> {
  const { rows } = await q.query<TxnRow>(
    `SELECT * FROM transactions WHERE rail_ref = $1 AND kind = 'ln_receive' ${lock ? 'FOR UPDATE' : ''}`,
    [paymentHash],
  )
  return rows[0]
}

/** Why an invoice of ours cannot be paid now, or undefined when it can. */
function internalInvoiceIssue(
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

/**
 * Lightning send: quote checks the invoice and the amount rules; confirm holds amount + fees and
 * either settles an invoice of this service at once (both transactions complete, no routing fee)
 * or leaves the payment to the worker (srccreated). The worker pays through the node, idempotent
 * by payment hash: completed with the preimage and the unused routing fee returned, or failed with
 * the hold released.
 */
export function lnSendFlow(deps: BitcoinDeps): Flow {
  const { config, rails } = deps
  const now = deps.now ?? Date.now

  /**
   * Whether confirming `txn` now would settle `receive` inside the service: the invoice is still
   * payable, for this amount, and the send's funds are already held. Without a hold (a quote made
   * before the wallet was funded) the confirm may still fail for want of funds, and an invoice is
   * not cancelled on the node for a payment that may never come.
   */
  async function willSettleInside(txn: TxnRow, receive: TxnRow): Promise<boolean> {
    const paymentRequest = String(txn.dest_details.paymentRequest)
    if (internalInvoiceIssue(receive, paymentRequest, now()) || receive.src_amount !== txn.dest_amount)
      return false
    const { rows } = await deps.db.query<{ held: string }>(
      `SELECT coalesce(sum(amount), 0)::text AS held FROM holds WHERE txn_id = $1 AND status = 'pending'`,
      [txn.id],
    )
    return BigInt(rows[0]?.held ?? '0') >= walletDebit(txn)
  }
  const rule = config.fees.lightning_send!

  function parseInvoice(input: CreateInput, at: number): { text: string; decoded: DecodedInvoice } {
    const raw = input.destReq.reqDetails?.paymentRequest
    if (typeof raw !== 'string' || raw.trim() === '') {
      throw fieldError('invalid_payment_request', PAYMENT_REQUEST_FIELD, 'is required: a BOLT11 invoice')
    }
    // BOLT11 is bech32: all lower or all upper case (QR codes use upper), never mixed. The check runs
    // before the text is lower-cased for storage, which would hide it.
    const written = raw.trim().replace(/^lightning:/i, '')
    if (written !== written.toLowerCase() && written !== written.toUpperCase()) {
      throw fieldError(
        'invalid_payment_request',
        PAYMENT_REQUEST_FIELD,
        'mixed case: a BOLT11 invoice is written all in lower case or all in upper case',
      )
    }
    const text = canonicalInvoice(raw)
    const decoded = decodeInvoice(text)
    if ('error' in decoded) throw fieldError('invalid_payment_request', PAYMENT_REQUEST_FIELD, decoded.error)
    if (decoded.network !== config.network) {
      throw fieldError(
        'invalid_payment_request',
        PAYMENT_REQUEST_FIELD,
        `the invoice is for ${decoded.network}; this service runs on ${config.network}`,
      )
    }
    if (decoded.expiresAtMs <= at)
      throw fieldError('invalid_payment_request', PAYMENT_REQUEST_FIELD, 'the invoice has expired')
    return { text, decoded }
  }

  /** The wallet pays `walletDebit` less whatever part of the fee limit the route did not use. */
  function sendPostings(txn: TxnRow, walletId: string, routingFeeSats: bigint): Posting[] {
    const debit = walletDebit(txn) - (txn.src_network_fee - routingFeeSats)
    return [
      { accountId: walletId, ccy: 'BTC', amount: -debit },
      { accountId: systemAccountId('fees', 'BTC'), ccy: 'BTC', amount: txn.src_fee },
      { accountId: systemAccountId('lightning', 'BTC'), ccy: 'BTC', amount: debit - txn.src_fee },
    ]
  }

  async function completeSend(
    q: Queryable,
    txn: TxnRow,
    routingFeeSats: bigint,
    preimage: string | null,
    at: number,
  ) {
    const wallet = await deps.accounts.walletFor(q, txn.account_id, 'BTC')
    assert(wallet, 'the sending account has a BTC wallet')
    await postEntry(q, {
      txnId: txn.id,
      kind: 'ln_send',
      now: at,
      settleHolds: true,
      postings: sendPostings(txn, wallet.id, routingFeeSats),
    })
    return {
      src_network_fee: routingFeeSats,
      src_settled: txn.src_amount,
      dest_settled: txn.dest_amount,
      dest_details: { ...txn.dest_details, preimage },
    }
  }

  async function fail(txnId: string, reason: string) {
    await deps.transactions().apply(txnId, async (q, t, move) => {
      if (t.state !== 'srccreated') return
      await voidHolds(q, t.id, now())
      await move('failed', { msg: reason })
    })
  }

  return {
    kind: 'ln_send',
    async quote({ input, now: at }) {
      const { text, decoded } = parseInvoice(input, at)
      const requested = requestedAmount(input, { optional: true })
      if (isMoneyError(requested)) return requested
      const requestedField = requested?.side === 'src' ? 'sourceReq.amtRequested' : 'destReq.amtRequested'
      let amountSats: bigint
      if (decoded.amountMsat !== null) {
        if (decoded.amountMsat % MSAT_PER_SAT !== 0n) {
          throw fieldError(
            'invalid_payment_request',
            PAYMENT_REQUEST_FIELD,
            'the amount has a fraction of a satoshi',
          )
        }
        amountSats = decoded.amountMsat / MSAT_PER_SAT
        if (requested && requested.minor !== amountSats) {
          throw fieldError(
            'invalid_payment_request',
            requestedField,
            `does not match the invoice amount of ${formatMinor(amountSats, 'BTC')} BTC`,
          )
        }
        if (input.deductNetworkFeesFromDest) {
          throw fieldError(
            'invalid_request',
            'deductNetworkFeesFromDest',
            'cannot apply to an invoice with a fixed amount',
          )
        }
      } else {
        if (!requested) {
          throw fieldError(
            'invalid_payment_request',
            'destReq.amtRequested',
            'the invoice has no amount: set amtRequested',
          )
        }
        amountSats = requested.minor
      }
      // An invoice of ours is settled inside the service: no route, so no routing fee.
      const receive = await receiveFor(deps.db, decoded.paymentHash, false)
      if (receive) {
        const issue = internalInvoiceIssue(receive, text, at)
        if (issue) throw fieldError('invalid_payment_request', PAYMENT_REQUEST_FIELD, issue.issue)
        if (receive.src_amount !== amountSats) {
          throw fieldError('invalid_payment_request', requestedField, 'must be the amount of the invoice')
        }
      }
      const networkFee = receive ? 0n : routingFeeLimitSats(amountSats)
      const amounts = walletAmounts({
        requested: { side: 'dest', minor: amountSats },
        srcCcy: 'BTC',
        destCcy: 'BTC',
        fx: ONE,
        feeRule: rule,
        networkFee,
        deduct: input.deductNetworkFeesFromDest,
      })
      if (isMoneyError(amounts)) return amounts
      return {
        ...amounts,
        srcNetworkFee: networkFee,
        fxRate: ONE,
        srcDetails: {},
        destDetails: { paymentRequest: text, paymentHash: decoded.paymentHash },
        fromWallet: true,
      }
    },

    async prepareConfirm(txn) {
      // An invoice of ours is settled inside the service. Before that, it must stop being payable on
      // the node, or an outside payer could pay it too and nobody would be credited: cancel it there
      // first, then ask the node where it stands. Settled means an outside payer was first (the
      // worker has not seen it yet): the invoice is paid and this send fails. Cancelled means only
      // this settlement can pay it. No answer leaves it to the cancel after the settlement.
      const paymentHash = String(txn.dest_details.paymentHash)
      const receive = await receiveFor(deps.db, paymentHash, false)
      if (!receive) return { nodeSettled: false }
      if (await willSettleInside(txn, receive)) {
        // Keep the receive's own check off the node for a while, so that it does not take the
        // cancel for an expiry before this settlement commits.
        await scheduleCheck(deps.db, receive.id, now() + SETTLE_INSIDE_MS, 'latest', { state: 'srccreated' })
        try {
          await rails.lightning.cancelInvoice(paymentHash)
        } catch (err) {
          // LND refuses to cancel a settled invoice: an outside payer was first.
          if (err instanceof RailFailure && err.code === 'invoice_already_settled')
            return { nodeSettled: true }
        }
      }
      const onNode = await rails.lightning.lookupInvoice(paymentHash).catch(() => undefined)
      return { nodeSettled: onNode?.state === 'settled' }
    },

    async confirm(q, txn, ctx) {
      const paymentRequest = String(txn.dest_details.paymentRequest)
      const paymentHash = String(txn.dest_details.paymentHash)
      const receive = await receiveFor(q, paymentHash, true)
      if (receive && (ctx.prepared as { nodeSettled?: boolean } | undefined)?.nodeSettled) {
        await voidHolds(q, txn.id, ctx.now)
        return ctx.transition('failed', { msg: 'invoice_already_paid', rail_ref: paymentHash })
      }
      if (!receive) {
        // The node pays a payment hash once and reports that one payment to every later call, so
        // a second transaction of ours for the same invoice would be charged for the first one's
        // payment. One transaction per hash goes out; the lock orders concurrent confirms.
        await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`ln_send:${paymentHash}`])
        const { rows: others } = await q.query<{ state: string }>(
          `SELECT state FROM transactions
            WHERE kind = 'ln_send' AND rail_ref = $1 AND id <> $2 AND state IN ('srccreated', 'completed')
            LIMIT 1`,
          [paymentHash, txn.id],
        )
        if (others[0]) {
          await voidHolds(q, txn.id, ctx.now)
          return ctx.transition('failed', {
            msg: others[0].state === 'completed' ? 'invoice_already_paid' : 'payment_in_flight',
            rail_ref: paymentHash,
          })
        }
        await wakeWorkers(q)
        return ctx.transition('srccreated', { rail_ref: paymentHash, next_check_at: ctx.now })
      }
      const issue = internalInvoiceIssue(receive, paymentRequest, ctx.now)
      if (issue || receive.src_amount !== txn.dest_amount) {
        await voidHolds(q, txn.id, ctx.now)
        return ctx.transition('failed', {
          msg: issue?.msg ?? 'incorrect_payment_details',
          rail_ref: paymentHash,
        })
      }
      // Both sides settle in this one database transaction: the sender's entry pays the Lightning
      // account, the receiver's entry is paid from it, so it nets to zero as if routed.
      const wallet = await deps.accounts.walletFor(q, receive.account_id, 'BTC')
      assert(wallet, 'the receiving account has a BTC wallet')
      const patch = await completeSend(q, txn, 0n, null, ctx.now)
      await postEntry(q, {
        txnId: receive.id,
        kind: 'ln_receive',
        now: ctx.now,
        postings: receivePostings('lightning', wallet.id, receive.src_amount, receive.src_fee),
      })
      await deps.repository.transition(
        q,
        receive,
        'completed',
        { src_settled: receive.src_amount, dest_settled: receive.dest_amount },
        {
          now: ctx.now,
        },
      )
      return ctx.transition('completed', {
        ...patch,
        dest_details: { ...patch.dest_details, internal: true },
        rail_ref: paymentHash,
      })
    },

    async afterConfirm(txn) {
      // An invoice of ours paid inside the service is still open on the node: cancel it there, so
      // that an outside payer cannot pay it a second time with nobody credited.
      if (txn.state === 'completed' && txn.dest_details.internal === true && txn.rail_ref) {
        const hash = txn.rail_ref
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
    },

    async advance(txn) {
      if (txn.state !== 'srccreated') return
      let result: LightningPaymentState
      try {
        // The node's record of the hash first: a payment it has (in flight, paid, failed) is
        // followed, never sent again. Sending again would be refused once the invoice expired
        // (LND checks the expiry before it looks for the payment) and would restart a failed one.
        result = await rails.lightning.lookupPayment(String(txn.dest_details.paymentHash))
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
      try {
        if (result.status === 'unknown') {
          result = await rails.lightning.sendPayment({
            paymentRequest: String(txn.dest_details.paymentRequest),
            amountMsat: txn.dest_amount * MSAT_PER_SAT,
            feeLimitMsat: txn.src_network_fee * MSAT_PER_SAT,
          })
        }
      } catch (err) {
        if (!(err instanceof RailFailure)) throw err
        if (err.retryable) await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
        else await fail(txn.id, err.code)
        return
      }
      if (result.status === 'succeeded') {
        let feeSats = ceilDiv(result.feeMsat, MSAT_PER_SAT)
        if (feeSats > txn.src_network_fee) {
          // A node must not exceed the limit it was given; if one does, the customer is still
          // charged no more than quoted and the difference is ours to look into.
          deps.log?.error(
            { txnId: txn.id, feeMsat: String(result.feeMsat) },
            'a payment exceeded its routing-fee limit',
          )
          feeSats = txn.src_network_fee
        }
        await deps.transactions().apply(txn.id, async (q, t, move) => {
          if (t.state !== 'srccreated') return
          const at = now()
          await move('completed', await completeSend(q, t, feeSats, result.preimage, at))
        })
        return
      }
      if (result.status === 'failed') return fail(txn.id, result.reason)
      await checkAgainAt(deps.db, txn, now() + PAYMENT_POLL_MS)
    },
  }
}
