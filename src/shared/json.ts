import { parse as losslessParse, isLosslessNumber, type LosslessNumber } from 'lossless-json'
import { randomBytes } from 'node:crypto'
import { DecimalText } from './amount.js'

/**
 * JSON in and out, exactly. Incoming numbers keep their source text where it matters (amounts),
 * because a float cannot hold 0.1 or a 30-decimal amount faithfully; outgoing amounts are
 * `DecimalText` values written as the exact decimal text they hold.
 */

/** Keys whose numeric values are kept as their JSON source text (exact decimal input). */
const EXACT_KEYS = new Set(['amtRequested', 'amount'])

export const JSON_DEPTH_MAX = 32

export class JsonInputError extends Error {}

export function parseJsonBody(text: string): unknown {
  checkDepth(text)
  try {
    return losslessParse(text, (key, value) => {
      if (!isLosslessNumber(value)) return value
      const num = value as LosslessNumber
      // Amounts stay as their exact source text; amount parsing accepts decimal strings.
      if (EXACT_KEYS.has(key)) return num.value
      return Number(num.value)
    })
  } catch (err) {
    throw new JsonInputError((err as Error).message)
  }
}

/** Refuse deep nesting before parsing, so a hostile body cannot exhaust the stack. */
function checkDepth(text: string): void {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      if (++depth > JSON_DEPTH_MAX) throw new JsonInputError(`nesting deeper than ${JSON_DEPTH_MAX} levels`)
    } else if (c === 125 || c === 93) depth--
  }
}

// DecimalText values and bigints leave JSON.stringify as strings between two markers (a NUL, a
// nonce of this process, and a NUL, which JSON writes as \u0000 escapes), and the markers with their
// quotes are then cut away, leaving the bare number. No request text can make a marker: it would
// need the nonce, and text input refuses NUL.
const NONCE = randomBytes(8).toString('hex')
const OPEN = `\u0000${NONCE}:`
const CLOSE = '\u0000'
const MARKED = new RegExp(`"\\\\u0000${NONCE}:([^"\\\\]*)\\\\u0000"`, 'g')

function bare(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // The holder's own value: JSON.stringify hands the replacer what toJSON made of it.
  const own = this[key]
  if (own instanceof DecimalText) return OPEN + own.text + CLOSE
  if (typeof value === 'bigint') return OPEN + value.toString() + CLOSE
  return value
}

/**
 * Serialise a response: JSON.stringify (native, which matters for long lists), with `DecimalText`
 * and bigints written as bare numbers.
 */
export function stringify(value: unknown): string {
  const text = JSON.stringify(value, bare)
  if (text === undefined) return 'null'
  return text.includes(NONCE) ? text.replace(MARKED, '$1') : text
}
