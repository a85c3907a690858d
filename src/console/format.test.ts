import { describe, expect, it } from 'vitest'
import { day, money, when } from './format.js'
import { safeNext } from './errors.js'
import { consoleSecurityHeaders } from './headers.js'
import { createNonce } from '../pages/headers.js'

describe('console formatting and redirects', () => {
  it('writes amounts exactly, with the language separators and a sign', () => {
    expect(money(123456789012345678n, 'BTC', 'en')).toBe('1,234,567,890.12345678 BTC')
    expect(money(-10050n, 'BTC', 'en')).toBe('−0.0001005 BTC')
    expect(money(945n, 'USD', 'vi')).toBe('9,45 USD')
    expect(money(1234567n, 'VND', 'vi')).toBe('1.234.567 VND')
  })

  it('writes times in UTC', () => {
    expect(when(0)).toBe('1970-01-01 00:00:00 UTC')
    expect(when(null)).toBe('—')
    expect(day(20_416)).toBe('2025-11-24')
  })

  it('goes back only to a path inside the console after signing in', () => {
    expect(safeNext('/admin/console/accounts?q=x')).toBe('/admin/console/accounts?q=x')
    expect(safeNext('/admin/console?lang=vi')).toBe('/admin/console?lang=vi')
    for (const bad of [
      'https://evil.example/admin/console',
      '//evil.example',
      '/admin/console//evil.example',
      '/admin/console/../../x',
      '/admin/console\\@evil',
      '/admin/consoleX',
      '/admin/audit',
      42,
      undefined,
    ])
      expect(safeNext(bad), String(bad)).toBe('/admin/console')
  })

  it('refuses encoded dot segments, tabs and anything a browser would resolve elsewhere', () => {
    for (const bad of [
      '/admin/console/%2e%2e/%2e%2e/pay/x',
      '/admin/console/%2E%2E/%2e%2e/admin/audit',
      '/admin/console/.%2e/.%2e/x',
      '/admin/console/%2e/../../x',
      '/admin/console/.\t./.\t./pay/x',
      '/admin/console/\t/evil.example',
      '/admin/console/%2f%2fevil.example',
      '/admin/console/%5c%5cevil.example',
      '/admin/console/ x',
      '/admin/console/x#frag',
      '/admin/console/\u00e9',
    ])
      expect(safeNext(bad), JSON.stringify(bad)).toBe('/admin/console')
    // A path that is already normal comes back as it is.
    expect(safeNext('/admin/console/transactions/txn_1?state=failed&page=2')).toBe(
      '/admin/console/transactions/txn_1?state=failed&page=2',
    )
    expect(safeNext('/admin/console/accounts?q=a%20b')).toBe('/admin/console/accounts?q=a%20b')
  })

  it('lets only the nonce run scripts and styles, and forms post to this origin only', () => {
    const nonce = createNonce()
    const csp = consoleSecurityHeaders(nonce)['Content-Security-Policy']
    expect(csp).toContain(`script-src 'nonce-${nonce}'`)
    expect(csp).toContain("form-action 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(() => consoleSecurityHeaders('x"; script-src *')).toThrow()
  })
})
