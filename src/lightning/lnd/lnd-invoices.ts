/** Receiving on the LND rail: invoices issued (AddInvoice), looked up and canceled. */
import { TRANSPORT_CODES } from '../../rails/http-json.js'
import {
  RailFailure,
  type LightningInvoiceIssued,
  type LightningInvoiceState,
  type LightningRail,
} from '../../rails/rail.js'
import { assert } from '../../shared/assert.js'
import type { LndDeps } from './lnd-deps.js'
import { checkPaymentHash, GRPC, intString, lndFailure } from './lnd-http.js'

/** `LightningRail.createInvoice`. */
export async function createInvoice(
  deps: LndDeps,
  { amountMsat, description, descriptionHash, expirySeconds }: Parameters<LightningRail['createInvoice']>[0],
): Promise<LightningInvoiceIssued> {
  assert(amountMsat > 0n, 'invoice amount must be positive')
  const res = await deps.call('POST', '/v1/invoices', {
    value_msat: amountMsat.toString(),
    memo: description,
    // lnrpc/lightning.proto Invoice.description_hash (bytes, base64 in JSON): with it,
    // invoicesrpc/addinvoice.go writes the `h` field and keeps the memo out of the invoice.
    ...(descriptionHash ? { description_hash: Buffer.from(descriptionHash, 'hex').toString('base64') } : {}),
    expiry: String(expirySeconds),
    // Route hints for private channels (lnrpc.Invoice.private; invoicesrpc/addinvoice.go
    // adds up to 20 hop hints), without which a node with only unannounced channels is
    // unreachable.
    private: deps.privateInvoices,
  })
  if ('error' in res) throw lndFailure(res.error, 'add invoice')
  return issuedInvoice(res.ok)
}

/** AddInvoice's answer read: the payment request and the hash (base64 `r_hash`) as hex. */
export function issuedInvoice(answer: Record<string, unknown>): LightningInvoiceIssued {
  const hash = Buffer.from(String(answer.r_hash ?? ''), 'base64')
  const paymentRequest = answer.payment_request
  if (hash.length !== 32 || typeof paymentRequest !== 'string' || paymentRequest === '') {
    throw new RailFailure(
      TRANSPORT_CODES.badResponse,
      'add invoice: answer lacks r_hash or payment_request',
      true,
    )
  }
  return { paymentRequest, paymentHash: hash.toString('hex') }
}

/** `LightningRail.lookupInvoice`. */
export async function lookupInvoice(deps: LndDeps, paymentHash: string): Promise<LightningInvoiceState> {
  checkPaymentHash(paymentHash)
  const res = await deps.call('GET', `/v1/invoice/${paymentHash}`)
  if ('error' in res) {
    const { error } = res
    // rpcserver.go LookupInvoice: ErrInvoiceNotFound is NotFound (HTTP 404).
    if (error.code === GRPC.notFound || /unable to locate invoice/.test(error.message)) {
      throw new RailFailure('invoice_not_found', `lookup invoice: ${error.message}`, false)
    }
    throw lndFailure(error, 'lookup invoice')
  }
  return invoiceState(res.ok)
}

/** What an `lnrpc.Invoice` says: paid (and how much), canceled, or still open. */
export function invoiceState(invoice: Record<string, unknown>): LightningInvoiceState {
  const state = String(invoice.state)
  const amountPaidMsat = intString(invoice.amt_paid_msat ?? '0', 'amt_paid_msat')
  if (state === 'SETTLED') return { state: 'settled', amountPaidMsat }
  if (state === 'CANCELED') return { state: 'canceled', amountPaidMsat: 0n }
  // ACCEPTED is a hold invoice whose HTLCs are locked in but not settled: not paid yet.
  if (state === 'OPEN' || state === 'ACCEPTED') return { state: 'open', amountPaidMsat: 0n }
  throw new RailFailure(TRANSPORT_CODES.badResponse, `lookup invoice: unknown state ${state}`, true)
}

/** `LightningRail.cancelInvoice`. */
export async function cancelInvoice(deps: LndDeps, paymentHash: string): Promise<void> {
  checkPaymentHash(paymentHash)
  const res = await deps.call('POST', '/v2/invoices/cancel', {
    payment_hash: Buffer.from(paymentHash, 'hex').toString('base64'),
  })
  if (!('error' in res)) return
  const { error } = res
  // invoices/invoiceregistry.go cancelInvoiceImpl answers success for an invoice already
  // canceled; older nodes said "invoice already canceled". Either way it is canceled.
  if (/already canceled/i.test(error.message)) return
  // A settled invoice cannot be canceled (invoices/update_invoice.go: ErrInvoiceAlreadySettled,
  // gRPC Unknown): the payer's money has arrived, and the caller must credit it.
  if (/already settled/i.test(error.message)) {
    throw new RailFailure('invoice_already_settled', `cancel invoice: ${error.message}`, false)
  }
  throw lndFailure(error, 'cancel invoice')
}
