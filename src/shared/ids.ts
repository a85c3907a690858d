import { randomBytes } from 'node:crypto'

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'

/** A prefixed random id: 128 bits of randomness in base36 (25 characters). */
export function newId(prefix: string): string {
  const bytes = randomBytes(16)
  let n = 0n
  for (const b of bytes) n = (n << 8n) | BigInt(b)
  let out = ''
  while (n > 0n) {
    out = ALPHABET[Number(n % 36n)] + out
    n /= 36n
  }
  return `${prefix}_${out.padStart(25, '0')}`
}
