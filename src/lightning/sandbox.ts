import { randomBytes } from 'node:crypto'
import { sha256 } from '@noble/hashes/sha2.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import type { Db, Queryable } from '../db/db.js'
import type { Network } from '../config/network.js'
import type {
  LightningInvoiceIssued,
  LightningInvoiceState,
  LightningPaymentState,
  LightningRail,
} from '../rails/rail.js'
import { decodeInvoice, encodeInvoice } from './bolt11.js'
import { RailFailure } from '../rails/rail.js'
import { sandboxLightningPayments, sandboxLightningReserves } from '../rails/sandbox-reserves.js'
import { sql } from '../db/sql.js'

/**
 * The sandbox Lightning network: our node and the rest of the world in one simulation, kept in the
 * database (migration 002) so that every instance shares it and it survives restarts. It signs real
 * BOLT11 invoices: ours with the service's node key, outside ones with a second key standing for
 * some other node. Payments settle at once; their routing fee is a fixed 1 sat plus 0.1%.
 */
export interface SandboxLightningRail extends LightningRail {
  /** The outside node's public key (hex), the payee of invoices made by `createOutsideInvoice`. */
  readonly outsideNodePublicKey: string
  /** Issue an invoice from an outside node for sends to pay; `fail` makes every payment to it fail. */
  createOutsideInvoice(input: {
    amountMsat?: bigint
    outcome: 'succeed' | 'fail'
    /** A LUD-06 payee's invoice commits to sha256 of its metadata instead of a description. */
    descriptionHash?: Uint8Array
  }): Promise<LightningInvoiceIssued>
  /**
   * An outside payer pays one of our invoices, inside the caller's database transaction. Returns
   * the issue a person can act on when it cannot be paid.
   */
  payOurInvoice(
    q: Queryable,
    paymentRequest: string,
  ): Promise<{ ok: true; paymentHash: string; amountPaidMsat: bigint } | { ok: false; issue: string }>
}

/** Routing fee of a sandbox payment: a base fee of 1 sat and 1,000 parts per million. */
const BASE_FEE_MSAT = 1_000n
const FEE_PPM = 1_000n
const OUTSIDE_INVOICE_EXPIRY_S = 3_600

interface InvoiceRow {
  payment_hash: string
  payment_request: string
  preimage: string
  amount_msat: bigint | null
  ours: boolean
  outcome: 'succeed' | 'fail'
  state: 'open' | 'settled' | 'canceled'
  amount_paid_msat: bigint
  expires_at: bigint
}

interface PaymentRow {
  status: 'succeeded' | 'failed'
  preimage: string | null
  reason: string | null
  fee_msat: bigint
}

export function createSandboxLightningRail(deps: {
  db: Db
  network: Network
  nodePrivateKey: Uint8Array
  now?: () => number
}): SandboxLightningRail {
  const { db, network } = deps
  const now = deps.now ?? Date.now
  // The outside node's key is derived from ours so that it, too, survives restarts without storage.
  const outsideKey = sha256(
    new Uint8Array([...utf8ToBytes('svcpay sandbox outside node'), ...deps.nodePrivateKey]),
  )
  const outsidePublicKey = bytesToHex(secp256k1.getPublicKey(outsideKey, true))

  async function issue(
    input: {
      amountMsat?: bigint
      description: string
      descriptionHash?: Uint8Array
      expirySeconds: number
      ours: boolean
      outcome: 'succeed' | 'fail'
    },
    key: Uint8Array,
  ): Promise<LightningInvoiceIssued> {
    const preimage = new Uint8Array(randomBytes(32))
    const paymentHash = sha256(preimage)
    const timestampSec = Math.floor(now() / 1000)
    const paymentRequest = encodeInvoice(
      {
        network,
        ...(input.amountMsat === undefined ? {} : { amountMsat: input.amountMsat }),
        paymentHash,
        paymentSecret: new Uint8Array(randomBytes(32)),
        description: input.description,
        ...(input.descriptionHash === undefined ? {} : { descriptionHash: input.descriptionHash }),
        expirySeconds: input.expirySeconds,
        timestampSec,
      },
      key,
    )
    const hash = bytesToHex(paymentHash)
    await db.query(
      sql`INSERT INTO sandbox_ln_invoices
         (payment_hash, payment_request, preimage, amount_msat, ours, outcome, state, expires_at, created_at)
       VALUES (${hash}, ${paymentRequest}, ${bytesToHex(preimage)}, ${input.amountMsat ?? null}, ${input.ours}, ${input.outcome}, 'open', ${(timestampSec + input.expirySeconds) * 1000}, ${now()})`,
    )
    return { paymentRequest, paymentHash: hash }
  }

  const paymentState = (p: PaymentRow): LightningPaymentState =>
    p.status === 'succeeded'
      ? { status: 'succeeded', preimage: p.preimage!, feeMsat: p.fee_msat }
      : { status: 'failed', reason: p.reason ?? 'error' }

  /** Decide the fate of a new payment; the invoice row is locked by the caller. */
  function outcomeOf(
    invoice: InvoiceRow | undefined,
    paymentRequest: string,
    amountMsat: bigint,
    feeLimitMsat: bigint,
  ): { status: 'succeeded'; feeMsat: bigint } | { status: 'failed'; reason: string } {
    // An invoice the network does not know, or a text altered after signing, names a node nobody can reach.
    if (!invoice || invoice.payment_request !== normalise(paymentRequest))
      return { status: 'failed', reason: 'route_not_found' }
    // Our own invoices are settled inside the service and never reach the node; a node refuses to pay itself.
    if (invoice.ours) return { status: 'failed', reason: 'self_payment' }
    if (invoice.outcome === 'fail') return { status: 'failed', reason: 'route_not_found' }
    if (invoice.state === 'settled') return { status: 'failed', reason: 'invoice_already_paid' }
    if (invoice.state === 'canceled' || invoice.expires_at <= BigInt(now()))
      return { status: 'failed', reason: 'invoice_expired' }
    if (invoice.amount_msat !== null && amountMsat < invoice.amount_msat) {
      return { status: 'failed', reason: 'incorrect_payment_details' }
    }
    const feeMsat = BASE_FEE_MSAT + (amountMsat * FEE_PPM) / 1_000_000n
    if (feeMsat > feeLimitMsat) return { status: 'failed', reason: 'route_not_found' }
    return { status: 'succeeded', feeMsat }
  }

  return {
    name: 'sandbox',
    network,
    outsideNodePublicKey: outsidePublicKey,

    // What the sandbox node holds, from its own records (reconciliation, src/reconcile).
    reserves: () => sandboxLightningReserves(db),
    payments: (sinceMs) => sandboxLightningPayments(db, sinceMs),

    createInvoice({ descriptionHash, ...input }) {
      return issue(
        {
          ...input,
          ...(descriptionHash === undefined ? {} : { descriptionHash: hexToBytes(descriptionHash) }),
          ours: true,
          outcome: 'succeed',
        },
        deps.nodePrivateKey,
      )
    },

    createOutsideInvoice(input) {
      return issue(
        {
          ...(input.amountMsat === undefined ? {} : { amountMsat: input.amountMsat }),
          description: `sandbox outside invoice (${input.outcome})`,
          ...(input.descriptionHash === undefined ? {} : { descriptionHash: input.descriptionHash }),
          expirySeconds: OUTSIDE_INVOICE_EXPIRY_S,
          ours: false,
          outcome: input.outcome,
        },
        outsideKey,
      )
    },

    async lookupInvoice(paymentHash): Promise<LightningInvoiceState> {
      const { rows } = await db.query<InvoiceRow>(
        sql`SELECT * FROM sandbox_ln_invoices WHERE payment_hash = ${paymentHash}`,
      )
      const inv = rows[0]
      if (!inv) return { state: 'canceled', amountPaidMsat: 0n }
      // Like LND, an open invoice past its expiry is cancelled: it can no longer be paid.
      const state = inv.state === 'open' && inv.expires_at <= BigInt(now()) ? 'canceled' : inv.state
      return { state, amountPaidMsat: inv.amount_paid_msat }
    },

    async cancelInvoice(paymentHash): Promise<void> {
      await db.query(
        sql`UPDATE sandbox_ln_invoices SET state = 'canceled' WHERE payment_hash = ${paymentHash} AND state = 'open'`,
      )
      const { rows } = await db.query<{ state: string }>(
        sql`SELECT state FROM sandbox_ln_invoices WHERE payment_hash = ${paymentHash}`,
      )
      // Like LND: a settled invoice cannot be cancelled (its money arrived); a cancelled one can,
      // again and again.
      if (rows[0]?.state === 'settled')
        throw new RailFailure('invoice_already_settled', 'cancel invoice: invoice already settled', false)
    },

    async sendPayment({ paymentRequest, amountMsat, feeLimitMsat }) {
      const decoded = decodeInvoice(paymentRequest)
      if ('error' in decoded) return { status: 'failed', reason: 'invalid_payment_request' }
      const hash = decoded.paymentHash
      return db.tx(async (q) => {
        const existing = await q.query<PaymentRow>(
          sql`SELECT * FROM sandbox_ln_payments WHERE payment_hash = ${hash} FOR UPDATE`,
        )
        if (existing.rows[0]) return paymentState(existing.rows[0])
        const inv = (
          await q.query<InvoiceRow>(
            sql`SELECT * FROM sandbox_ln_invoices WHERE payment_hash = ${hash} FOR UPDATE`,
          )
        ).rows[0]
        const outcome = outcomeOf(inv, paymentRequest, amountMsat, feeLimitMsat)
        const at = now()
        const preimage = outcome.status === 'succeeded' ? inv!.preimage : null
        // A concurrent first payment of the same hash wins the insert; this one reports its result.
        const inserted = await q.query(
          sql`INSERT INTO sandbox_ln_payments (payment_hash, payment_request, amount_msat, fee_msat, status, preimage, reason, created_at)
           VALUES (${hash}, ${paymentRequest}, ${amountMsat}, ${outcome.status === 'succeeded' ? outcome.feeMsat : 0n}, ${outcome.status}, ${preimage}, ${outcome.status === 'failed' ? outcome.reason : null}, ${at}) ON CONFLICT (payment_hash) DO NOTHING`,
        )
        if (inserted.rowCount === 0) {
          const row = (
            await q.query<PaymentRow>(sql`SELECT * FROM sandbox_ln_payments WHERE payment_hash = ${hash}`)
          ).rows[0]!
          return paymentState(row)
        }
        if (outcome.status === 'succeeded') {
          await q.query(
            sql`UPDATE sandbox_ln_invoices SET state = 'settled', amount_paid_msat = ${amountMsat}, settled_at = ${at} WHERE payment_hash = ${hash}`,
          )
          return { status: 'succeeded', preimage: preimage!, feeMsat: outcome.feeMsat }
        }
        return { status: 'failed', reason: outcome.reason }
      })
    },

    async lookupPayment(paymentHash) {
      const { rows } = await db.query<PaymentRow>(
        sql`SELECT * FROM sandbox_ln_payments WHERE payment_hash = ${paymentHash}`,
      )
      return rows[0] ? paymentState(rows[0]) : { status: 'unknown' }
    },

    async payOurInvoice(q, paymentRequest) {
      const decoded = decodeInvoice(paymentRequest)
      if ('error' in decoded) return { ok: false, issue: decoded.error }
      if (decoded.network !== network)
        return { ok: false, issue: `the invoice is for ${decoded.network}, not ${network}` }
      const { rows } = await q.query<InvoiceRow>(
        sql`SELECT * FROM sandbox_ln_invoices WHERE payment_hash = ${decoded.paymentHash} AND ours FOR UPDATE`,
      )
      const inv = rows[0]
      if (!inv || inv.payment_request !== normalise(paymentRequest)) {
        return { ok: false, issue: 'not an invoice issued by this service' }
      }
      if (inv.state === 'settled') return { ok: false, issue: 'the invoice is already paid' }
      if (inv.state === 'canceled' || inv.expires_at <= BigInt(now()))
        return { ok: false, issue: 'the invoice has expired' }
      // The service never issues zero-amount invoices, so the payer pays the amount asked.
      const paid = inv.amount_msat ?? 0n
      await q.query(
        sql`UPDATE sandbox_ln_invoices SET state = 'settled', amount_paid_msat = ${paid}, settled_at = ${now()} WHERE payment_hash = ${inv.payment_hash}`,
      )
      return { ok: true, paymentHash: inv.payment_hash, amountPaidMsat: paid }
    },
  }
}

/** Invoices are compared as the canonical lower-case text, without a `lightning:` scheme. */
const normalise = (paymentRequest: string) => paymentRequest.replace(/^lightning:/i, '').toLowerCase()
