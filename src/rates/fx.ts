import type { Rate } from '../shared/amount.js'
import { ceilDiv } from '../shared/amount.js'
import { precisionOf } from '../shared/currency.js'

/**
 * Pure FX arithmetic on exact rationals. A currency's rate is its units per 1 BTC; the cross rate
 * of two currencies is the ratio of their BTC rates.
 */

/** Significant digits of a quoted fxRate. Amounts are then computed from exactly that figure. */
export const FX_SIGNIFICANT_DIGITS = 12

export const ONE: Rate = { num: 1n, scale: 0 }

/** Units of `dest` per unit of `src`, less the spread, rounded down to 12 significant digits. */
export function allInRate(srcPerBtc: Rate, destPerBtc: Rate, spreadBps: bigint): Rate {
  const num = destPerBtc.num * 10n ** BigInt(srcPerBtc.scale) * (10_000n - spreadBps)
  const den = srcPerBtc.num * 10n ** BigInt(destPerBtc.scale) * 10_000n
  return toSignificant(num, den, FX_SIGNIFICANT_DIGITS)
}

function toSignificant(num: bigint, den: bigint, digits: number): Rate {
  const floor = 10n ** BigInt(digits - 1)
  let scale = Math.max(0, digits - (num.toString().length - den.toString().length + 1))
  while ((num * 10n ** BigInt(scale)) / den < floor && scale < 60) scale++
  while (scale > 0 && (num * 10n ** BigInt(scale)) / den >= floor * 10n) scale--
  let value = (num * 10n ** BigInt(scale)) / den
  // Trim trailing zeros so the text is as short as the value allows.
  while (scale > 0 && value % 10n === 0n) {
    value /= 10n
    scale--
  }
  return { num: value, scale }
}

/** Convert at `rate` (dest units per src unit), rounding down to the destination's precision. */
export function convertDown(srcMinor: bigint, srcCcy: string, destCcy: string, rate: Rate): bigint {
  const num = srcMinor * rate.num * 10n ** BigInt(precisionOf(destCcy))
  const den = 10n ** BigInt(rate.scale + precisionOf(srcCcy))
  return num / den
}

/** The source amount whose conversion at `rate` yields at least `destMinor`, rounded up. */
export function sourceForDest(destMinor: bigint, srcCcy: string, destCcy: string, rate: Rate): bigint {
  const num = destMinor * 10n ** BigInt(rate.scale + precisionOf(srcCcy))
  const den = rate.num * 10n ** BigInt(precisionOf(destCcy))
  return ceilDiv(num, den)
}
