import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { allInRate, convertDown, FX_SIGNIFICANT_DIGITS, ONE, sourceForDest } from './fx.js'
import { formatRate, parseRate, type Rate } from '../shared/amount.js'

const r = (text: string): Rate => parseRate(text)
const text = (rate: Rate) => formatRate(rate)
const significantDigits = (rate: Rate) => rate.num.toString().replace(/^0+/, '').length

/** An arbitrary positive rate as decimal text: up to 12 integer digits and 10 decimals. */
const rateArb = fc
  .tuple(fc.bigInt({ min: 1n, max: 10n ** 22n }), fc.integer({ min: 0, max: 10 }))
  .map(([num, scale]): Rate => ({ num, scale }))

describe('allInRate', () => {
  it('is the ratio of the two BTC rates less the spread', () => {
    expect(text(allInRate(ONE, r('95000'), 50n))).toBe('94525')
    expect(text(allInRate(ONE, r('95000'), 0n))).toBe('95000')
    expect(text(allInRate(r('95000'), r('2470000000'), 0n))).toBe('26000')
    expect(text(allInRate(r('95000'), r('2470000000'), 50n))).toBe('25870')
    expect(text(allInRate(ONE, r('27.94'), 0n))).toBe('27.94')
    expect(text(allInRate(r('95010'), r('95000'), 0n))).toBe('0.999894747921')
  })

  it('keeps 12 significant digits, rounded down', () => {
    // 1 / 95000 = 0.0000105263157894736842...
    expect(text(allInRate(r('95000'), ONE, 0n))).toBe('0.0000105263157894')
    // 87500 / 95000 = 0.92105263157894736842...
    expect(text(allInRate(r('95000'), r('87500'), 0n))).toBe('0.921052631578')
    // 2470000000 / 3 = 823333333.333...
    expect(text(allInRate(r('3'), r('2470000000'), 0n))).toBe('823333333.333')
    // Whole-number results keep every integer digit: they are exact, never rounded up.
    expect(text(allInRate(r('0.000001'), r('2470000000'), 0n))).toBe('2470000000000000')
  })

  it('never exceeds the exact rate and is within one unit of its last digit', () => {
    fc.assert(
      fc.property(rateArb, rateArb, fc.bigInt({ min: 0n, max: 5000n }), (src, dest, spreadBps) => {
        const got = allInRate(src, dest, spreadBps)
        // A whole number of 12 digits or more cannot be shortened without changing it; it stays exact.
        if (got.scale > 0) expect(significantDigits(got)).toBeLessThanOrEqual(FX_SIGNIFICANT_DIGITS)
        // exact = dest * 10^src.scale * (10000 - spread) / (src * 10^dest.scale * 10000)
        const exactNum = dest.num * 10n ** BigInt(src.scale) * (10_000n - spreadBps)
        const exactDen = src.num * 10n ** BigInt(dest.scale) * 10_000n
        // got = got.num / 10^got.scale <= exact
        expect(got.num * exactDen <= exactNum * 10n ** BigInt(got.scale)).toBe(true)
        if (exactNum === 0n) return
        // (got.num + 1) / 10^got.scale > exact: nothing larger with the same digits fits.
        expect((got.num + 1n) * exactDen > exactNum * 10n ** BigInt(got.scale)).toBe(true)
      }),
    )
  })
})

describe('convertDown', () => {
  it('converts at the rate and rounds down to the destination precision', () => {
    expect(convertDown(100_000_000n, 'BTC', 'USD', r('94525'))).toBe(9_452_500n)
    expect(convertDown(1n, 'BTC', 'USD', r('95000'))).toBe(0n)
    expect(convertDown(11n, 'BTC', 'USD', r('95000'))).toBe(1n)
    expect(convertDown(100n, 'USD', 'VND', r('26000'))).toBe(26_000n)
    expect(convertDown(1n, 'USD', 'VND', r('25870'))).toBe(258n)
    expect(convertDown(2_470_000_000n, 'VND', 'BTC', r('0.000000000404858299595'))).toBe(99_999_999n)
    expect(convertDown(1_000_000n, 'USDT', 'BTC', r('0.0000105251026207'))).toBe(1052n)
  })
})

describe('sourceForDest', () => {
  it('finds the smallest source amount, rounding up', () => {
    // 1 cent at 95000 USD/BTC costs 10.526... sats.
    expect(sourceForDest(1n, 'BTC', 'USD', r('95000'))).toBe(11n)
    expect(sourceForDest(9_452_500n, 'BTC', 'USD', r('94525'))).toBe(100_000_000n)
    expect(sourceForDest(26_000n, 'USD', 'VND', r('26000'))).toBe(100n)
    expect(sourceForDest(26_001n, 'USD', 'VND', r('26000'))).toBe(101n)
  })

  it('is the least source whose conversion reaches the destination amount', () => {
    const ccys = ['BTC', 'USD', 'VND', 'USDT', 'JPY'] as const
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 15n }),
        fc.constantFrom(...ccys),
        fc.constantFrom(...ccys),
        rateArb,
        (destMinor, src, dest, rate) => {
          const source = sourceForDest(destMinor, src, dest, rate)
          expect(convertDown(source, src, dest, rate) >= destMinor).toBe(true)
          expect(source === 0n || convertDown(source - 1n, src, dest, rate) < destMinor).toBe(true)
        },
      ),
    )
  })
})
