import { createHmac, timingSafeEqual } from 'node:crypto'

/** Length of a SHA-256 HMAC written as hex. */
const SIGNATURE_HEX_LENGTH = 64

/**
 * Signs a webhook body: lowercase hex HMAC-SHA256 of the exact body bytes under the webhook
 * secret. A string body is signed as its UTF-8 bytes, which is what goes on the wire; callers
 * should nonetheless sign the same Buffer they send, so that nothing re-serialises in between.
 */
export function signBody(rawBody: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex')
}

/**
 * Checks a webhook signature over the raw body bytes in constant time. The comparison is between
 * the two digests' bytes, so its duration does not reveal how many leading characters matched.
 * Any value that is not 64 hex digits is simply a wrong signature: it returns false, never throws.
 * Upper-case hex is accepted, since it names the same bytes.
 */
export function verifySignature(rawBody: Buffer | string, secret: string, signatureHex: string): boolean {
  if (signatureHex.length !== SIGNATURE_HEX_LENGTH || !/^[0-9a-fA-F]+$/.test(signatureHex)) return false
  const expected = createHmac('sha256', secret).update(rawBody).digest()
  const given = Buffer.from(signatureHex, 'hex')
  // Both are 32 bytes by now; the check keeps timingSafeEqual from ever throwing on a length mismatch.
  if (given.length !== expected.length) return false
  return timingSafeEqual(expected, given)
}
