/**
 * EIP-1559 fees: what to bid now, from `eth_feeHistory` (the next block's base fee is the last of
 * `baseFeePerGas`) and `eth_maxPriorityFeePerGas` (geth's tip oracle, eth/gasprice/gasprice.go);
 * and the bump a replacement needs, which geth's pool demands on both fields
 * (core/txpool/legacypool/list.go: at least old × (100 + PriceBump) / 100, PriceBump 10 by default).
 * Nothing here ever bids more than the caller's cap: maxFeePerGas × gasLimit ≤ maxFeeWei.
 */
import { RailFailure, type EthFeeQuote } from '../../rails/rail.js'
import { hexQuantity, object } from './jsonrpc-client.js'
import type { EthDeps } from './jsonrpc-deps.js'

/** geth's default txpool.pricebump, in percent. */
export const PRICE_BUMP_PERCENT = 10n

/**
 * The gas a quote counts for one Tether transfer: a transfer to an address that held no USDT uses
 * about 63,000 gas on mainnet (two storage writes, one of them a new slot), one to a holder about
 * 46,000; the send itself uses the node's estimate with headroom, which stays under this.
 */
export const QUOTE_GAS_LIMIT = 100_000n

/** Headroom on the node's estimate: Tether's gas can change between the estimate and the block. */
export function gasLimitFromEstimate(estimate: bigint): bigint {
  return (estimate * 12n + 9n) / 10n
}

export interface FeeMarket {
  /** The next block's base fee. */
  baseFeePerGas: bigint
  /** The tip the node suggests. */
  priorityFeePerGas: bigint
}

export async function feeMarket(deps: EthDeps): Promise<FeeMarket> {
  const history = object(await deps.rpc('eth_feeHistory', ['0x5', 'latest', [50]]), 'eth_feeHistory')
  const baseFees = history.baseFeePerGas
  if (!Array.isArray(baseFees) || baseFees.length === 0)
    throw new RailFailure(
      'eth_bad_response',
      'eth_feeHistory has no baseFeePerGas (a chain without EIP-1559?)',
      true,
    )
  const baseFeePerGas = hexQuantity(baseFees[baseFees.length - 1], 'baseFeePerGas')
  const priorityFeePerGas = hexQuantity(
    await deps.rpc('eth_maxPriorityFeePerGas', []),
    'eth_maxPriorityFeePerGas',
  )
  return { baseFeePerGas, priorityFeePerGas }
}

/** The fee cap we bid now: twice the next base fee (room for six full blocks of +12.5%) plus the tip. */
export function suggestedMaxFee(market: FeeMarket): bigint {
  return market.baseFeePerGas * 2n + market.priorityFeePerGas
}

export async function feeQuote(deps: EthDeps): Promise<EthFeeQuote> {
  const market = await feeMarket(deps)
  return { maxFeePerGasWei: suggestedMaxFee(market), gasLimit: QUOTE_GAS_LIMIT }
}

export interface Fees {
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
}

/**
 * The first bid of a send under the cap, or a final `fee_above_cap` when even the next block's
 * base fee plus the tip does not fit: the payout cannot be sent for what was quoted.
 */
export function firstFees(market: FeeMarket, gasLimit: bigint, maxFeeWei: bigint): Fees {
  const capPerGas = maxFeeWei / gasLimit
  const wanted = suggestedMaxFee(market)
  const maxFeePerGas = wanted < capPerGas ? wanted : capPerGas
  if (maxFeePerGas < market.baseFeePerGas + market.priorityFeePerGas)
    throw new RailFailure(
      'fee_above_cap',
      `the network fee now (base ${market.baseFeePerGas} + tip ${market.priorityFeePerGas} wei per gas × ${gasLimit} gas) ` +
        `is above the payout's cap of ${maxFeeWei} wei`,
      false,
    )
  return { maxFeePerGas, maxPriorityFeePerGas: market.priorityFeePerGas }
}

/** The least a replacement may bid, as geth's pool requires, rounded up. */
export function bumped(value: bigint): bigint {
  return (value * (100n + PRICE_BUMP_PERCENT) + 99n) / 100n
}

/**
 * The fees of a replacement: at least the pool's bump on both fields, the market's current bid if
 * higher, never above the cap. Undefined when the cap leaves no room for the bump (stuck).
 */
export function replacementFees(
  old: Fees,
  market: FeeMarket,
  gasLimit: bigint,
  maxFeeWei: bigint,
): Fees | undefined {
  const capPerGas = maxFeeWei / gasLimit
  const minFee = bumped(old.maxFeePerGas)
  const minTip = bumped(old.maxPriorityFeePerGas)
  const wantedFee = suggestedMaxFee(market)
  let maxFeePerGas = wantedFee > minFee ? wantedFee : minFee
  if (maxFeePerGas > capPerGas) maxFeePerGas = capPerGas
  let maxPriorityFeePerGas = market.priorityFeePerGas > minTip ? market.priorityFeePerGas : minTip
  if (maxPriorityFeePerGas > maxFeePerGas) maxPriorityFeePerGas = maxFeePerGas
  if (maxFeePerGas < minFee || maxPriorityFeePerGas < minTip) return undefined
  return { maxFeePerGas, maxPriorityFeePerGas }
}
