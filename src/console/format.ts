import { formatMinor } from '../shared/amount.js'
import { formatDecimalText } from '../pages/format.js'
import type { Lang } from '../pages/i18n.js'

/**
 * Numbers and times as the console shows them. Amounts stay exact: minor units (bigint) become
 * decimal text with the currency's precision, then get the language's separators.
 */
export function money(minor: bigint, ccy: string, lang: Lang): string {
  const negative = minor < 0n
  const text = formatDecimalText(formatMinor(negative ? -minor : minor, ccy), lang)
  return `${negative ? '−' : ''}${text} ${ccy}`
}

/** Exact decimal text (as the services return it, perhaps negative) with the language's separators. */
export function decimal(text: string, lang: Lang): string {
  const negative = text.startsWith('-')
  return `${negative ? '−' : ''}${formatDecimalText(negative ? text.slice(1) : text, lang)}`
}

/** A moment as `2026-11-24 16:05:09 UTC`: operators in several time zones compare the same text. */
export function when(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—'
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC')
}

/** A UTC day number (days since the epoch) as `2026-11-24`. */
export function day(dayNumber: number): string {
  return new Date(dayNumber * 86_400_000).toISOString().slice(0, 10)
}
