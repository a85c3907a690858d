import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  amountJson,
  bpsOfCeil,
  ceilDiv,
  DecimalText,
  formatMinor,
  formatRate,
  formatScaled,
  MAX_MINOR,
  normaliseDecimal,
  parseAmount,
  parseRate,
} from './amount.js'
import { PRECISION } from './currency.js'

const ok = (minor: bigint) => ({ ok: true, minor })
const issueOf = (input: unknown, ccy: string) => {
  const r = parseAmount(input, ccy)
  return r.ok ? `accepted as ${r.minor}` : r.issue
}

describe('normaliseDecimal', () => {
  it('passes plain decimals through unchanged', () => {
    expect(normaliseDecimal('0.5')).toBe('0.5')
    expect(normaliseDecimal('-12.340')).toBe('-12.340')
    expect(normaliseDecimal('007')).toBe('007')
  })

  it('expands exponents into plain decimal text', () => {
    expect(normaliseDecimal('1e-8')).toBe('0.00000001')
    expect(normaliseDecimal('1.23e-5')).toBe('0.0000123')
    expect(normaliseDecimal('1.5E+2')).toBe('150')
    expect(normaliseDecimal('12e0')).toBe('12')
    expect(normaliseDecimal('-1.5e-1')).toBe('-0.15')
    expect(normaliseDecimal('0.0e5')).toBe('0')
    expect(normaliseDecimal('2.5e1')).toBe('25')
  })

  it('refuses non-numbers and absurd exponents', () => {
    for (const bad of [
      'NaN',
      'Infinity',
      '-Infinity',
      '',
      '.5',
      '5.',
      '+1',
      '0x10',
      '1e',
      'e5',
      '1e+',
      '1.2.3',
      '1 000',
      '1e401',
      '1e-401',
    ]) {
      expect(normaliseDecimal(bad), bad).toBeNull()
    }
  })
})

describe('parseAmount', () => {
  it('reads decimal strings and JSON numbers into minor units', () => {
    expect(parseAmount('0.5', 'BTC')).toEqual(ok(50_000_000n))
    expect(parseAmount(0.5, 'BTC')).toEqual(ok(50_000_000n))
    expect(parseAmount('0.00000001', 'BTC')).toEqual(ok(1n))
    expect(parseAmount('21000000', 'BTC')).toEqual(ok(2_100_000_000_000_000n))
    expect(parseAmount('1.5', 'USDT')).toEqual(ok(1_500_000n))
    expect(parseAmount('19.99', 'USD')).toEqual(ok(1999n))
    expect(parseAmount(' 0.1 ', 'USD')).toEqual(ok(10n))
  })

  it('accepts exponents, as a JSON number may be written', () => {
    expect(parseAmount(1e-8, 'BTC')).toEqual(ok(1n))
    expect(parseAmount('1E-8', 'BTC')).toEqual(ok(1n))
    expect(parseAmount('1.5e3', 'USD')).toEqual(ok(150_000n))
    expect(parseAmount('2.47e9', 'VND')).toEqual(ok(2_470_000_000n))
  })

  it('keeps trailing zeros within the precision', () => {
    expect(parseAmount('0.10000000', 'BTC')).toEqual(ok(10_000_000n))
    expect(parseAmount('1.500000', 'USDT')).toEqual(ok(1_500_000n))
    expect(parseAmount('19.90', 'USD')).toEqual(ok(1990n))
  })

  it('refuses more decimals than the currency has, trailing zeros included (contract section 11)', () => {
    // "500.000" is how Vietnamese writes five hundred thousand: never read it as 500 dong.
    expect(issueOf('500.000', 'VND')).toBe('has more than 0 decimal places for VND')
    expect(issueOf('1000.0', 'VND')).toBe('has more than 0 decimal places for VND')
    expect(issueOf('5.0', 'JPY')).toBe('has more than 0 decimal places for JPY')
    expect(issueOf('0.100000000', 'BTC')).toBe('has more than 8 decimal places for BTC')
    expect(issueOf('0.10000000000000000000', 'BTC')).toBe('has more than 8 decimal places for BTC')
    expect(issueOf('1.0000000', 'USDT')).toBe('has more than 6 decimal places for USDT')
    expect(issueOf('19.900', 'USD')).toBe('has more than 2 decimal places for USD')
    // A JSON number's source text counts as written, as does an exponent's expansion.
    expect(issueOf('500.000e0', 'VND')).toBe('has more than 0 decimal places for VND')
  })

  it('refuses more decimals than the currency has', () => {
    expect(issueOf('0.' + '1'.padStart(30, '0'), 'BTC')).toBe('has more than 8 decimal places for BTC')
    expect(issueOf('0.000000001', 'BTC')).toBe('has more than 8 decimal places for BTC')
    expect(issueOf('1000.5', 'VND')).toBe('has more than 0 decimal places for VND')
    expect(issueOf('0.001', 'USD')).toBe('has more than 2 decimal places for USD')
    expect(issueOf(0.30000000000000004, 'USD')).toBe('has more than 2 decimal places for USD')
  })

  it('refuses zero, minus zero and negatives', () => {
    expect(issueOf('0', 'BTC')).toBe('must be greater than zero')
    expect(issueOf('0.000', 'BTC')).toBe('must be greater than zero')
    expect(issueOf('-0', 'BTC')).toBe('must be greater than zero')
    expect(issueOf(-0, 'BTC')).toBe('must be greater than zero')
    expect(issueOf('-1', 'BTC')).toBe('must be positive')
    expect(issueOf(-0.5, 'USD')).toBe('must be positive')
  })

  it('refuses non-finite values and text that is not a number', () => {
    for (const bad of [
      'NaN',
      NaN,
      Infinity,
      -Infinity,
      'Infinity',
      '',
      'abc',
      '0x10',
      '1,5',
      '+1',
      '.5',
      '1e',
      '1e401',
    ]) {
      expect(issueOf(bad, 'BTC'), String(bad)).toBe('is not a finite decimal number')
    }
    expect(issueOf('1'.repeat(65), 'VND')).toBe('is not a finite decimal number')
  })

  it('refuses values that are not numbers or strings', () => {
    for (const bad of [null, undefined, true, {}, [], 1n]) {
      expect(issueOf(bad, 'BTC')).toBe('must be a number or a decimal string')
    }
  })

  it('refuses amounts beyond the largest single amount, however written', () => {
    expect(issueOf('1e308', 'BTC')).toBe('is too large')
    expect(issueOf(1e308, 'BTC')).toBe('is too large')
    expect(issueOf(Number.MAX_VALUE, 'VND')).toBe('is too large')
    expect(parseAmount('1000000000', 'BTC')).toEqual(ok(MAX_MINOR))
    expect(issueOf('1000000000.00000001', 'BTC')).toBe('is too large')
  })

  it('round-trips every amount through formatMinor in every currency', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: MAX_MINOR }),
        fc.constantFrom(...Object.keys(PRECISION)),
        (minor, ccy) => {
          expect(parseAmount(formatMinor(minor, ccy), ccy)).toEqual(ok(minor))
        },
      ),
    )
  })
})

describe('formatting', () => {
  it('writes minor units as exact decimal text without exponents or trailing zeros', () => {
    expect(formatMinor(1n, 'BTC')).toBe('0.00000001')
    expect(formatMinor(100n, 'BTC')).toBe('0.000001')
    expect(formatMinor(50_000_000n, 'BTC')).toBe('0.5')
    expect(formatMinor(100_000_000n, 'BTC')).toBe('1')
    expect(formatMinor(0n, 'BTC')).toBe('0')
    expect(formatMinor(-150n, 'USD')).toBe('-1.5')
    expect(formatMinor(-1n, 'BTC')).toBe('-0.00000001')
    expect(formatMinor(2_470_000_000n, 'VND')).toBe('2470000000')
    expect(formatMinor(1n, 'ETH')).toBe('0.000000000000000001')
    expect(formatScaled(12345n, 0)).toBe('12345')
    expect(formatScaled(30n, 1)).toBe('3')
  })

  it('wraps amounts for JSON as DecimalText', () => {
    const d = amountJson(30n, 'USD')
    expect(d).toBeInstanceOf(DecimalText)
    expect(d.text).toBe('0.3')
    expect(JSON.stringify({ a: d })).toBe('{"a":0.3}')
  })
})

describe('rates', () => {
  it('parses decimal and exponent text exactly', () => {
    expect(parseRate('27.94')).toEqual({ num: 2794n, scale: 2 })
    expect(parseRate('95000')).toEqual({ num: 95000n, scale: 0 })
    expect(parseRate('1e-3')).toEqual({ num: 1n, scale: 3 })
    expect(formatRate(parseRate('0.10'))).toBe('0.1')
    expect(formatRate(parseRate('95123.123456789012345678'))).toBe('95123.123456789012345678')
  })

  it('refuses negative and malformed rates', () => {
    expect(() => parseRate('-1')).toThrow(/invalid rate/)
    expect(() => parseRate('abc')).toThrow(/invalid rate/)
    expect(() => parseRate('')).toThrow(/invalid rate/)
  })
})

describe('rounding helpers', () => {
  it('divides rounding up', () => {
    expect(ceilDiv(10n, 5n)).toBe(2n)
    expect(ceilDiv(11n, 5n)).toBe(3n)
    expect(ceilDiv(0n, 5n)).toBe(0n)
    expect(() => ceilDiv(1n, 0n)).toThrow()
    expect(() => ceilDiv(-1n, 5n)).toThrow()
  })

  it('takes basis points rounding up, as fees are', () => {
    expect(bpsOfCeil(10_000n, 50n)).toBe(50n)
    expect(bpsOfCeil(10_001n, 50n)).toBe(51n)
    expect(bpsOfCeil(1n, 1n)).toBe(1n)
    expect(bpsOfCeil(1_000n, 0n)).toBe(0n)
  })
})
