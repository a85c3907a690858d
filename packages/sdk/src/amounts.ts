/**
 * Exact amounts. The API speaks decimal amounts in the currency's unit (BTC for BTC, never sats);
 * the SDK hands them to you as decimal strings or as bigint minor units (sats, USDT 6-dp units,
 * VND units), whichever you choose, and never as floats.
 */

/** How amounts in responses are given to you: exact decimal strings, or bigint minor units. */
export type AmountFormat = 'decimal' | 'minor'

/** The TypeScript type of an amount in responses for a given {@link AmountFormat}. */
export type AmountOf<F extends AmountFormat> = F extends 'minor' ? bigint : string

/**
 * An amount you send: a decimal string in the currency's unit (`'0.001'` BTC) or a bigint count
 * of its minor unit (`100_000n` sats). Plain numbers are refused, because a float cannot be trusted
 * to hold an amount.
 */
export type AmountInput = string | bigint

/**
 * Minor-unit precision of every currency the service knows: BTC 8, USDT/USDC/TRX 6, ETH 18, fiat by
 * ISO 4217. A currency added later can be given to the client with its `currencies` option.
 */
export const CURRENCY_DECIMALS: Readonly<Record<string, number>> = Object.freeze({
  BTC: 8,
  USDT: 6,
  USDC: 6,
  TRX: 6,
  ETH: 18,
  USD: 2,
  EUR: 2,
  GBP: 2,
  CAD: 2,
  AUD: 2,
  SGD: 2,
  THB: 2,
  NGN: 2,
  INR: 2,
  PHP: 2,
  MYR: 2,
  IDR: 2,
  CNY: 2,
  MXN: 2,
  TWD: 2,
  KES: 2,
  KHR: 2,
  GHS: 2,
  VND: 0,
  JPY: 0,
  KRW: 0,
  RWF: 0,
  XAF: 0,
  XOF: 0,
})

const DECIMAL_RE = /^(-?)(\d+)(?:\.(\d+))?$/

function decimalsOf(ccy: string, extra?: Readonly<Record<string, number>>): number {
  const d = extra?.[ccy] ?? CURRENCY_DECIMALS[ccy]
  if (d === undefined)
    throw new RangeError(`Unknown currency ${ccy}: pass its decimals in the client's currencies option`)
  return d
}

/**
 * Converts a decimal amount in the currency's unit to minor units: `toMinor('0.001', 'BTC')` is
 * `100000n`. More decimals than the currency has is an error, never a rounding; trailing zeros
 * count, as the server counts them: `toMinor('500.000', 'VND')` is refused, never 500 dong.
 */
export function toMinor(decimal: string, ccy: string, currencies?: Readonly<Record<string, number>>): bigint {
  const decimals = decimalsOf(ccy, currencies)
  const m = DECIMAL_RE.exec(decimal.trim())
  if (!m) throw new RangeError(`Not a decimal amount: ${JSON.stringify(decimal)}`)
  const [, sign, intPart, fracPart = ''] = m
  if (fracPart.length > decimals) {
    throw new RangeError(`${decimal} ${ccy} has more than ${decimals} decimal places`)
  }
  const minor = BigInt(intPart! + fracPart.padEnd(decimals, '0'))
  return sign === '-' ? -minor : minor
}

/**
 * Converts minor units to a decimal amount in the currency's unit, without trailing zeros:
 * `fromMinor(100000n, 'BTC')` is `'0.001'`.
 */
export function fromMinor(minor: bigint, ccy: string, currencies?: Readonly<Record<string, number>>): string {
  const decimals = decimalsOf(ccy, currencies)
  const negative = minor < 0n
  const digits = (negative ? -minor : minor).toString().padStart(decimals + 1, '0')
  const intPart = digits.slice(0, digits.length - decimals)
  const fracPart = digits.slice(digits.length - decimals).replace(/0+$/, '')
  return (negative ? '-' : '') + intPart + (fracPart ? '.' + fracPart : '')
}

/** The wire form of an amount you send: a decimal string, converted from minor units when needed. */
export function amountToWire(
  amount: unknown,
  ccy: string | undefined,
  field: string,
  currencies?: Readonly<Record<string, number>>,
): string {
  if (typeof amount === 'bigint') {
    if (ccy === undefined)
      throw new TypeError(`${field}: a bigint amount needs the currency it is counted in`)
    return fromMinor(amount, ccy, currencies)
  }
  if (typeof amount === 'string') {
    if (!DECIMAL_RE.test(amount.trim()))
      throw new RangeError(`${field}: not a decimal amount: ${JSON.stringify(amount)}`)
    return amount.trim()
  }
  throw new TypeError(
    `${field}: pass amounts as decimal strings ('0.001') or bigint minor units (100000n), never as numbers`,
  )
}
