import { assert } from '../shared/assert.js'
import { STRINGS, type Lang } from './i18n.js'

/**
 * Number and time formatting for the invoice page. Amounts arrive as exact decimal text and are
 * formatted as text: a float never touches them, so the page shows exactly what was issued.
 */

const DECIMAL_TEXT_RE = /^(\d+)(?:\.(\d+))?$/
const DECIMAL_TEXT_MAX_CHARS = 64

/** Whether `text` is a plain non-negative decimal number such as `0.00012345` or `12345`. */
export function isDecimalText(text: string): boolean {
  return text.length <= DECIMAL_TEXT_MAX_CHARS && DECIMAL_TEXT_RE.test(text)
}

/**
 * Write exact decimal text with the language's separators: thousands grouped in the whole part,
 * the fraction kept digit for digit (`12345.678` is `12,345.678` in English, `12.345,678` in
 * Vietnamese).
 */
export function formatDecimalText(text: string, lang: Lang): string {
  const m = text.length <= DECIMAL_TEXT_MAX_CHARS ? DECIMAL_TEXT_RE.exec(text) : null
  assert(m, `not decimal text: ${JSON.stringify(text.slice(0, DECIMAL_TEXT_MAX_CHARS))}`)
  const strings = STRINGS[lang]
  const whole = m[1]!.replace(/^0+(?=\d)/, '')
  const frac = m[2]
  const grouped = groupThousands(whole, strings.groupSeparator)
  return frac === undefined ? grouped : grouped + strings.decimalSeparator + frac
}

/** Whole đồng as integer text, written as the language writes money: `500.000 ₫` in Vietnamese, `500,000 VND` in English. */
export function formatVnd(dong: string, lang: Lang): string {
  assert(/^\d+$/.test(dong), 'an amount of đồng is integer text')
  return `${formatDecimalText(dong, lang)} ${STRINGS[lang].vndUnit}`
}

function groupThousands(digits: string, separator: string): string {
  const head = digits.length % 3 || 3
  const groups = [digits.slice(0, head)]
  for (let i = head; i < digits.length; i += 3) groups.push(digits.slice(i, i + 3))
  return groups.join(separator)
}

const SECOND_MS = 1000
const MINUTE_S = 60
const HOUR_S = 3600
const DAY_S = 86_400

/**
 * Time left before expiry as a short clock: `4:05` under an hour, `1:04:05` under a day, and
 * `2 days 01:04:05` beyond. Partial seconds count as a whole second so the clock reads `0:00`
 * only once the time is really up. The client script formats the same way (`page-script.ts`).
 */
export function formatTimeLeft(msLeft: number, lang: Lang): string {
  const total = msLeft > 0 ? Math.ceil(msLeft / SECOND_MS) : 0
  const days = Math.floor(total / DAY_S)
  const hours = Math.floor((total % DAY_S) / HOUR_S)
  const minutes = Math.floor((total % HOUR_S) / MINUTE_S)
  const seconds = total % MINUTE_S
  const ss = pad2(seconds)
  if (days > 0) {
    const strings = STRINGS[lang]
    return `${days} ${days === 1 ? strings.day : strings.days} ${pad2(hours)}:${pad2(minutes)}:${ss}`
  }
  if (hours > 0) return `${hours}:${pad2(minutes)}:${ss}`
  return `${minutes}:${ss}`
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n)
}
