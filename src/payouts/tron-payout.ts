import { formatScaled } from '../shared/amount.js'
import { assert } from '../shared/assert.js'
import type { TronFee } from '../rails/rail.js'
import type { Flow, Quote, QuoteContext } from '../transactions/flow.js'
import { requestedAmount, sameCurrencySendQuote } from '../transactions/money.js'
import { isMoneyError, type MoneyError } from '../transactions/errors.js'
import { decimalDetail } from '../transactions/txn.js'
import { validateTronAddress } from './tron/address.js'
import { payoutError, type PayoutError } from './errors.js'
import type { TronPayoutDeps } from './deps.js'
import { payoutFlow } from './lifecycle.js'
import { TRON_PAYOUT } from './kinds.js'

const ADDRESS_FIELD = 'destReq.reqDetails.address'

/** USDT over TRON: address checked at quote; service fee and a fixed network fee, both in USDT. */
export function tronPayoutFlow(deps: TronPayoutDeps): Flow {
  return payoutFlow(deps, {
    kind: TRON_PAYOUT.kind,
    rail: TRON_PAYOUT.rail,
    system: 'tron',
    refField: 'txHash',
    pollMs: deps.pollMs,
    refusedReason: 'rejected_by_network',
    quote: (ctx) => quoteTronPayout(deps, ctx),
    async submit(txn) {
      const to = txn.destDetails.address
      assert(typeof to === 'string', 'a TRON payout stores its address')
      return (await deps.tron.sendUsdt({ to, amountMinor: txn.destAmountMinor, requestId: txn.id })).txHash
    },
    async check(ref, txn) {
      const to = txn.destDetails.address
      assert(typeof to === 'string', 'a TRON payout stores its address')
      const state = await deps.tron.getTransfer(ref, { to, amountMinor: txn.destAmountMinor })
      const { fee, ...rest } = state
      return fee ? { ...rest, details: tronFeeDetails(fee) } : rest
    },
  })
}

/** The address of a TRON payout request, as given, once it checks out. */
export function tronAddress(raw: unknown): string | PayoutError {
  if (typeof raw !== 'string')
    return payoutError('tron_address_missing', [
      { field: ADDRESS_FIELD, issue: 'a TRON address (T...) is required' },
    ])
  const checked = validateTronAddress(raw)
  if (!checked.ok)
    return payoutError('tron_address_invalid', [{ field: ADDRESS_FIELD, issue: checked.issue }])
  return raw
}

async function quoteTronPayout(
  deps: TronPayoutDeps,
  { input }: QuoteContext,
): Promise<Quote | MoneyError | PayoutError> {
  const address = tronAddress(input.destReq.reqDetails?.address)
  if (typeof address !== 'string') return address
  const requested = requestedAmount(input)
  if (isMoneyError(requested)) return requested
  // A TRON payout carries no KYC: none is stored even when a caller sends it.
  return sameCurrencySendQuote({
    requested,
    ccy: 'USDT',
    feeRule: deps.config.fees.tron!,
    networkFee: deps.config.tronNetworkFeeUsdtMinor,
    deduct: input.deductNetworkFeesFromDest,
    destDetails: { address },
  })
}

/**
 * What the chain charged the hot wallet for a TRON transfer, kept in destReq.reqDetails as
 * information: the service pays it in TRX, the customer pays the quoted `networkFees` in USDT, so
 * nothing of it is posted to the ledger. Amounts are exact decimal TRX.
 */
export function tronFeeDetails(fee: TronFee): Record<string, unknown> {
  return {
    chainFeeTrx: decimalDetail(formatScaled(fee.totalSun, 6)),
    chainEnergyFeeTrx: decimalDetail(formatScaled(fee.energyFeeSun, 6)),
    chainBandwidthFeeTrx: decimalDetail(formatScaled(fee.netFeeSun, 6)),
    chainEnergyUsed: Number(fee.energyUsed),
    chainBandwidthUsed: Number(fee.bandwidthUsed),
  }
}
