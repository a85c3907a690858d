/**
 * Lossless JSON for the SDK. `JSON.parse` turns every number into a float, which cannot hold
 * `0.1` or a 30-digit amount faithfully; this parser keeps each number as its source text
 * (`JsonNumber`), so amounts become exact decimal strings or bigint minor units and nothing
 * passes through a float. Everything else (strings, escapes, literals) follows RFC 8259.
 */

/** A JSON number kept as the exact text it was written with. */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** A parse failure, with the offset where the text stopped being JSON. */
export class JsonSyntaxError extends SyntaxError {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`)
    this.name = 'JsonSyntaxError'
  }
}

/** Nesting deeper than this is refused, so a hostile answer cannot exhaust the stack. */
export const JSON_DEPTH_MAX = 64

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d])

/** Parses JSON text; every number comes back as a `JsonNumber` holding its source text. */
export function parseJsonLossless(text: string): unknown {
  let pos = 0

  const skip = () => {
    while (pos < text.length && WHITESPACE.has(text.charCodeAt(pos))) pos++
  }

  const fail = (what: string): never => {
    throw new JsonSyntaxError(pos >= text.length ? 'Unexpected end of JSON' : what, pos)
  }

  const literal = (word: string, value: unknown) => {
    if (text.startsWith(word, pos)) {
      pos += word.length
      return value
    }
    return fail(`Unexpected character ${JSON.stringify(text[pos])}`)
  }

  const string = (): string => {
    const start = pos
    pos++
    while (pos < text.length) {
      const c = text.charCodeAt(pos)
      if (c === 0x22) {
        pos++
        // The platform decodes escapes; the slice is already known to be one well-delimited string.
        try {
          return JSON.parse(text.slice(start, pos)) as string
        } catch {
          pos = start
          return fail('Invalid string')
        }
      }
      if (c === 0x5c) pos += 2
      else if (c < 0x20) return fail('Control character in string')
      else pos++
    }
    return fail('Unterminated string')
  }

  const value = (depth: number): unknown => {
    skip()
    const c = text[pos]
    if (c === '{' || c === '[') {
      if (depth >= JSON_DEPTH_MAX) fail(`Nesting deeper than ${JSON_DEPTH_MAX} levels`)
      return c === '{' ? object(depth + 1) : array(depth + 1)
    }
    if (c === '"') return string()
    if (c === 't') return literal('true', true)
    if (c === 'f') return literal('false', false)
    if (c === 'n') return literal('null', null)
    NUMBER_RE.lastIndex = pos
    const m = NUMBER_RE.exec(text)
    if (!m) return fail(`Unexpected character ${JSON.stringify(c)}`)
    pos += m[0].length
    return new JsonNumber(m[0])
  }

  const object = (depth: number) => {
    const out: Record<string, unknown> = {}
    pos++
    skip()
    if (text[pos] === '}') {
      pos++
      return out
    }
    while (true) {
      skip()
      if (text[pos] !== '"') fail('Expected a property name')
      const key = string()
      skip()
      if (text[pos] !== ':') fail("Expected ':'")
      pos++
      // defineProperty, so that a key named __proto__ is an ordinary property and not a prototype.
      Object.defineProperty(out, key, {
        value: value(depth),
        enumerable: true,
        writable: true,
        configurable: true,
      })
      skip()
      if (text[pos] === ',') {
        pos++
        continue
      }
      if (text[pos] === '}') {
        pos++
        return out
      }
      fail("Expected ',' or '}'")
    }
  }

  const array = (depth: number) => {
    const out: unknown[] = []
    pos++
    skip()
    if (text[pos] === ']') {
      pos++
      return out
    }
    while (true) {
      out.push(value(depth))
      skip()
      if (text[pos] === ',') {
        pos++
        continue
      }
      if (text[pos] === ']') {
        pos++
        return out
      }
      fail("Expected ',' or ']'")
    }
  }

  const result = value(0)
  skip()
  if (pos !== text.length) fail('Unexpected text after JSON')
  return result
}

/**
 * A JSON number's text as plain decimal notation: `1e-6` becomes `0.000001` and `1.50E3` becomes
 * `1500`, digit for digit, so a number written with an exponent is still exact.
 */
export function plainDecimal(text: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (!m) throw new RangeError(`not a JSON number: ${text}`)
  const [, sign, intPart, fracPart = '', expText] = m
  if (expText === undefined) return text
  const exp = Number(expText)
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 1000)
    throw new RangeError(`exponent out of range: ${text}`)
  const digits = intPart! + fracPart
  const point = intPart!.length + exp
  let out: string
  if (point <= 0) out = '0.' + '0'.repeat(-point) + digits
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length)
  else out = digits.slice(0, point) + '.' + digits.slice(point)
  // Leading zeros of the integer part and trailing zeros of the fraction carry no value.
  out = out.replace(/^0+(?=\d)/, '')
  if (out.includes('.')) out = out.replace(/0+$/, '').replace(/\.$/, '')
  return (sign === '-' && /[1-9]/.test(out) ? '-' : '') + out
}
