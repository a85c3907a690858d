import { JsonNumber, parseJsonLossless, plainDecimal } from './json.js'
import { amountToWire, toMinor, type AmountFormat } from './amounts.js'

/** Field names whose numbers are amounts in the currency of the nearest enclosing `ccy`. */
const AMOUNT_KEYS: ReadonlySet<string> = new Set([
  'amtRequested',
  'amtSettled',
  'svcpayFees',
  'networkFees',
  'amount',
  'availableBalance',
])

export interface DecodeOptions {
  amounts: AmountFormat
  /** Extra currencies' decimals, beyond the built-in table. */
  currencies?: Readonly<Record<string, number>>
  /** The currency of amounts not inside an object with a `ccy` (the sandbox's BTC-only answers). */
  defaultCcy?: string
  /** Every number as a decimal string (the rates answer, whose values are all rates). */
  numbersAsDecimal?: boolean
}

/**
 * Turns a response's text into SDK values without a float anywhere: amounts become decimal strings
 * or bigint minor units in the currency of the object that holds them, `fxRate` and any other
 * fraction a decimal string, and whole numbers that fit (times, counts, codes) plain numbers.
 */
export function decodeResponse(text: string, opts: DecodeOptions): unknown {
  return convert(parseJsonLossless(text), '', opts.defaultCcy, opts)
}

function convert(node: unknown, key: string, ccy: string | undefined, opts: DecodeOptions): unknown {
  if (node instanceof JsonNumber) return convertNumber(node.text, key, ccy, opts)
  if (Array.isArray(node)) return node.map((item) => convert(item, key, ccy, opts))
  if (node !== null && typeof node === 'object') {
    const obj = node as Record<string, unknown>
    const here = typeof obj.ccy === 'string' ? obj.ccy : ccy
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(obj)) {
      Object.defineProperty(out, k, {
        value: convert(obj[k], k, here, opts),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  }
  return node
}

function convertNumber(text: string, key: string, ccy: string | undefined, opts: DecodeOptions): unknown {
  const decimal = plainDecimal(text)
  if (AMOUNT_KEYS.has(key) && !opts.numbersAsDecimal) {
    return opts.amounts === 'minor' && ccy !== undefined ? toMinor(decimal, ccy, opts.currencies) : decimal
  }
  if (opts.numbersAsDecimal || key === 'fxRate') return decimal
  // Whole numbers that a double holds exactly (epoch ms, counts, codes) are plain numbers; anything
  // else stays decimal text rather than being rounded.
  if (/^-?\d+$/.test(decimal) && Number.isSafeInteger(Number(decimal))) return Number(decimal)
  return decimal
}

/**
 * Writes a request body as JSON. Amount fields (given as decimal strings or bigint minor units) go
 * out as decimal strings, converted in the currency of the object that holds them; a plain number
 * in an amount field is refused.
 */
export function encodeBody(
  body: unknown,
  opts: { currencies?: Readonly<Record<string, number>>; defaultCcy?: string } = {},
): string {
  return JSON.stringify(prepare(body, '', '', opts.defaultCcy, opts.currencies))
}

function prepare(
  node: unknown,
  key: string,
  path: string,
  ccy: string | undefined,
  currencies: Readonly<Record<string, number>> | undefined,
): unknown {
  if (AMOUNT_KEYS.has(key) && node !== undefined && node !== null)
    return amountToWire(node, ccy, path, currencies)
  if (typeof node === 'bigint') throw new TypeError(`${path}: a bigint is only accepted for amounts`)
  if (Array.isArray(node)) return node.map((item, i) => prepare(item, '', `${path}[${i}]`, ccy, currencies))
  if (node !== null && typeof node === 'object') {
    const obj = node as Record<string, unknown>
    const here = typeof obj.ccy === 'string' ? obj.ccy : ccy
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(obj)) {
      if (obj[k] === undefined) continue
      const value = prepare(obj[k], k, path ? `${path}.${k}` : k, here, currencies)
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true })
    }
    return out
  }
  return node
}
