import type { FeeRule } from '../config/config.js'
import { bpsOfCeil, parseAmount, type Rate } from '../shared/amount.js'
import { convertDown, ONE, sourceForDest } from '../rates/fx.js'
import { systemAccountId, type Posting, type SystemPurpose } from '../ledger/ledger.js'
import type { CreateInput, Quote } from './flow.js'
import { isMoneyError, moneyError, type MoneyError } from './errors.js'
import type { Txn } from './txn.js'

/** A fee: the fixed part plus basis points of the amount, rounded up. */
export function feeFor(rule: FeeRule, amountMinor: bigint): bigint {
  return rule.fixedMinor + bpsOfCeil(amountMinor, rule.bps)
}

export type Requested = { side: 'src' | 'dest'; minor: bigint }

/**
 * The one side carrying `amtRequested`, parsed exactly. Both sides, or neither unless `optional`, is
 * a refusal, as is an amount the side's currency cannot hold.
 */
export function requestedAmount(input: CreateInput): Requested | MoneyError
export function requestedAmount(
  input: CreateInput,
  opts: { optional: true },
): Requested | MoneyError | undefined
export function requestedAmount(
  input: CreateInput,
  opts: { optional?: boolean } = {},
): Requested | MoneyError | undefined {
  const src = input.sourceReq.amtRequested
  const dest = input.destReq.amtRequested
  if (src !== undefined && dest !== undefined) {
    return moneyError(
      'amount_on_both_sides',
      'destReq.amtRequested',
      'must be left out when sourceReq.amtRequested is set',
    )
  }
  if (src === undefined && dest === undefined) {
    if (opts.optional) return undefined
    return moneyError(
      'amount_missing',
      'destReq.amtRequested',
      'set amtRequested on the source or the destination side',
    )
  }
  const side = src !== undefined ? 'src' : 'dest'
  const ccy = side === 'src' ? input.sourceReq.ccy : input.destReq.ccy
  const parsed = parseAmount(side === 'src' ? src : dest, ccy)
  if (!parsed.ok) {
    const field = side === 'src' ? 'sourceReq.amtRequested' : 'destReq.amtRequested'
    return moneyError('amount_malformed', field, parsed.issue)
  }
  return { side, minor: parsed.minor }
}

export interface WalletAmounts {
  srcAmount: bigint
  srcFee: bigint
  destAmount: bigint
}

/**
 * Amounts of a wallet-funded transaction. The source amount never includes fees; the wallet pays
 * source amount + fees, unless fees come out of the destination (`deduct`), when it pays the source
 * amount only and the destination gets the conversion of what is left after fees. Fees that take
 * the whole amount, or a destination amount of nothing, are refusals.
 */
export function walletAmounts(opts: {
  requested: Requested
  srcCcy: string
  destCcy: string
  fx: Rate
  feeRule: FeeRule
  networkFee: bigint
  deduct: boolean
}): WalletAmounts | MoneyError {
  const { requested, srcCcy, destCcy, fx } = opts
  const srcAmount =
    requested.side === 'src' ? requested.minor : sourceForDest(requested.minor, srcCcy, destCcy, fx)
  const srcFee = feeFor(opts.feeRule, srcAmount)
  let destAmount = requested.side === 'dest' ? requested.minor : convertDown(srcAmount, srcCcy, destCcy, fx)
  if (opts.deduct) {
    const left = srcAmount - srcFee - opts.networkFee
    if (left <= 0n) return moneyError('amount_below_fees', 'amtRequested', 'is too small to cover the fees')
    destAmount = convertDown(left, srcCcy, destCcy, fx)
  }
  if (destAmount <= 0n)
    return moneyError('converts_to_nothing', 'amtRequested', 'converts to nothing at this rate')
  return { srcAmount, srcFee, destAmount }
}

/**
 * The quote of a send out of a wallet to an outside network in the wallet's own currency (BTC over
 * Lightning or on chain, USDT over TRON): no conversion, the service fee by `feeRule`, and the
 * network fee held on top, or taken from the amount with `deduct`.
 */
export function sameCurrencySendQuote(opts: {
  requested: Requested
  ccy: string
  feeRule: FeeRule
  networkFee: bigint
  deduct: boolean
  destDetails: Record<string, unknown>
}): Quote | MoneyError {
  const { requested, ccy, feeRule, networkFee, deduct } = opts
  const amounts = walletAmounts({
    requested,
    srcCcy: ccy,
    destCcy: ccy,
    fx: ONE,
    feeRule,
    networkFee,
    deduct,
  })
  if (isMoneyError(amounts)) return amounts
  return {
    ...amounts,
    srcNetworkFee: networkFee,
    fxRate: ONE,
    srcDetails: {},
    destDetails: opts.destDetails,
    fromWallet: true,
  }
}

/** What a wallet-funded transaction takes from the wallet in all. */
export function walletDebit(
  txn: Pick<Txn, 'srcAmountMinor' | 'srcFeeMinor' | 'srcNetworkFeeMinor' | 'deductFeesFromDest'>,
) {
  return txn.deductFeesFromDest
    ? txn.srcAmountMinor
    : txn.srcAmountMinor + txn.srcFeeMinor + txn.srcNetworkFeeMinor
}

/**
 * Postings that settle a wallet-funded transaction: the wallet pays its debit, the service fee goes
 * to revenue, the rest leaves through `outbound` (FX liquidity for conversions, or an external
 * network), converted to the destination currency where the currencies differ.
 */
export function walletOutPostings(
  txn: Txn,
  walletId: string,
  outbound: { system: SystemPurpose } | { wallet: string },
): Posting[] {
  const debit = walletDebit(txn)
  const out = (ccy: string) =>
    'wallet' in outbound ? outbound.wallet : systemAccountId(outbound.system, ccy)
  const postings: Posting[] = [
    { accountId: walletId, ccy: txn.srcCcy, amount: -debit },
    { accountId: systemAccountId('fees', txn.srcCcy), ccy: txn.srcCcy, amount: txn.srcFeeMinor },
  ]
  if (txn.srcCcy === txn.destCcy) {
    postings.push({ accountId: out(txn.srcCcy), ccy: txn.srcCcy, amount: debit - txn.srcFeeMinor })
  } else {
    postings.push({
      accountId: systemAccountId('fx', txn.srcCcy),
      ccy: txn.srcCcy,
      amount: debit - txn.srcFeeMinor,
    })
    postings.push({
      accountId: systemAccountId('fx', txn.destCcy),
      ccy: txn.destCcy,
      amount: -txn.destAmountMinor,
    })
    postings.push({ accountId: out(txn.destCcy), ccy: txn.destCcy, amount: txn.destAmountMinor })
  }
  return postings
}
