import { describe, expect, it } from 'vitest'
import { formatDecimalText, formatTimeLeft, formatVnd, isDecimalText } from './format.js'

describe('formatDecimalText', () => {
  it.each([
    ['0', '0', '0'],
    ['0.00000001', '0.00000001', '0,00000001'],
    ['0.0025', '0.0025', '0,0025'],
    ['999', '999', '999'],
    ['1000', '1,000', '1.000'],
    ['250000', '250,000', '250.000'],
    ['1234567.891', '1,234,567.891', '1.234.567,891'],
    ['20999999.97690000', '20,999,999.97690000', '20.999.999,97690000'],
    ['007.5', '7.5', '7,5'],
    [
      '123456789012345678901234567890',
      '123,456,789,012,345,678,901,234,567,890',
      '123.456.789.012.345.678.901.234.567.890',
    ],
  ])('%s -> en %s, vi %s', (text, en, vi) => {
    expect(formatDecimalText(text, 'en')).toBe(en)
    expect(formatDecimalText(text, 'vi')).toBe(vi)
  })

  it('keeps digits a float would lose', () => {
    // 0.1 + 0.2 style artefacts or rounding of 17+ significant digits would show here.
    expect(formatDecimalText('90071992547409.93000001', 'en')).toBe('90,071,992,547,409.93000001')
  })

  it.each(['', '-1', '1e-8', '1.', '.5', '1,000', 'NaN', ' 1', '1'.repeat(65)])('refuses %j', (text) => {
    expect(isDecimalText(text)).toBe(false)
    expect(() => formatDecimalText(text, 'en')).toThrow()
  })
})

describe('formatVnd', () => {
  it.each([
    ['500000', '500,000 VND', '500.000 ₫'],
    ['1', '1 VND', '1 ₫'],
    ['999999999999', '999,999,999,999 VND', '999.999.999.999 ₫'],
  ])('%s -> %s / %s', (dong, en, vi) => {
    expect(formatVnd(dong, 'en')).toBe(en)
    expect(formatVnd(dong, 'vi')).toBe(vi)
  })

  it.each(['500000.5', '-1', '', '5e5'])('refuses %j', (dong) => {
    expect(() => formatVnd(dong, 'en')).toThrow()
  })
})

describe('formatTimeLeft', () => {
  it.each([
    [-5000, '0:00', '0:00'],
    [0, '0:00', '0:00'],
    [1, '0:01', '0:01'],
    [999, '0:01', '0:01'],
    [1000, '0:01', '0:01'],
    [59_000, '0:59', '0:59'],
    [60_000, '1:00', '1:00'],
    [14 * 60_000 + 59_000, '14:59', '14:59'],
    [3_600_000, '1:00:00', '1:00:00'],
    [3_600_000 + 62_000, '1:01:02', '1:01:02'],
    [86_400_000, '1 day 00:00:00', '1 ngày 00:00:00'],
    [2 * 86_400_000 + 3_723_000, '2 days 01:02:03', '2 ngày 01:02:03'],
  ])('%d ms -> %s / %s', (ms, en, vi) => {
    expect(formatTimeLeft(ms, 'en')).toBe(en)
    expect(formatTimeLeft(ms, 'vi')).toBe(vi)
  })
})
