import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/**
 * Operator passwords, kept as scrypt (node:crypto) with a salt of their own and the parameters they
 * were made with, so that the cost can be raised later without breaking older hashes:
 * `scrypt$<log2 N>$<r>$<p>$<salt, base64url>$<hash, base64url>`.
 */
const LOG_N = 15
const R = 8
const P = 1
const KEY_BYTES = 32
const SALT_BYTES = 16
// scrypt needs 128 * N * r bytes; node refuses anything above maxmem, which defaults to 32 MiB.
const MAXMEM = 256 * 1024 * 1024
export const PASSWORD_MIN_LENGTH = 12
export const PASSWORD_MAX_LENGTH = 256

function derive(password: string, salt: Buffer, options: ScryptOptions & { N: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, { ...options, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  )
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const key = await derive(password, salt, { N: 2 ** LOG_N, r: R, p: P })
  return ['scrypt', LOG_N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** Bounds on stored parameters, so that a corrupted row cannot make one check take minutes. */
const STORED =
  /^scrypt\$(1[0-9]|20)\$([1-9][0-9]?)\$([1-9])\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{16,128})$/

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored)
  if (!m) return false
  const expected = Buffer.from(m[5]!, 'base64url')
  const key = await derive(password, Buffer.from(m[4]!, 'base64url'), {
    N: 2 ** Number(m[1]),
    r: Number(m[2]),
    p: Number(m[3]),
  })
  return key.length === expected.length && timingSafeEqual(key, expected)
}

/** A hash no password matches, checked when the email is unknown so that timing tells nothing. */
export const DECOY_HASH = `scrypt$${LOG_N}$${R}$${P}$${'A'.repeat(22)}$${'A'.repeat(43)}`
