import { randomBytes } from 'node:crypto'
import { assert } from '../shared/assert.js'

/**
 * Response headers of the hosted pages. The pages run no inline code except what carries the
 * per-response nonce, load nothing from other origins and cannot be framed.
 */

export const PAGE_CONTENT_TYPE = 'text/html; charset=utf-8'
export const PAGE_SCRIPT_CONTENT_TYPE = 'text/javascript; charset=utf-8'
export const PAGE_CSS_CONTENT_TYPE = 'text/css; charset=utf-8'

const NONCE_BYTES = 16
/** Base64 or base64url, at least 128 bits: nothing that could break out of a header or attribute. */
const NONCE_RE = /^[A-Za-z0-9+/_-]{22,}={0,2}$/

/** A fresh nonce for one response, 128 random bits in base64. */
export function createNonce(): string {
  return randomBytes(NONCE_BYTES).toString('base64')
}

export function isValidNonce(nonce: string): boolean {
  return nonce.length <= 128 && NONCE_RE.test(nonce)
}

/**
 * Security headers for an invoice or message page rendered with `nonce`. The policy allows our own
 * script and stylesheet files and the nonce-carrying inline `<style>`/`<script>`; `connect-src
 * 'self'` lets the page open its stream and nothing else; `img-src data:` covers the empty favicon.
 */
export function pageSecurityHeaders(nonce: string): Record<string, string> {
  assert(isValidNonce(nonce), 'invalid CSP nonce')
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'nonce-${nonce}'`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
  return {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
  }
}
