import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { CURRENCY_DECIMALS, fromMinor, toMinor } from '../src/amounts.js'
import { PRECISION } from '../../../src/shared/currency.js'
import { formatMinor } from '../../../src/shared/amount.js'

describe('amounts', () => {
  it('knows the same currencies and decimals as the server', () => {
    expect(CURRENCY_DECIMALS).toEqual(PRECISION)
  })

  it.each([
    ['0.001', 'BTC', 100_000n],
    ['1', 'BTC', 100_000_000n],
    ['0.00000001', 'BTC', 1n],
    ['12.50', 'USD', 1250n],
    ['2470000', 'VND', 2_470_000n],
    ['-1.5', 'USDT', -1_500_000n],
  ])('toMinor(%s, %s) is %s', (text, ccy, minor) => {
    expect(toMinor(text, ccy)).toBe(minor)
  })

  it('refuses more decimals than the currency has instead of rounding', () => {
    expect(() => toMinor('0.000000001', 'BTC')).toThrow(/more than 8/)
    expect(() => toMinor('1.5', 'VND')).toThrow(/more than 0/)
    expect(() => toMinor('1e3', 'BTC')).toThrow(/Not a decimal/)
    expect(() => toMinor('1', 'XYZ')).toThrow(/Unknown currency/)
    expect(toMinor('1.2345', 'XYZ', { XYZ: 4 })).toBe(12345n)
  })

  it('counts trailing zeros as decimals, as the server does: "500.000" dong is refused, not 500', () => {
    expect(() => toMinor('500.000', 'VND')).toThrow(/more than 0/)
    expect(() => toMinor('0.100000000', 'BTC')).toThrow(/more than 8/)
    expect(() => toMinor('19.900', 'USD')).toThrow(/more than 2/)
    expect(toMinor('0.10000000', 'BTC')).toBe(10_000_000n)
  })

  it('round-trips minor units through decimals and writes them as the server does', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.constantFrom(...Object.keys(PRECISION)),
        (minor, ccy) => {
          const text = fromMinor(minor, ccy)
          expect(toMinor(text, ccy)).toBe(minor)
          if (minor >= 0n) expect(text).toBe(formatMinor(minor, ccy))
        },
      ),
      { numRuns: 1000 },
    )
  })
})
