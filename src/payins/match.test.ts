import { describe, expect, it } from 'vitest'
import { amountOutcome, memoCandidates, newMemo, normaliseMemo } from './match.js'

describe('transfer memos', () => {
  it('are SVP and 7 Crockford base32 characters, and differ', () => {
    const memos = new Set(Array.from({ length: 2000 }, newMemo))
    expect(memos.size).toBe(2000)
    for (const m of memos) expect(m).toMatch(/^SVP[0-9ABCDEFGHJKMNPQRSTVWXYZ]{7}$/)
  })

  it('normalise as banks mangle them: accents, đ, case and punctuation go', () => {
    expect(normaliseMemo('Thanh toán đơn hàng svp-7k2m.9qx')).toBe('THANHTOANDONHANGSVP7K2M9QX')
    expect(normaliseMemo('ĐỖ Đức')).toBe('DODUC')
  })

  const memo = 'SVP7K2M9QX'
  it.each([
    ['exact', 'SVP7K2M9QX'],
    ['lower case', 'svp7k2m9qx'],
    ['spaces', 'svp 7k2m 9qx'],
    ['dots and dashes', 'S.V.P-7K2M-9QX'],
    ['accents injected', 'SVP7K2M9QẌ thanh toán'],
    ['bank prefix and suffix', 'MBVCB.3278.012345.SVP7K2M9QX.CT tu 0123 NGUYEN VAN A'],
    ['glued to text', 'IBFTSVP7K2M9QXNGUYEN'],
  ])('a memo is found when %s', (_name, text) => {
    expect(memoCandidates(text)).toContain(memo)
  })

  it('reads O as 0 and I or L as 1 in the memo body, as Crockford decoding does', () => {
    expect(memoCandidates('svp0k1m9qx')).toEqual(['SVP0K1M9QX'])
    expect(memoCandidates('svp ok im 9qx')).toEqual(['SVP0K1M9QX'])
    expect(memoCandidates('SVPOKLM9QX')).toEqual(['SVP0K1M9QX'])
  })

  it('finds nothing without a token of the format, and every candidate in order', () => {
    expect(memoCandidates('chuyen tien')).toEqual([])
    expect(memoCandidates('SVP7K2M9Q')).toEqual([])
    expect(memoCandidates('SVP7K2M9QU')).toEqual([])
    expect(memoCandidates('SVPABCDEFG then SVP7K2M9QX')).toEqual(['SVPABCDEFG', 'SVP7K2M9QX'])
  })

  it('compares amounts', () => {
    expect(amountOutcome(100n, 100n)).toBe('exact')
    expect(amountOutcome(100n, 99n)).toBe('underpaid')
    expect(amountOutcome(100n, 101n)).toBe('overpaid')
  })
})
