import { describe, expect, it } from 'vitest'
import { parseRate } from '../shared/amount.js'
import { maxFeeWeiOf, weiToUsdtMinorCeil } from './eth-payout.js'

describe('the network fee of an Ethereum payout in USDT', () => {
  const usdt = parseRate('95010')
  const eth = parseRate('27.94')

  it('is the fee cap times the gas limit, in wei', () => {
    expect(maxFeeWeiOf({ maxFeePerGasWei: 20_000_000_000n, gasLimit: 65_000n })).toBe(1_300_000_000_000_000n)
  })

  it('converts wei at the ETH rate, rounding up once to the micro-USDT', () => {
    // 0.0013 ETH x 95010 / 27.94 = 4.420651395848... USDT
    expect(weiToUsdtMinorCeil(1_300_000_000_000_000n, usdt, eth)).toBe(4_420_652n)
    // An exact amount is not rounded: 1 ETH at 2 BTC per ETH and 100 USDT per BTC is 200 USDT.
    expect(weiToUsdtMinorCeil(10n ** 18n, parseRate('100'), parseRate('0.5'))).toBe(200_000_000n)
    // The smallest fee still costs a micro-USDT, never nothing.
    expect(weiToUsdtMinorCeil(1n, usdt, eth)).toBe(1n)
    expect(weiToUsdtMinorCeil(0n, usdt, eth)).toBe(0n)
  })

  it('never charges a customer more than one micro-USDT above the exact value', () => {
    for (const wei of [1n, 999_999n, 123_456_789_012_345n, 7n * 10n ** 15n, 10n ** 18n + 1n]) {
      const minor = weiToUsdtMinorCeil(wei, usdt, eth)
      // exact = wei x 95010 x 100 x 1e6 / (1e18 x 2794): minor - 1 < exact <= minor
      const num = wei * 95_010n * 100n * 1_000_000n
      const den = 10n ** 18n * 2_794n
      expect(minor * den >= num).toBe(true)
      expect((minor - 1n) * den < num).toBe(true)
    }
  })
})
