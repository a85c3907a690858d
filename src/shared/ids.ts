import { randomBytes } from 'node:crypto'

export type AccountId = string & { readonly __brand: 'AccountId' }
export type WalletId = string & { readonly __brand: 'WalletId' }
export type TxnId = string & { readonly __brand: 'TxnId' }

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

/** Ids in paths are checked for shape before they reach a query. */
export const ID_PATTERN = /^[a-z]{2,5}_[0-9a-z]{25}$/
