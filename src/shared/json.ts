import { parse as losslessParse, isLosslessNumber, type LosslessNumber } from 'lossless-json'
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

/** Serialise a response: like JSON.stringify, but `DecimalText` is written as a bare number. */
export function stringify(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null'
    case 'boolean':
      return value ? 'true' : 'false'
    case 'bigint':
      return value.toString()
    case 'object': {
      if (value instanceof DecimalText) return value.text
      if (Array.isArray(value)) return '[' + value.map((v) => (v === undefined ? 'null' : stringify(v))).join(',') + ']'
      if (value instanceof Date) return JSON.stringify(value.toISOString())
      let out = '{'
      let first = true
      for (const key in value as Record<string, unknown>) {
        const v = (value as Record<string, unknown>)[key]
        if (v === undefined || typeof v === 'function') continue
        out += (first ? '' : ',') + JSON.stringify(key) + ':' + stringify(v)
        first = false
      }
      return out + '}'
    }
    default:
      return 'null'
  }
}
