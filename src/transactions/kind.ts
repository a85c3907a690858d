import { ApiError, fieldError } from '../shared/errors.js'
import { isCurrency } from '../shared/currency.js'
import type { CreateInput } from './flow.js'
import type { TxnKind } from './state-machine.js'

/** Which flow serves a method pair; errors name the field at fault. */
export function kindFor(input: CreateInput, walletCurrencies: string[]): TxnKind {
  const s = input.sourceReq
  const d = input.destReq
  for (const [side, field] of [
    [s, 'sourceReq'],
    [d, 'destReq'],
  ] as const) {
    if (side.method === 'eth') {
      throw new ApiError(
        'method_not_available',
        'USDT over Ethereum (eth) is coming soon; use tron for USDT payouts',
        [{ field: `${field}.method`, issue: 'eth is not available yet' }],
      )
    }
    if (!isCurrency(side.ccy))
      throw fieldError('unsupported_currency_pair', `${field}.ccy`, 'is not a known currency')
  }
  const pair = `${s.method}:${s.ccy}>${d.method}:${d.ccy}`
  switch (pair) {
    case 'lightning:BTC>svcpay:BTC':
      return 'ln_receive'
    case 'on-chain:BTC>svcpay:BTC':
      return 'onchain_receive'
    case 'svcpay:BTC>lightning:BTC':
      return 'ln_send'
    case 'svcpay:BTC>on-chain:BTC':
      return 'onchain_send'
    case 'svcpay:USDT>tron:USDT':
      return 'tron_payout'
  }
  if (
    s.method === 'vnd-instant' &&
    s.ccy === 'VND' &&
    d.method === 'svcpay' &&
    ['VND', 'BTC', 'USDT'].includes(d.ccy)
  ) {
    // Into the VND wallet, or into the BTC or USDT one with the dong converted at the quoted rate.
    if (!walletCurrencies.includes(d.ccy))
      throw fieldError('unsupported_currency_pair', 'destReq.ccy', 'has no wallets on this service')
    return 'vnd_receive'
  }
  if (s.method === 'lightning' && s.ccy === 'BTC' && d.method === 'svcpay') {
    // Into another wallet of the account: the bitcoin paid in is converted at the quoted rate.
    if (!walletCurrencies.includes(d.ccy))
      throw fieldError('unsupported_currency_pair', 'destReq.ccy', 'has no wallets on this service')
    return 'ln_receive'
  }
  if (s.method === 'svcpay' && d.method === 'vnd-instant') {
    if (d.ccy !== 'VND')
      throw fieldError('unsupported_currency_pair', 'destReq.ccy', 'vnd-instant pays out VND')
    if (!['VND', 'BTC', 'USDT'].includes(s.ccy) || !walletCurrencies.includes(s.ccy)) {
      throw fieldError(
        'unsupported_currency_pair',
        'sourceReq.ccy',
        'VND payouts are funded from VND, BTC or USDT',
      )
    }
    return 'vnd_payout'
  }
  if (s.method === 'svcpay' && d.method === 'svcpay') {
    if (s.ccy === d.ccy)
      throw fieldError('unsupported_currency_pair', 'destReq.ccy', 'a swap needs two different currencies')
    for (const [ccy, field] of [
      [s.ccy, 'sourceReq.ccy'],
      [d.ccy, 'destReq.ccy'],
    ] as const) {
      if (!walletCurrencies.includes(ccy))
        throw fieldError('unsupported_currency_pair', field, 'has no wallets on this service')
    }
    return 'swap'
  }
  const known = ['svcpay', 'lightning', 'on-chain', 'tron', 'vnd-instant']
  if (!known.includes(s.method))
    throw fieldError('unsupported_method', 'sourceReq.method', `is not a known method (${known.join(', ')})`)
  if (!known.includes(d.method))
    throw fieldError('unsupported_method', 'destReq.method', `is not a known method (${known.join(', ')})`)
  const methodsFit = [
    'lightning>svcpay',
    'on-chain>svcpay',
    'svcpay>lightning',
    'svcpay>on-chain',
    'svcpay>tron',
    'vnd-instant>svcpay',
  ].includes(`${s.method}>${d.method}`)
  if (methodsFit)
    throw new ApiError(
      'unsupported_currency_pair',
      `${s.method} to ${d.method} does not carry this pair of currencies`,
    )
  throw new ApiError('unsupported_method', `Moving from ${s.method} to ${d.method} is not supported`, [
    { field: 'destReq.method', issue: `not supported with sourceReq.method ${s.method}` },
  ])
}
