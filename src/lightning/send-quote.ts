import type { DecodedInvoice } from './bolt11.js'
import { formatMinor, ceilDiv } from '../shared/amount.js'
import type { CreateInput, Quote, QuoteContext } from '../transactions/flow.js'
import { requestedAmount, sameCurrencySendQuote, type Requested } from '../transactions/money.js'
import { isFlowRefusal, isMoneyError, isRefusal, type MoneyError } from '../transactions/errors.js'
import type { LightningDeps } from './deps.js'
import { internalInvoiceIssue, MSAT_PER_SAT, receiveFor } from './invoices.js'
import { lnSendError, type LnSendError } from './errors.js'
import { COMMENT_FIELD, parseComment, payDestination } from './lnurl-pay.js'
import { resolvePayDestination } from './send-destination.js'
import { parseInvoice, PAYMENT_REQUEST_FIELD } from './send-invoice.js'
import type { LnSendDetails } from './send-details.js'

/** The routing-fee limit of a send: the larger of 10 sats and 0.5% of the amount. */
export const ROUTING_FEE_MIN_SATS = 10n
export const ROUTING_FEE_BPS = 50n

export { parseInvoice, PAYMENT_REQUEST_FIELD }

/** The request field an amount came in, as the contract's `details[].field` spells it. */
const amountField = (requested: Requested | undefined) =>
  requested?.side === 'src' ? 'sourceReq.amtRequested' : 'destReq.amtRequested'

export function routingFeeLimitSats(amountSats: bigint): bigint {
  const pct = ceilDiv(amountSats * ROUTING_FEE_BPS, 10_000n)
  return pct > ROUTING_FEE_MIN_SATS ? pct : ROUTING_FEE_MIN_SATS
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
 * The invoice a send pays: the request's own, or the one the payee's LNURL service issues for the
 * requested amount (an address or an LNURL has no amount of its own), with what named it.
 */
async function invoiceToPay(
  deps: Pick<LightningDeps, 'config' | 'lnurl'>,
  input: CreateInput,
  at: number,
): Promise<
  | { text: string; decoded: DecodedInvoice; named: Partial<LnSendDetails> }
  | { localUsername: string; named: Partial<LnSendDetails> }
  | LnSendError
  | MoneyError
> {
  const details = input.destReq.reqDetails
  // An LNURL of this service's own host may be http (the one it advertises on an http base URL).
  const dest = payDestination(details, new URL(deps.config.publicBaseUrl).host)
  if (isFlowRefusal(dest)) return dest
  if (dest.kind === 'invoice') {
    if (details?.comment !== undefined)
      return lnSendError('comment_not_accepted', COMMENT_FIELD, 'goes only with lnAddress or lnurl')
    const invoice = parseInvoice(deps.config.network, input, at)
    return isFlowRefusal(invoice) ? invoice : { ...invoice, named: {} }
  }
  const comment = parseComment(details?.comment)
  if (typeof comment === 'object') return comment
  const requested = requestedAmount(input, { optional: true })
  if (isMoneyError(requested)) return requested
  if (!requested)
    return lnSendError('amount_missing', 'destReq.amtRequested', 'is required to pay an address or an LNURL')
  // The payee's invoice will be for exactly this amount, so fees cannot come out of it. Refused
  // before the payee is asked for an invoice that would not be paid.
  if (input.deductNetworkFeesFromDest)
    return lnSendError(
      'deduct_from_fixed_amount',
      'deductNetworkFeesFromDest',
      'cannot apply to a payment to an address or an LNURL',
    )
  const invoice = await resolvePayDestination(deps, dest, requested.minor, comment, at)
  if (isFlowRefusal(invoice)) return invoice
  const named = dest.kind === 'address' ? { lnAddress: dest.lnAddress } : { lnurl: dest.lnurl }
  return { ...invoice, named: { ...named, ...(comment === undefined ? {} : { comment }) } }
}

/**
 * The quote of a Lightning send: the invoice checked (the request's own, or one fetched for an
 * address or LNURL), the amount it or the request fixes, and the routing-fee limit held on top,
 * except for an invoice of ours, which is settled with no route. A send to an address of ours is
 * quoted from its pay request alone: its invoice comes at confirm, and is settled with no route.
 */
export async function quoteLnSend(
  deps: Pick<LightningDeps, 'db' | 'config' | 'lnurl'>,
  { input, now: at }: QuoteContext,
): Promise<Quote | MoneyError | LnSendError> {
  const invoice = await invoiceToPay(deps, input, at)
  if (isRefusal(invoice)) return invoice
  const requested = requestedAmount(input, { optional: true })
  if (isMoneyError(requested)) return requested
  if ('localUsername' in invoice) {
    // The amount was required and checked against the address's bounds; no route, no routing fee.
    return sameCurrencySendQuote({
      requested: { side: 'dest', minor: requested!.minor },
      ccy: 'BTC',
      feeRule: deps.config.fees.lightning_send!,
      networkFee: 0n,
      deduct: false,
      // No paymentRequest or paymentHash yet: the confirm adds them (send-details.ts).
      destDetails: {
        ...invoice.named,
        localUsername: invoice.localUsername,
      } satisfies Partial<LnSendDetails>,
    })
  }
  const { text, decoded, named } = invoice
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
    destDetails: { paymentRequest: text, paymentHash: decoded.paymentHash, ...named } satisfies LnSendDetails,
  })
}
