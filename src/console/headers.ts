import { assert } from '../shared/assert.js'
import { isValidNonce } from '../pages/headers.js'

/**
 * Response headers of the console's pages. As for the invoice page, only what carries the
 * response's nonce may run or style the page and nothing loads from elsewhere; unlike it, the
 * console has forms, which may post to this origin only.
 */
export function consoleSecurityHeaders(nonce: string): Record<string, string> {
  assert(isValidNonce(nonce), 'invalid CSP nonce')
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
  }
}
