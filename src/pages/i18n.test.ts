import { describe, expect, it } from 'vitest'
import { LANGS, STRINGS, fill, pickLanguage } from './i18n.js'

describe('pickLanguage', () => {
  it.each([
    ['vi-VN,vi;q=0.9,en;q=0.8', 'vi'],
    ['vi', 'vi'],
    ['VI-vn', 'vi'],
    ['en-US', 'en'],
    ['en-US,en;q=0.9', 'en'],
    ['fr', 'en'],
    ['fr-FR,fr;q=0.9', 'en'],
    ['fr-FR,vi;q=0.5', 'vi'],
    ['en;q=0.5,vi;q=0.8', 'vi'],
    ['vi;q=0.8,en;q=0.8', 'vi'],
    ['en;q=0.8,vi;q=0.8', 'en'],
    ['vi;q=0,en;q=0.1', 'en'],
    ['vi;q=0', 'en'],
    ['vi;q=2', 'en'],
    ['vi;q=abc,en;q=0.1', 'en'],
    ['*', 'en'],
    ['*;q=0.5, vi ; q=0.7', 'vi'],
    ['zh-Hant-TW, vi-VN;q=0.001', 'vi'],
    ['', 'en'],
  ] as const)('%j -> %s', (header, lang) => {
    expect(pickLanguage(header)).toBe(lang)
  })

  it('defaults to English without a header', () => {
    expect(pickLanguage(undefined)).toBe('en')
  })

  it('does not parse absurdly long headers', () => {
    expect(pickLanguage('x,'.repeat(5000) + 'vi')).toBe('en')
  })
})

describe('STRINGS', () => {
  it('has every string in every language, none empty', () => {
    const keys = Object.keys(STRINGS.en).sort()
    for (const lang of LANGS) {
      expect(Object.keys(STRINGS[lang]).sort()).toEqual(keys)
      for (const [key, value] of Object.entries(STRINGS[lang])) expect(value, `${lang}.${key}`).not.toBe('')
    }
  })

  it('writes Vietnamese with its diacritics', () => {
    expect(STRINGS.vi.statusPaid).toBe('Đã thanh toán. Cảm ơn bạn!')
    expect(STRINGS.vi.statusAwaiting).toBe('Đang chờ thanh toán')
    expect(STRINGS.vi.openInWallet).toBe('Mở trong ví')
  })

  it('keeps the same placeholders in both languages', () => {
    const placeholders = (t: string) => (t.match(/\{\w+\}/g) ?? []).sort()
    for (const key of Object.keys(STRINGS.en) as (keyof typeof STRINGS.en)[]) {
      expect(placeholders(STRINGS.vi[key]), key).toEqual(placeholders(STRINGS.en[key]))
    }
  })
})

describe('fill', () => {
  it('replaces known placeholders and leaves unknown ones', () => {
    expect(fill('{have} of {need} {x}', { have: 1, need: 3 })).toBe('1 of 3 {x}')
  })
})
