import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP), on node:crypto alone. Pure: no
 * clock and no storage here; the operators service passes the time and keeps the last step used.
 */
export const TOTP_STEP_S = 30
export const TOTP_DIGITS = 6
/** Steps either side of the current one that are still accepted (clock drift between devices). */
export const TOTP_WINDOW_STEPS = 1
const SECRET_BYTES = 20

export type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512'

/** RFC 4226 section 5.3: HMAC of the 8-byte counter, dynamic truncation, then the low digits. */
export function hotp(
  secret: Buffer,
  counter: bigint,
  digits = TOTP_DIGITS,
  algorithm: TotpAlgorithm = 'sha1',
): string {
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(counter)
  const mac = createHmac(algorithm, secret).update(message).digest()
  const offset = mac[mac.length - 1]! & 0x0f
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits
  return binary.toString().padStart(digits, '0')
}

/** The RFC 6238 time step of a moment (T0 = 0). */
export function totpStep(nowMs: number, stepS = TOTP_STEP_S): bigint {
  return BigInt(Math.floor(nowMs / 1000 / stepS))
}

export function totp(
  secret: Buffer,
  nowMs: number,
  digits = TOTP_DIGITS,
  algorithm: TotpAlgorithm = 'sha1',
): string {
  return hotp(secret, totpStep(nowMs), digits, algorithm)
}

/**
 * The step a code belongs to, within the window around now, or undefined. Every step of the window
 * is compared (in constant time) so that the answer's timing does not tell which step matched.
 */
export function matchTotp(secret: Buffer, code: string, nowMs: number): bigint | undefined {
  if (!/^[0-9]{6}$/.test(code)) return undefined
  const now = totpStep(nowMs)
  const given = Buffer.from(code)
  let matched: bigint | undefined
  for (let d = -TOTP_WINDOW_STEPS; d <= TOTP_WINDOW_STEPS; d++) {
    const step = now + BigInt(d)
    if (timingSafeEqual(Buffer.from(hotp(secret, step)), given) && matched === undefined) matched = step
  }
  return matched
}

export function newTotpSecret(): Buffer {
  return randomBytes(SECRET_BYTES)
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 base32 without padding, the form authenticator apps take. */
export function base32(bytes: Buffer): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
}

export function fromBase32(text: string): Buffer {
  const clean = text.replace(/=+$/, '').toUpperCase()
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const ch of clean) {
    const i = BASE32.indexOf(ch)
    if (i < 0) throw new Error('not base32')
    value = (value << 5) | i
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** The otpauth:// address an authenticator app reads from a QR code or a paste. */
export function otpauthUri(secret: Buffer, account: string, issuer = 'svcpay'): string {
  const label = encodeURIComponent(`${issuer}:${account}`)
  return `otpauth://totp/${label}?secret=${base32(secret)}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_STEP_S}`
}
