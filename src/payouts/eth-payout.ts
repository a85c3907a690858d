import { ceilDiv, formatScaled, type Rate } from '../shared/amount.js'
import { assert } from '../shared/assert.js'
import { nodeCall } from '../rails/node-call.js'
import type { EthFeeQuote, EthTransferState } from '../rails/rail.js'
import type { RateSnapshot } from '../rates/service.js'
import type { Flow, Quote, QuoteContext } from '../transactions/flow.js'
import { requestedAmount, sameCurrencySendQuote } from '../transactions/money.js'
import { isMoneyError, type MoneyError } from '../transactions/errors.js'
import { decimalDetail, type Txn } from '../transactions/txn.js'
import { validateEthAddress } from './eth/address.js'
import { payoutError, type PayoutError } from './errors.js'
import type { EthPayoutDeps } from './deps.js'
import { payoutFlow } from './lifecycle.js'
import { ETH_PAYOUT } from './kinds.js'

const ADDRESS_FIELD = 'destReq.reqDetails.address'
const WEI_PER_ETH = 10n ** 18n
const USDT_MINOR_PER_USDT = 10n ** 6n

/**
 * USDT over Ethereum (issue 33), the TRON payout's lifecycle: the address checked at quote (EIP-55
 * when mixed case) and stored in its checksum form; the service fee as `FEE_ETH`; the network fee
 * what the send may cost at most (the rail's fee cap per gas times its gas limit, in wei), in USDT
 * at the current ETH rate, rounded up to the next micro-USDT. That cap in wei (`maxFeeWei`) is kept
 * in destReq.reqDetails and handed to the rail, which never lets the transfer (or any replacement of
 * it) cost more. The hot wallet pays the gas in ETH; what the cap leaves unused stays as revenue,
 * as a TRON payout's network fee does.
 */
export function ethPayoutFlow(deps: EthPayoutDeps): Flow {
  return payoutFlow(deps, {
    kind: ETH_PAYOUT.kind,
    rail: ETH_PAYOUT.rail,
    system: 'ethereum',
    refField: 'txHash',
    pollMs: deps.pollMs,
    refusedReason: 'rejected_by_network',
    quote: (ctx) => quoteEthPayout(deps, ctx),
    async submit(txn) {
      const { to, maxFeeWei } = sendOf(txn)
      return (await deps.eth.sendUsdt({ to, amountMinor: txn.destAmountMinor, requestId: txn.id, maxFeeWei }))
        .txHash
    },
    async check(_ref, txn) {
      // The rail follows the payout by its request id: a replacement (same nonce, higher fee) has
      // another hash, which the final state records.
      const { to } = sendOf(txn)
      const state = await deps.eth.getTransfer(txn.id, { to, amountMinor: txn.destAmountMinor })
      // A transfer the rail can take no further (its fee cap reached) stays destsent, funds held:
      // the stuck listing shows it once the rail's bound has passed; the log says why meanwhile.
      if (state.status === 'pending' && state.stuck)
        deps.log.warn(
          { txnId: txn.id, kind: ETH_PAYOUT.kind, stuck: state.stuck.slice(0, 200) },
          'Ethereum payout is stuck',
        )
      return withEthDetails(state)
    },
  })
}

function sendOf(txn: Txn): { to: string; maxFeeWei: bigint } {
  const to = txn.destDetails.address
  const cap = txn.destDetails.maxFeeWei
  assert(typeof to === 'string', 'an Ethereum payout stores its address')
  assert(typeof cap === 'string' && /^\d{1,40}$/.test(cap), 'an Ethereum payout stores its fee cap in wei')
  return { to, maxFeeWei: BigInt(cap) }
}

/** The address of an Ethereum payout request in its EIP-55 form, once it checks out. */
export function ethAddress(raw: unknown): string | PayoutError {
  if (typeof raw !== 'string')
    return payoutError('eth_address_missing', [
      { field: ADDRESS_FIELD, issue: 'an Ethereum address (0x and 40 hex digits) is required' },
    ])
  const checked = validateEthAddress(raw)
  if (!checked.ok) return payoutError('eth_address_invalid', [{ field: ADDRESS_FIELD, issue: checked.issue }])
  return checked.checksummed
}

/**
 * `feeWei` in micro-USDT at `usdtPerBtc` / `ethPerBtc` (both units per 1 BTC, as every rate is),
 * rounded up once, over the exact fraction: the customer never pays more than one micro-USDT above
 * the fee's value, and never less.
 */
export function weiToUsdtMinorCeil(feeWei: bigint, usdtPerBtc: Rate, ethPerBtc: Rate): bigint {
  assert(feeWei >= 0n && ethPerBtc.num > 0n, 'a fee and an ETH rate')
  // usdt = feeWei / 1e18 ETH x (u.num / 10^u.scale) / (e.num / 10^e.scale) USDT per ETH, in 1e-6 units.
  const num = feeWei * usdtPerBtc.num * 10n ** BigInt(ethPerBtc.scale) * USDT_MINOR_PER_USDT
  const den = WEI_PER_ETH * 10n ** BigInt(usdtPerBtc.scale) * ethPerBtc.num
  return ceilDiv(num, den)
}

/** The most a send may cost now, in wei: the rail's fee cap per gas times the gas it may use. */
export const maxFeeWeiOf = (fee: EthFeeQuote): bigint => fee.maxFeePerGasWei * fee.gasLimit

async function quoteEthPayout(
  deps: EthPayoutDeps,
  { input, rates }: QuoteContext,
): Promise<Quote | MoneyError | PayoutError> {
  const address = ethAddress(input.destReq.reqDetails?.address)
  if (typeof address !== 'string') return address
  const requested = requestedAmount(input)
  if (isMoneyError(requested)) return requested
  const fee = await nodeCall('Ethereum node fee estimate', () => deps.eth.feeQuote())
  const maxFeeWei = maxFeeWeiOf(fee)
  const networkFee = networkFeeUsdt(deps, rates, maxFeeWei)
  // An Ethereum payout carries no KYC: none is stored even when a caller sends it.
  return sameCurrencySendQuote({
    requested,
    ccy: 'USDT',
    feeRule: deps.config.fees.eth!,
    networkFee,
    deduct: input.deductNetworkFeesFromDest,
    destDetails: { address, maxFeeWei: maxFeeWei.toString() },
  })
}

function networkFeeUsdt(deps: EthPayoutDeps, rates: RateSnapshot, maxFeeWei: bigint): bigint {
  return weiToUsdtMinorCeil(maxFeeWei, deps.rates.perBtc(rates, 'USDT'), deps.rates.perBtc(rates, 'ETH'))
}

/**
 * A final state's transaction hash (the one mined, after any replacement) and what the hot wallet
 * paid for it in ETH, kept in destReq.reqDetails as information: the customer paid the quoted
 * `networkFees` in USDT, so nothing of it is posted to the ledger.
 */
function withEthDetails(state: EthTransferState): EthTransferState & { details?: Record<string, unknown> } {
  const { txHash, feeWei, stuck: _stuck, ...rest } = state
  if (rest.status === 'pending') return rest
  const details: Record<string, unknown> = {}
  if (txHash) details.txHash = txHash
  if (feeWei !== undefined) details.chainFeeEth = decimalDetail(formatScaled(feeWei, 18))
  return Object.keys(details).length ? { ...rest, details } : rest
}
