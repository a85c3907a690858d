import type { Config } from '../config/config.js'
import { decodeInvoice, type DecodedInvoice } from './bolt11.js'
import { formatMinor, ceilDiv } from '../shared/amount.js'
import type { CreateInput, Quote, QuoteContext } from '../transactions/flow.js'
import { requestedAmount, sameCurrencySendQuote, type Requested } from '../transactions/money.js'
import { isFlowRefusal, isMoneyError, type MoneyError } from '../transactions/errors.js'
import type { BitcoinDeps } from '../bitcoin/common.js'
import { canonicalInvoice, internalInvoiceIssue, MSAT_PER_SAT, receiveFor } from './invoices.js'
import { lnSendError, type LnSendError } from './errors.js'

/** The routing-fee limit of a send: the larger of 10 sats and 0.5% of the amount. */
export const ROUTING_FEE_MIN_SATS = 10n
export const ROUTING_FEE_BPS = 50n

export const PAYMENT_REQUEST_FIELD = 'destReq.reqDetails.paymentRequest'

/** The request field an amount came in, as the contract's `details[].field` spells it. */
const amountField = (requested: Requested | undefined) =>
  requested?.side === 'src' ? 'sourceReq.amtRequested' : 'destReq.amtRequested'

export function routingFeeLimitSats(amountSats: bigint): bigint {
  const pct = ceilDiv(amountSats * ROUTING_FEE_BPS, 10_000n)
  return pct > ROUTING_FEE_MIN_SATS ? pct : ROUTING_FEE_MIN_SATS
}

/** The invoice of a send request, checked for this service's network and still unexpired at `at`. */
export function parseInvoice(
  network: Config['network'],
  input: CreateInput,
  at: number,
): { text: string; decoded: DecodedInvoice } | LnSendError {
  const raw = input.destReq.reqDetails?.paymentRequest
  if (typeof raw !== 'string' || raw.trim() === '')
    return lnSendError('invoice_missing', PAYMENT_REQUEST_FIELD, 'is required: a BOLT11 invoice')
  // BOLT11 is bech32: all lower or all upper case (QR codes use upper), never mixed. The check runs
  // before the text is lower-cased for storage, which would hide it.
  const written = raw.trim().replace(/^lightning:/i, '')
  if (written !== written.toLowerCase() && written !== written.toUpperCase()) {
    return lnSendError(
      'invoice_mixed_case',
      PAYMENT_REQUEST_FIELD,
      'mixed case: a BOLT11 invoice is written all in lower case or all in upper case',
    )
  }
  const text = canonicalInvoice(raw)
  const decoded = decodeInvoice(text)
  if ('error' in decoded) return lnSendError('invoice_unreadable', PAYMENT_REQUEST_FIELD, decoded.error)
  if (decoded.network !== network) {
    return lnSendError(
      'invoice_wrong_network',
      PAYMENT_REQUEST_FIELD,
      `the invoice is for ${decoded.network}; this service runs on ${network}`,
    )
  }
  if (decoded.expiresAtMs <= at)
    return lnSendError('invoice_expired', PAYMENT_REQUEST_FIELD, 'the invoice has expired')
  return { text, decoded }
}

/**
 * The amount a send pays: the invoice's own, which a requested amount must then match and fees
 * cannot come out of; or, for an invoice without one, the requested amount.
 */
export function invoiceAmountSats(
  invoiceMsat: bigint | null,
  requested: Requested | undefined,
  deductFees: boolean,
): bigint | LnSendError {
  if (invoiceMsat === null) {
    if (!requested)
      return lnSendError(
        'amount_missing',
        'destReq.amtRequested',
        'the invoice has no amount: set amtRequested',
      )
    return requested.minor
  }
  if (invoiceMsat % MSAT_PER_SAT !== 0n)
    return lnSendError(
      'invoice_fractional_sat',
      PAYMENT_REQUEST_FIELD,
      'the amount has a fraction of a satoshi',
    )
  const amountSats = invoiceMsat / MSAT_PER_SAT
  if (requested && requested.minor !== amountSats) {
    return lnSendError(
      'amount_not_invoice_amount',
      amountField(requested),
      `does not match the invoice amount of ${formatMinor(amountSats, 'BTC')} BTC`,
    )
  }
  if (deductFees) {
    return lnSendError(
      'deduct_from_fixed_amount',
      'deductNetworkFeesFromDest',
      'cannot apply to an invoice with a fixed amount',
    )
  }
  return amountSats
}

/**
 * The quote of a Lightning send: the invoice checked, the amount it or the request fixes, and the
 * routing-fee limit held on top, except for an invoice of ours, which is settled with no route.
 */
export async function quoteLnSend(
  deps: Pick<BitcoinDeps, 'db' | 'config'>,
  { input, now: at }: QuoteContext,
): Promise<Quote | MoneyError | LnSendError> {
  const invoice = parseInvoice(deps.config.network, input, at)
  if (isFlowRefusal(invoice)) return invoice
  const { text, decoded } = invoice
  const requested = requestedAmount(input, { optional: true })
  if (isMoneyError(requested)) return requested
  const amountSats = invoiceAmountSats(decoded.amountMsat, requested, input.deductNetworkFeesFromDest)
  if (typeof amountSats !== 'bigint') return amountSats
  // An invoice of ours is settled inside the service: no route, so no routing fee.
  const receive = await receiveFor(deps.db, decoded.paymentHash, false)
  if (receive) {
    const issue = internalInvoiceIssue(receive, text, at)
    if (issue) return lnSendError('own_invoice_unpayable', PAYMENT_REQUEST_FIELD, issue.issue)
    if (receive.srcAmountMinor !== amountSats) {
      return lnSendError('own_invoice_amount', amountField(requested), 'must be the amount of the invoice')
    }
  }
  const networkFee = receive ? 0n : routingFeeLimitSats(amountSats)
  return sameCurrencySendQuote({
    requested: { side: 'dest', minor: amountSats },
    ccy: 'BTC',
    feeRule: deps.config.fees.lightning_send!,
    networkFee,
    deduct: input.deductNetworkFeesFromDest,
    destDetails: { paymentRequest: text, paymentHash: decoded.paymentHash },
  })
}
