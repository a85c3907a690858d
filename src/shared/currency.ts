/** Minor-unit precision of every currency the service knows (ISO 4217 for fiat). */
export const PRECISION: Readonly<Record<string, number>> = {
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
}

/** The 28 codes of the spec's rate endpoint, in the order the spec lists them. */
export const RATE_CODES = [
  'USD',
  'EUR',
  'GBP',
  'VND',
  'THB',
  'JPY',
  'SGD',
  'AUD',
  'CAD',
  'NGN',
  'INR',
  'PHP',
  'KRW',
  'MYR',
  'IDR',
  'CNY',
  'MXN',
  'TWD',
  'KES',
  'KHR',
  'RWF',
  'GHS',
  'XAF',
  'XOF',
  'USDT',
  'USDC',
  'ETH',
  'TRX',
] as const

export function isCurrency(code: string): boolean {
  return Object.prototype.hasOwnProperty.call(PRECISION, code)
}

export function precisionOf(ccy: string): number {
  const p = PRECISION[ccy]
  if (p === undefined) throw new Error(`unknown currency ${ccy}`)
  return p
}
