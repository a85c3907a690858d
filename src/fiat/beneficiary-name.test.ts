import { describe, expect, it } from 'vitest'
import { checkExpectedName, nameMatches, normalizeName } from './beneficiary-name.js'

describe('normalizeName', () => {
  it('drops diacritics, case and whitespace, and reads đ as D', () => {
    expect(normalizeName('  Nguyễn   Văn\tAn ')).toBe('NGUYENVANAN')
    expect(normalizeName('Đỗ Hữu Đức')).toBe('DOHUUDUC')
    // Precomposed (NFC) and decomposed (NFD) input give the same text.
    expect(normalizeName('Trần Thị Hoà'.normalize('NFD'))).toBe(
      normalizeName('Trần Thị Hoà'.normalize('NFC')),
    )
  })
})

describe('nameMatches', () => {
  it('matches the bank’s NAPAS form whatever the accents, case and spacing', () => {
    expect(nameMatches('Nguyễn Văn An', 'NGUYEN VAN AN')).toBe(true)
    expect(nameMatches('nguyen  van   an', 'NGUYEN VAN AN')).toBe(true)
    expect(nameMatches('Đặng Thị Hà', 'DANG THI HA')).toBe(true)
  })

  it('refuses another name, a longer or shorter one', () => {
    expect(nameMatches('Nguyễn Văn Anh', 'NGUYEN VAN AN')).toBe(false)
    expect(nameMatches('Nguyễn Văn', 'NGUYEN VAN AN')).toBe(false)
    expect(nameMatches('Trần Văn An', 'NGUYEN VAN AN')).toBe(false)
  })

  it('lets each * of a masked name stand for exactly one character', () => {
    expect(nameMatches('Trần Thị Hoa', 'TRAN T** HOA')).toBe(true)
    expect(nameMatches('Trần Thu Hoa', 'TRAN T** HOA')).toBe(true)
    expect(nameMatches('Trần Thanh Hoa', 'TRAN T** HOA')).toBe(false)
    expect(nameMatches('Trần Hữu Hoa', 'TRAN T** HOA')).toBe(false)
    // A name the bank masks entirely confirms nothing.
    expect(nameMatches('Lê Anh', '*****')).toBe(false)
    expect(nameMatches('Lê Anh', 'L****')).toBe(true)
  })
})

describe('checkExpectedName', () => {
  it('accepts absence and a name, refuses blank, too long and control characters without echoing', () => {
    expect(checkExpectedName(undefined)).toEqual({ ok: true, value: undefined })
    expect(checkExpectedName('  Nguyễn Văn An ')).toEqual({ ok: true, value: 'Nguyễn Văn An' })
    for (const bad of ['   ', 'x'.repeat(141), 'An\u202eB', 42, null]) {
      const r = checkExpectedName(bad)
      expect(r.ok, String(bad)).toBe(false)
      if (!r.ok) expect(r.details[0]?.field).toBe('destReq.reqDetails.expectedName')
    }
  })
})
