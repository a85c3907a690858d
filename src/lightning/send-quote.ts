import type { Config } from '../config/config.js'
import { decodeInvoice, type DecodedInvoice } from './bolt11.js'
import { formatMinor, ceilDiv } from '../shared/amount.js'
import { fieldError } from '../shared/errors.js'
import { ONE } from '../rates/fx.js'
import type { CreateInput, Quote, QuoteContext } from '../transactions/flow.js'
import { requestedAmount, walletAmounts } from '../transactions/money.js'
import { isMoneyError, type MoneyError } from '../transactions/errors.js'
import type { BitcoinDeps } from '../bitcoin/common.js'
import { canonicalInvoice, internalInvoiceIssue, MSAT_PER_SAT, receiveFor } from './receive.js'
import type { LnSendDetails } from './send-details.js'

/** The routing-fee limit of a send: the larger of 10 sats and 0.5% of the amount. */
export const ROUTING_FEE_MIN_SATS = 10n
export const ROUTING_FEE_BPS = 50n

export const PAYMENT_REQUEST_FIELD = 'destReq.reqDetails.paymentRequest'

export function routingFeeLimitSats(amountSats: bigint): bigint {
  const pct = ceilDiv(amountSats * ROUTING_FEE_BPS, 10_000n)
  return pct > ROUTING_FEE_MIN_SATS ? pct : ROUTING_FEE_MIN_SATS
}

/** The invoice of a send request, checked for this service's network and still unexpired at `at`. */
export function parseInvoice(
  network: Config['network'],
  input: CreateInput,
  at: number,
): { text: string; decoded: DecodedInvoice } {
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
  if (decoded.network !== network) {
    throw fieldError(
      'invalid_payment_request',
      PAYMENT_REQUEST_FIELD,
      `the invoice is for ${decoded.network}; this service runs on ${network}`,
    )
  }
  if (decoded.expiresAtMs <= at)
    throw fieldError('invalid_payment_request', PAYMENT_REQUEST_FIELD, 'the invoice has expired')
  return { text, decoded }
}

/**
 * The quote of a Lightning send: the invoice checked, the amount it or the request fixes, and the
 * routing-fee limit held on top, except for an invoice of ours, which is settled with no route.
 */
export async function quoteLnSend(
  deps: Pick<BitcoinDeps, 'db' | 'config'>,
  { input, now: at }: QuoteContext,
): Promise<Quote | MoneyError> {
  const { text, decoded } = parseInvoice(deps.config.network, input, at)
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
    if (receive.srcAmountMinor !== amountSats) {
      throw fieldError('invalid_payment_request', requestedField, 'must be the amount of the invoice')
    }
  }
  const networkFee = receive ? 0n : routingFeeLimitSats(amountSats)
  const amounts = walletAmounts({
    requested: { side: 'dest', minor: amountSats },
    srcCcy: 'BTC',
    destCcy: 'BTC',
    fx: ONE,
    feeRule: deps.config.fees.lightning_send!,
    networkFee,
    deduct: input.deductNetworkFeesFromDest,
  })
  if (isMoneyError(amounts)) return amounts
  return {
    ...amounts,
    srcNetworkFee: networkFee,
    fxRate: ONE,
    srcDetails: {},
    destDetails: { paymentRequest: text, paymentHash: decoded.paymentHash } satisfies LnSendDetails,
    fromWallet: true,
  }
}
