import { MAX_MINOR, formatMinor } from '../shared/amount.js'
import type { CreateInput, Quote } from './flow.js'
import type { KindDeclaration } from './kinds.js'
import { walletDebit } from './money.js'
import { moneyError, type MoneyError, type MoneyField } from './errors.js'

/**
 * Bitcoin's money supply ceiling, 21 million BTC in sats: no payment on a Bitcoin network, in or out,
 * can be larger, and `RECEIVE_MAX_BTC` may not be set above it.
 */
export const BTC_MAX_MONEY_SATS = 21_000_000n * 100_000_000n

export interface AmountLimits {
  /** The largest receive (Lightning or on-chain) the operator allows, in sats. */
  receiveMaxSats: bigint
}

/**
 * Every amount a quote decided, given or computed, against the limits, before anything is stored:
 * each side's amount, its fees and the wallet's total within the per-side cap (10^17 minor units,
 * which keeps every sum inside PostgreSQL's bigint); receives within the operator's maximum; Bitcoin
 * sends within the money supply (which caps apply is the kind's declaration). Returns the quote when it is within them all, else the first breach
 * as an `amount_over_limit` naming the field; its reason names the limit, never the amount sent.
 */
export function checkQuoteAmounts(
  kind: Pick<KindDeclaration, 'caps' | 'destAmountFrom'>,
  input: CreateInput,
  quote: Quote,
  limits: AmountLimits,
): Quote | MoneyError {
  const src = input.sourceReq.ccy
  const dest = input.destReq.ccy
  const overCap = (field: MoneyField, amount: bigint, ccy: string, what: string) =>
    amount > MAX_MINOR
      ? moneyError(
          'amount_over_limit',
          field,
          `${what} is more than the largest amount one side may carry (${formatMinor(MAX_MINOR, ccy)} ${ccy})`,
        )
      : undefined
  const srcField = 'sourceReq.amtRequested'
  // A Lightning send's amount may come from the invoice alone.
  const destField =
    kind.destAmountFrom !== null &&
    input.destReq.amtRequested === undefined &&
    input.sourceReq.amtRequested === undefined
      ? kind.destAmountFrom
      : 'destReq.amtRequested'
  const total = walletDebit({
    srcAmountMinor: quote.srcAmount,
    srcFeeMinor: quote.srcFee,
    srcNetworkFeeMinor: quote.srcNetworkFee,
    deductFeesFromDest: input.deductNetworkFeesFromDest,
  })
  const breach =
    overCap(srcField, quote.srcAmount, src, 'the source amount') ??
    overCap('sourceReq.svcpayFees', quote.srcFee, src, 'the service fee') ??
    overCap('sourceReq.networkFees', quote.srcNetworkFee, src, 'the network fee') ??
    overCap(destField, quote.destAmount, dest, 'the destination amount') ??
    overCap(srcField, total, src, 'the amount with its fees') ??
    (kind.caps.receiveMax ? overReceiveMax(input, quote, limits) : undefined) ??
    (kind.caps.bitcoinSupply ? overBitcoinSupply(quote.destAmount, destField, total) : undefined)
  return breach ?? quote
}

function overReceiveMax(input: CreateInput, quote: Quote, limits: AmountLimits): MoneyError | undefined {
  const max = limits.receiveMaxSats < BTC_MAX_MONEY_SATS ? limits.receiveMaxSats : BTC_MAX_MONEY_SATS
  if (quote.srcAmount <= max) return undefined
  const field = input.sourceReq.amtRequested !== undefined ? 'sourceReq.amtRequested' : 'destReq.amtRequested'
  return moneyError(
    'amount_over_limit',
    field,
    `a receive may be at most ${formatMinor(max, 'BTC')} BTC on this server`,
  )
}

function overBitcoinSupply(destAmount: bigint, destField: MoneyField, total: bigint): MoneyError | undefined {
  const issue = `is more than all the bitcoin there will ever be (${formatMinor(BTC_MAX_MONEY_SATS, 'BTC')} BTC)`
  if (destAmount > BTC_MAX_MONEY_SATS) return moneyError('amount_over_limit', destField, issue)
  if (total > BTC_MAX_MONEY_SATS)
    return moneyError('amount_over_limit', 'sourceReq.amtRequested', `with its fees ${issue}`)
  return undefined
}
