import { describe, expect, it } from 'vitest'
import { createNonce, isValidNonce, pageSecurityHeaders } from './headers.js'

describe('pageSecurityHeaders', () => {
  it('sets a strict policy bound to the nonce', () => {
    const nonce = createNonce()
    const headers = pageSecurityHeaders(nonce)
    expect(headers['Content-Security-Policy']).toBe(
      `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'self' 'nonce-${nonce}'; ` +
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
    expect(headers['X-Content-Type-Options']).toBe('nosniff')
    expect(headers['Referrer-Policy']).toBe('no-referrer')
    expect(headers['Cache-Control']).toBe('no-store')
  })

  it('never allows inline code or eval', () => {
    const csp = pageSecurityHeaders(createNonce())['Content-Security-Policy']!
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).not.toContain('unsafe-eval')
    expect(csp).not.toContain('*')
  })

  it('refuses nonces that could break out of the header or attribute', () => {
    for (const bad of [
      '',
      'short',
      "abcdefghijklmnopqrstuvwxyz'; script-src *",
      'abcdefghijklmnopqrstuv"x',
      'abcdefghijklmnopqrstuv\r\nX: y',
    ]) {
      expect(isValidNonce(bad)).toBe(false)
      expect(() => pageSecurityHeaders(bad)).toThrow()
    }
  })
})

describe('createNonce', () => {
  it('makes fresh 128-bit nonces', () => {
    const a = createNonce()
    expect(isValidNonce(a)).toBe(true)
    expect(Buffer.from(a, 'base64')).toHaveLength(16)
    expect(createNonce()).not.toBe(a)
  })
})
