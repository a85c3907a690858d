import { precisionOf } from './currency.js'

/**
 * Exact decimal handling. Inside the service every amount is a bigint count of minor units; this
 * module is the only place that turns decimal text into minor units and back.
 */

/** A number to be written into JSON as this exact decimal text (see `json.ts`). */
export class DecimalText {
  constructor(readonly text: string) {}
  toJSON(): number {
    // Only reached by code that bypasses our serializer; the value is still correct to print.
    return Number(this.text)
  }
}

const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/
const SCI_RE = /^(-)?(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/

/**
 * Normalise decimal or scientific text (as JSON numbers may be written) to plain decimal text.
 * Returns null when the text is not a finite decimal number.
 */
export function normaliseDecimal(text: string): string | null {
  const plain = DECIMAL_RE.exec(text)
  if (plain) return text
  const sci = SCI_RE.exec(text)
  if (!sci) return null
  const [, sign = '', int, frac = '', expText] = sci
  const exp = Number(expText)
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) return null
  let digits = int! + frac
  let point = int!.length + exp
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits
    point = 1
  } else if (point > digits.length) {
    digits = digits + '0'.repeat(point - digits.length)
  }
  const whole = digits.slice(0, point).replace(/^0+(?=\d)/, '')
  const rest = digits.slice(point)
  return rest ? `${sign}${whole}.${rest}` : `${sign}${whole}`
}

export type ParseAmountResult = { ok: true; minor: bigint } | { ok: false; issue: string }

/**
 * Parse an input amount (a JSON number's source text or a decimal string) into minor units of
 * `ccy`. Rejects zero, negative values, non-finite values and more decimals than the currency has,
 * trailing zeros included.
 */
export function parseAmount(input: unknown, ccy: string): ParseAmountResult {
  if (typeof input !== 'string' && typeof input !== 'number') {
    return { ok: false, issue: 'must be a number or a decimal string' }
  }
  const raw = typeof input === 'number' ? numberText(input) : input.trim()
  if (raw === null || raw.length > 64) return { ok: false, issue: 'is not a finite decimal number' }
  const text = normaliseDecimal(raw)
  if (text === null) return { ok: false, issue: 'is not a finite decimal number' }
  const m = DECIMAL_RE.exec(text)!
  const [, sign, int, frac = ''] = m
  const precision = precisionOf(ccy)
  // Every digit written after the point counts, zeros too: "500.000" dong is not 500 (contract
  // section 11); a writer who means five hundred thousand gets a refusal, never a wrong amount.
  if (frac.length > precision) {
    return { ok: false, issue: `has more than ${precision} decimal places for ${ccy}` }
  }
  const minor = BigInt(int! + frac.padEnd(precision, '0'))
  if (sign === '-' && minor !== 0n) return { ok: false, issue: 'must be positive' }
  if (minor === 0n) return { ok: false, issue: 'must be greater than zero' }
  if (minor > MAX_MINOR) return { ok: false, issue: 'is too large' }
  return { ok: true, minor }
}

/** The largest amount any single side may carry: it keeps every sum inside PostgreSQL's bigint. */
export const MAX_MINOR = 10n ** 17n

function numberText(n: number): string | null {
  if (!Number.isFinite(n)) return null
  return String(n)
}

/** Minor units to exact decimal text with the currency's full precision trimmed of trailing zeros. */
export function formatMinor(minor: bigint, ccy: string): string {
  return formatScaled(minor, precisionOf(ccy))
}

export function formatScaled(value: bigint, scale: number): string {
  const negative = value < 0n
  const abs = negative ? -value : value
  if (scale === 0) return `${negative ? '-' : ''}${abs}`
  const digits = abs.toString().padStart(scale + 1, '0')
  const whole = digits.slice(0, -scale)
  const frac = digits.slice(-scale).replace(/0+$/, '')
  return `${negative ? '-' : ''}${whole}${frac ? '.' + frac : ''}`
}

/** Minor units as a JSON number written exactly. */
export function amountJson(minor: bigint, ccy: string): DecimalText {
  return new DecimalText(formatMinor(minor, ccy))
}

/**
 * An exact non-negative rational rate, `num / 10^scale`, parsed from decimal text.
 */
export interface Rate {
  num: bigint
  scale: number
}

export function parseRate(text: string): Rate {
  const norm = normaliseDecimal(text)
  const m = norm === null ? null : DECIMAL_RE.exec(norm)
  if (!m || m[1]) throw new Error(`invalid rate ${text}`)
  const frac = m[3] ?? ''
  return { num: BigInt(m[2]! + frac), scale: frac.length }
}

export function formatRate(rate: Rate): string {
  return formatScaled(rate.num, rate.scale)
}

export function ceilDiv(a: bigint, b: bigint): bigint {
  if (b <= 0n || a < 0n) throw new Error('ceilDiv expects a >= 0 and b > 0')
  return (a + b - 1n) / b
}

/** `value * percentBps / 10000`, rounded up (fees are rounded up). */
export function bpsOfCeil(value: bigint, bps: bigint): bigint {
  return ceilDiv(value * bps, 10_000n)
}
