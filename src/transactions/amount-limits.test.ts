import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../config/config.js'
import { MAX_MINOR } from '../shared/amount.js'
import { BTC_MAX_MONEY_SATS, checkQuoteAmounts } from './amount-limits.js'
import type { CreateInput, Quote } from './flow.js'
import { isMoneyError } from './errors.js'
import { serviceKinds } from '../wiring/kinds.js'
import { asAccountId } from '../shared/ids.js'

const kinds = serviceKinds()

const input = (extra: Partial<CreateInput> = {}): CreateInput => ({
  accountId: asAccountId('acc_x'),
  deductNetworkFeesFromDest: false,
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '1' },
  destReq: { ccy: 'BTC', method: 'on-chain' },
  ...extra,
})
const quote = (q: Partial<Quote>): Quote => ({
  srcAmount: 100n,
  srcFee: 0n,
  srcNetworkFee: 0n,
  destAmount: 100n,
  fxRate: { num: 1n, scale: 0 },
  srcDetails: {},
  destDetails: {},
  fromWallet: true,
  ...q,
})
/** The field and code of the check's refusal, or undefined when it passes the quote through unchanged. */
const refusal = (...args: Parameters<typeof checkQuoteAmounts>) => {
  const checked = checkQuoteAmounts(...args)
  if (!isMoneyError(checked)) {
    expect(checked).toBe(args[2])
    return undefined
  }
  return { code: checked.code, field: checked.field }
}
const limits = { receiveMaxSats: 1000n * 100_000_000n }

describe('checkQuoteAmounts', () => {
  const over = (field: string) => ({ code: 'amount_over_limit', field })

  it('takes the wallet total (amount + fees) to the cap, unless fees come out of the destination', () => {
    expect(
      refusal(kinds.declaration('swap'), input(), quote({ srcAmount: MAX_MINOR, destAmount: 1n }), limits),
    ).toBeUndefined()
    const withFee = quote({ srcAmount: MAX_MINOR, srcFee: 1n, destAmount: 1n })
    expect(refusal(kinds.declaration('swap'), input(), withFee, limits)).toEqual(
      over('sourceReq.amtRequested'),
    )
    expect(
      refusal(kinds.declaration('swap'), input({ deductNetworkFeesFromDest: true }), withFee, limits),
    ).toBeUndefined()
    expect(
      refusal(kinds.declaration('swap'), input(), quote({ destAmount: MAX_MINOR + 1n }), limits),
    ).toEqual(over('destReq.amtRequested'))
    expect(refusal(kinds.declaration('swap'), input(), quote({ srcFee: MAX_MINOR + 1n }), limits)).toEqual(
      over('sourceReq.svcpayFees'),
    )
  })

  it('names the limit in its reason, never the amount', () => {
    expect(
      checkQuoteAmounts(kinds.declaration('swap'), input(), quote({ destAmount: MAX_MINOR + 1n }), limits),
    ).toEqual({
      kind: 'money_error',
      code: 'amount_over_limit',
      field: 'destReq.amtRequested',
      reason: 'the destination amount is more than the largest amount one side may carry (1000000000 BTC)',
    })
  })

  it('bounds receives by the operator maximum and Bitcoin sends by the money supply', () => {
    const receive = input({
      sourceReq: { ccy: 'BTC', method: 'lightning' },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '1' },
    })
    expect(
      refusal(kinds.declaration('ln_receive'), receive, quote({ srcAmount: limits.receiveMaxSats }), limits),
    ).toBeUndefined()
    expect(
      refusal(
        kinds.declaration('ln_receive'),
        receive,
        quote({ srcAmount: limits.receiveMaxSats + 1n }),
        limits,
      ),
    ).toEqual(over('destReq.amtRequested'))
    const send = (q: Partial<Quote>) => refusal(kinds.declaration('onchain_send'), input(), quote(q), limits)
    expect(send({ srcAmount: BTC_MAX_MONEY_SATS, destAmount: BTC_MAX_MONEY_SATS })).toBeUndefined()
    expect(
      send({ srcAmount: BTC_MAX_MONEY_SATS, destAmount: BTC_MAX_MONEY_SATS, srcNetworkFee: 1n }),
    ).toEqual(over('sourceReq.amtRequested'))
    // A Lightning send whose amount is the invoice's names the invoice.
    const ln = input({
      sourceReq: { ccy: 'BTC', method: 'svcpay' },
      destReq: { ccy: 'BTC', method: 'lightning' },
    })
    const whole = quote({ srcAmount: BTC_MAX_MONEY_SATS + 1n, destAmount: BTC_MAX_MONEY_SATS + 1n })
    expect(refusal(kinds.declaration('ln_send'), ln, whole, limits)).toEqual(
      over('destReq.reqDetails.paymentRequest'),
    )
  })
})

describe('RECEIVE_MAX_BTC', () => {
  it('defaults to 1000 BTC, takes up to 8 decimals, and never more than 21,000,000 BTC', () => {
    expect(loadConfig({}).receiveMaxSats).toBe(100_000_000_000n)
    expect(loadConfig({ RECEIVE_MAX_BTC: '0.5' }).receiveMaxSats).toBe(50_000_000n)
    expect(loadConfig({ RECEIVE_MAX_BTC: '21000000' }).receiveMaxSats).toBe(BTC_MAX_MONEY_SATS)
    for (const bad of ['0', '21000000.00000001', '1e3', '-1', '0.000000001', 'lots'])
      expect(() => loadConfig({ RECEIVE_MAX_BTC: bad }), bad).toThrow(ConfigError)
  })
})
