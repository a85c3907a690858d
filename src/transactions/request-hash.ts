import { createHash } from 'node:crypto'
import { normaliseDecimal } from '../shared/amount.js'
import { canonicalAddress } from '../shared/address-spelling.js'

/**
 * What tells a retry from a different request with the same extRefId: a hash of the request as the
 * service reads it, not as the client spelled it. Amounts are compared by value (`"0.0010"`,
 * `"0.001"`, `0.001` and `1e-3` are one amount), a `deductNetworkFeesFromDest` of false is the
 * same as none, and an address or invoice is compared in the spelling the service stores (bech32 in
 * lower case). Anything else is compared as parsed JSON, keys in any order.
 */
export function requestHash(body: unknown): string {
  return sha256(canonical(readAsService(body)))
}

/**
 * The hash of the body as written, which transactions created before amounts were compared by
 * value carry: a retry of one of those is still recognised.
 */
export function legacyRequestHash(body: unknown): string {
  return sha256(canonical(body))
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

function readAsService(body: unknown): unknown {
  if (!isObject(body)) return body
  const out: Record<string, unknown> = { ...body }
  if (out.deductNetworkFeesFromDest === false) delete out.deductNetworkFeesFromDest
  for (const side of ['sourceReq', 'destReq']) {
    const req = out[side]
    if (!isObject(req)) continue
    const read: Record<string, unknown> = { ...req }
    if (req.amtRequested !== undefined) read.amtRequested = decimalValue(req.amtRequested)
    if (isObject(req.reqDetails)) read.reqDetails = spelledAsStored(req.reqDetails)
    out[side] = read
  }
  return out
}

/**
 * One spelling per decimal value: no exponent, no leading zeros, no trailing fraction zeros.
 * Text that is not a decimal number is kept as it is (such a request is refused anyway).
 */
export function decimalValue(amount: unknown): unknown {
  if (typeof amount !== 'string' && typeof amount !== 'number') return amount
  const text = typeof amount === 'number' ? String(amount) : amount.trim()
  const plain = text.length <= 64 ? normaliseDecimal(text) : null
  if (plain === null) return amount
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(plain)!
  const whole = m[2]!.replace(/^0+(?=\d)/, '')
  const frac = (m[3] ?? '').replace(/0+$/, '')
  const negative = m[1] !== undefined && !(whole === '0' && frac === '')
  return `${negative ? '-' : ''}${whole}${frac ? '.' + frac : ''}`
}

function spelledAsStored(details: Record<string, unknown>): Record<string, unknown> {
  const out = { ...details }
  if (typeof out.address === 'string') out.address = canonicalAddress(out.address.trim())
  if (typeof out.paymentRequest === 'string') {
    const invoice = out.paymentRequest.trim().replace(/^lightning:/i, '')
    // Mixed case is refused anyway; only a single-case invoice has one stored spelling.
    if (invoice === invoice.toUpperCase()) out.paymentRequest = invoice.toLowerCase()
    else if (invoice === invoice.toLowerCase()) out.paymentRequest = invoice
  }
  return out
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']'
  if (v && typeof v === 'object') {
    return (
      '{' +
      Object.keys(v)
        .sort()
        .map((k) => JSON.stringify(k) + ':' + canonical((v as any)[k]))
        .join(',') +
      '}'
    )
  }
  return JSON.stringify(v) ?? 'null'
}
