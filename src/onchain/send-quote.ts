import type { OnchainSendDetails } from './send-details.js'
import { validateAddress, type AddressType } from './address.js'
import { estimateSendVsize, networkFeeSats } from './vsize.js'
import type { Network } from '../config/network.js'
import { formatMinor } from '../shared/amount.js'
import type { Quote, QuoteContext } from '../transactions/flow.js'
import { requestedAmount, sameCurrencySendQuote } from '../transactions/money.js'
import { isMoneyError, type MoneyError } from '../transactions/errors.js'
import { nodeCall } from '../rails/node-call.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { onchainSendError, type OnchainSendError } from './errors.js'
import { ApiError } from '../shared/errors.js'

/** The smallest on-chain send: 0.00001 BTC. */
export const ONCHAIN_SEND_MIN_SATS = 1_000n
/** Confirmation target of the fee estimate we quote: about half an hour. */
export const FEE_TARGET_BLOCKS = 3
const ADDRESS_FIELD = 'destReq.reqDetails.address'

/**
 * The address of a send request, checked for `network`, in its one canonical spelling (bech32 in
 * lower case): the spelling stored, sent and compared.
 */
export function sendAddress(
  raw: unknown,
  network: Network,
): { address: string; type: AddressType } | OnchainSendError {
  if (typeof raw !== 'string' || raw.trim() === '')
    return onchainSendError('address_missing', ADDRESS_FIELD, 'is required')
  const check = validateAddress(raw.trim(), network)
  if (!check.ok) return onchainSendError('address_invalid', ADDRESS_FIELD, check.issue)
  return { address: check.address, type: check.type }
}

/**
 * The quote of an on-chain send: the address checked, the network fee priced from the node's
 * estimate for the address's output type, and the amount sent at least ONCHAIN_SEND_MIN_SATS both
 * as requested and after fees taken from it.
 */
export async function quoteOnchainSend(
  deps: Pick<BitcoinDeps, 'config' | 'rails'>,
  { input }: QuoteContext,
): Promise<Quote | MoneyError | OnchainSendError> {
  // A rail that cannot send (Esplora without a signer) refuses here, before a quote or a hold
  // exists, rather than after the customer confirmed (contract.md section 3: method_not_available).
  const unavailable = deps.rails.onchain.sendUnavailable
  if (unavailable !== undefined) throw new ApiError('method_not_available', unavailable)
  const destination = sendAddress(input.destReq.reqDetails?.address, deps.config.network)
  if ('kind' in destination) return destination
  const requested = requestedAmount(input)
  if (isMoneyError(requested)) return requested
  const belowMinimum = () =>
    onchainSendError(
      'amount_below_minimum',
      requested.side === 'src' ? 'sourceReq.amtRequested' : 'destReq.amtRequested',
      `the smallest on-chain send is ${formatMinor(ONCHAIN_SEND_MIN_SATS, 'BTC')} BTC`,
    )
  if (requested.minor < ONCHAIN_SEND_MIN_SATS) return belowMinimum()
  const feeRate = await nodeCall('Bitcoin node fee estimate', () =>
    deps.rails.onchain.estimateFeeRate(FEE_TARGET_BLOCKS),
  )
  const networkFee = networkFeeSats(feeRate, estimateSendVsize(destination.type))
  const quote = sameCurrencySendQuote({
    requested,
    ccy: 'BTC',
    feeRule: deps.config.fees.onchain_send!,
    networkFee,
    deduct: input.deductNetworkFeesFromDest,
    destDetails: {
      address: destination.address,
      feeRateSatPerVb: Number(feeRate),
    } satisfies OnchainSendDetails,
  })
  if (isMoneyError(quote)) return quote
  if (quote.destAmount < ONCHAIN_SEND_MIN_SATS) return belowMinimum()
  return quote
}
