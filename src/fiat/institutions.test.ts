import { describe, expect, it } from 'vitest'
import { findInstitution, listInstitutions } from './institutions.js'

describe('institutions', () => {
  it('lists Vietnamese banks by NAPAS BIN for VND only', () => {
    const vnd = listInstitutions('VND')
    expect(vnd.length).toBeGreaterThanOrEqual(50)
    expect(listInstitutions('vnd')).toBe(vnd)
    expect(listInstitutions('USD')).toEqual([])
    expect(listInstitutions('BTC')).toEqual([])
    for (const institution of vnd) {
      expect(Object.keys(institution).sort()).toEqual(['code', 'name', 'shortName'])
      expect(institution.code).toMatch(/^\d{6}$/)
      expect(institution.name.length).toBeGreaterThan(0)
      expect(institution.shortName.length).toBeGreaterThan(0)
    }
    expect(new Set(vnd.map((institution) => institution.code)).size).toBe(vnd.length)
  })

  it('finds the well-known banks by their BIN', () => {
    const known: Record<string, string> = {
      '970436': 'Vietcombank',
      '970415': 'VietinBank',
      '970418': 'BIDV',
      '970405': 'Agribank',
      '970407': 'Techcombank',
      '970422': 'MB',
      '970416': 'ACB',
      '970432': 'VPBank',
      '970423': 'TPBank',
      '970403': 'Sacombank',
      '422589': 'CIMB',
      '458761': 'HSBC',
      '796500': 'DBS',
      '546034': 'Cake',
      '546035': 'Ubank',
    }
    for (const [code, shortName] of Object.entries(known)) {
      expect(findInstitution(code)?.shortName).toBe(shortName)
    }
  })

  it('knows no other codes', () => {
    expect(findInstitution('000000')).toBeUndefined()
    expect(findInstitution('97043')).toBeUndefined()
    expect(findInstitution(' 970436')).toBeUndefined()
    expect(findInstitution('')).toBeUndefined()
  })

  it('hands out data callers cannot change', () => {
    const vnd = listInstitutions('VND')
    expect(Object.isFrozen(vnd)).toBe(true)
    expect(Object.isFrozen(vnd[0])).toBe(true)
  })
})
