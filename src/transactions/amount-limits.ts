import { MAX_MINOR, formatMinor } from '../shared/amount.js'
import { fieldError } from '../shared/errors.js'
import type { CreateInput, Quote } from './flow.js'
import type { TxnKind } from './state-machine.js'
import { walletDebit } from './money.js'

/**
 * Bitcoin's money supply ceiling, 21 million BTC in sats: no payment on a Bitcoin network, in or out,
 * can be larger, and `RECEIVE_MAX_BTC` may not be set above it.
 */
export const BTC_MAX_MONEY_SATS = 21_000_000n * 100_000_000n

const RECEIVES: ReadonlySet<TxnKind> = new Set(['ln_receive', 'onchain_receive'])
const BTC_SENDS: ReadonlySet<TxnKind> = new Set(['ln_send', 'onchain_send'])

export interface AmountLimits {
  /** The largest receive (Lightning or on-chain) the operator allows, in sats. */
  receiveMaxSats: bigint
}

/**
 * Every amount a quote decided, given or computed, against the limits, before anything is stored:
 * each side's amount, its fees and the wallet's total within the per-side cap (10^17 minor units,
 * which keeps every sum inside PostgreSQL's bigint); receives within the operator's maximum; Bitcoin
 * sends within the money supply. A breach is 400 `invalid_amount` naming the field; the issue text
 * names the limit, never the amount sent.
 */
export function checkQuoteAmounts(
  kind: TxnKind,
  input: CreateInput,
  quote: Quote,
  limits: AmountLimits,
): void {
  const src = input.sourceReq.ccy
  const dest = input.destReq.ccy
  const cap = (field: string, amount: bigint, ccy: string, what: string) => {
    if (amount > MAX_MINOR)
      throw fieldError(
        'invalid_amount',
        field,
        `${what} is more than the largest amount one side may carry (${formatMinor(MAX_MINOR, ccy)} ${ccy})`,
      )
  }
  const srcField = 'sourceReq.amtRequested'
  // A Lightning send's amount may come from the invoice alone.
  const destField =
    kind === 'ln_send' &&
    input.destReq.amtRequested === undefined &&
    input.sourceReq.amtRequested === undefined
      ? 'destReq.reqDetails.paymentRequest'
      : 'destReq.amtRequested'
  cap(srcField, quote.srcAmount, src, 'the source amount')
  cap('sourceReq.svcpayFees', quote.srcFee, src, 'the service fee')
  cap('sourceReq.networkFees', quote.srcNetworkFee, src, 'the network fee')
  cap(destField, quote.destAmount, dest, 'the destination amount')
  const total = walletDebit({
    src_amount: quote.srcAmount,
    src_fee: quote.srcFee,
    src_network_fee: quote.srcNetworkFee,
    deduct_fees_from_dest: input.deductNetworkFeesFromDest,
  })
  cap(srcField, total, src, 'the amount with its fees')

  if (RECEIVES.has(kind)) {
    const max = limits.receiveMaxSats < BTC_MAX_MONEY_SATS ? limits.receiveMaxSats : BTC_MAX_MONEY_SATS
    const field = input.sourceReq.amtRequested !== undefined ? srcField : 'destReq.amtRequested'
    if (quote.srcAmount > max)
      throw fieldError(
        'invalid_amount',
        field,
        `a receive may be at most ${formatMinor(max, 'BTC')} BTC on this server`,
      )
  }
  if (BTC_SENDS.has(kind)) {
    const issue = `is more than all the bitcoin there will ever be (${formatMinor(BTC_MAX_MONEY_SATS, 'BTC')} BTC)`
    if (quote.destAmount > BTC_MAX_MONEY_SATS) throw fieldError('invalid_amount', destField, issue)
    if (total > BTC_MAX_MONEY_SATS) throw fieldError('invalid_amount', srcField, `with its fees ${issue}`)
  }
}
