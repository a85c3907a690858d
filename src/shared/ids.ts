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

// Branded ids: at run time each is the plain string it always was; the brand exists only for the
// compiler, so that an account id can no longer be passed where a transaction id is meant. A
// branded id is still a string wherever a string is asked for (a statement's parameter, a body).

/** The id of a transaction (`txn_…`). */
export type TxnId = string & { readonly __brand: 'TxnId' }
/** The id of an account (`acc_…`). */
export type AccountId = string & { readonly __brand: 'AccountId' }
/** The id of a wallet (`wal_…`). */
export type WalletId = string & { readonly __brand: 'WalletId' }

// The constructors are plain casts on purpose. They are called where an id enters: a route
// parameter its schema has already validated, a row the database returned, a test's fixture.
// Checking the prefix here could only add a refusal the API never gave (an id of another shape
// must keep answering as "not found", not as an error of ours), so the check stays in the schemas.

/** A transaction id that entered from a validated route parameter or a row. */
export const asTxnId = (text: string): TxnId => text as TxnId
/** An account id that entered from an authenticated request or a row. */
export const asAccountId = (text: string): AccountId => text as AccountId
/** A wallet id that entered from a row. */
export const asWalletId = (text: string): WalletId => text as WalletId

/** A new transaction id. */
export const newTxnId = (): TxnId => asTxnId(newId('txn'))
/** A new account id. */
export const newAccountId = (): AccountId => asAccountId(newId('acc'))
/** A new wallet id. */
export const newWalletId = (): WalletId => asWalletId(newId('wal'))
