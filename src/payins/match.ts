import { randomInt } from 'node:crypto'

/**
 * Transfer memos of VND receives and how a bank's description is matched to one (pure).
 *
 * A memo is `SVP` and 7 characters of Crockford's base32 alphabet (0-9 and A-Z without I, L, O and
 * U, which are read as 1, 1, 0 and V), drawn from a CSPRNG: 32^7 (about 3.4e10) memos, short
 * enough to type and free of look-alikes. Banking apps mangle descriptions: they change case,
 * strip or add accents, insert spaces, dots or dashes, and wrap the text in their own prefixes
 * and suffixes (`MBVCB.3278.012345.SVP7K2M9QX.CT tu ...`). So the description is normalised
 * (accents removed, đ to d, upper case, everything but A-Z and 0-9 dropped) and searched for a
 * token of the exact format.
 */
export const MEMO_PREFIX = 'SVP'
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const MEMO_BODY = 7
const BODY = new RegExp(`^[${ALPHABET}]{${MEMO_BODY}}$`)

/** A fresh memo; the caller makes sure it was never used (the memos table's key). */
export function newMemo(): string {
  let body = ''
  for (let i = 0; i < MEMO_BODY; i++) body += ALPHABET[randomInt(ALPHABET.length)]
  return MEMO_PREFIX + body
}

/**
 * A bank description as matched: no accents, đ as d, upper case, only A-Z and 0-9 left. NFD splits
 * an accented letter into the letter and its combining marks, which the last step drops.
 */
export function normaliseMemo(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[đĐ]/g, 'd')
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '')
}

/**
 * The memos a description may name, in order of appearance: every place a memo of the exact
 * format could start (the bank may glue its own text to either end). A payer who typed the memo
 * may have read 0 as O or 1 as I or L: in the 7 characters after the prefix those are read back as
 * Crockford's decoding does. The caller looks the candidates up and takes the first one that is ours.
 */
export function memoCandidates(description: string): string[] {
  const text = normaliseMemo(description)
  const found: string[] = []
  for (let at = text.indexOf(MEMO_PREFIX); at >= 0; at = text.indexOf(MEMO_PREFIX, at + 1)) {
    const start = at + MEMO_PREFIX.length
    const body = text
      .slice(start, start + MEMO_BODY)
      .replace(/O/g, '0')
      .replace(/[IL]/g, '1')
    const token = MEMO_PREFIX + body
    if (BODY.test(body) && !found.includes(token)) found.push(token)
  }
  return found
}

/** How an amount that arrived compares with the one a receive asked for: one rule for every rail. */
export { amountOutcome, type AmountOutcome } from '../transactions/receive-outcome.js'
