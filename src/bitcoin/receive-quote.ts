import type { FeeRule } from '../config/config.js'
import { ONE } from '../rates/fx.js'
import type { CreateInput, Quote } from '../transactions/flow.js'
import { feeFor, requestedAmount } from '../transactions/money.js'
import { isMoneyError, moneyError, type MoneyError } from '../transactions/errors.js'

/**
 * The quote of a receive. The amount may be given on either side: the destination's is what the
 * wallet is credited, the source's what the payer pays, and they differ by the receive fee, which
 * is computed on whichever amount was given. A source amount the fee takes entirely is a refusal.
 */
export function receiveQuote(
  input: CreateInput,
  rule: FeeRule,
  srcDetails: Record<string, unknown>,
): Quote | MoneyError {
  const requested = requestedAmount(input)
  if (isMoneyError(requested)) return requested
  let srcAmount: bigint
  let fee: bigint
  let destAmount: bigint
  if (requested.side === 'dest') {
    destAmount = requested.minor
    fee = feeFor(rule, destAmount)
    srcAmount = destAmount + fee
  } else {
    srcAmount = requested.minor
    fee = feeFor(rule, srcAmount)
    destAmount = srcAmount - fee
    if (destAmount <= 0n)
      return moneyError(
        'amount_below_fees',
        'sourceReq.amtRequested',
        'is too small to cover the receive fee',
      )
  }
  return {
    srcAmount,
    srcFee: fee,
    srcNetworkFee: 0n,
    destAmount,
    fxRate: ONE,
    srcDetails,
    destDetails: {},
    fromWallet: false,
  }
}
