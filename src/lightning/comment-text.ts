/**
 * The one rule for a payer's comment (LUD-12), on every path that takes one: the LNURL callback of
 * our addresses, a Lightning receive through the API, and a send's comment to a payee.
 *
 * LUD-12 bounds a comment in characters, so its length is counted in Unicode code points: an emoji
 * is one character, not the two UTF-16 units `String.length` counts. A comment is shown to people
 * (the payee's reads, webhooks, pages), so it may not hold what could make it display as something
 * other than what it is or break a line: control characters (C0, C1), line and paragraph
 * separators, the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069;
 * the same set the payout name rules refuse, src/fiat/kyc.ts), or a lone surrogate (not text).
 */

/** The characters of `text` as LUD-12 counts them: code points. */
export function commentChars(text: string): number {
  let n = 0
  for (const _ of text) n++
  return n
}

const UNSAFE_IN_COMMENT = /[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u

/** True when `text` holds a character no comment may hold (see above). */
export const hasUnsafeCommentChar = (text: string) => UNSAFE_IN_COMMENT.test(text)
