import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { convertDown } from '../rates/fx.js'
import { parseRate, type Rate } from '../shared/amount.js'
import type { CreateInput } from './flow.js'
import {
  feeFor,
  requestedAmount,
  sameCurrencySendQuote,
  walletAmounts,
  walletDebit,
  walletOutPostings,
  type Requested,
} from './money.js'
import type { Txn } from './txn.js'
import { isMoneyError, type MoneyError } from './errors.js'
import { ONE } from '../rates/fx.js'
import { asAccountId } from '../shared/ids.js'

/** The money arithmetic of wallet-funded transactions, alone: exact, rounded in the service's favour. */

const input = (
  src: Partial<CreateInput['sourceReq']>,
  dest: Partial<CreateInput['destReq']>,
): CreateInput => ({
  accountId: asAccountId('acc_x'),
  deductNetworkFeesFromDest: false,
  sourceReq: { ccy: 'BTC', method: 'svcpay', ...src },
  destReq: { ccy: 'USD', method: 'svcpay', ...dest },
})

const rateArb = fc
  .tuple(fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.integer({ min: 0, max: 8 }))
  .map(([num, scale]): Rate => ({ num, scale }))
const feeRuleArb = fc.record({
  fixedMinor: fc.bigInt({ min: 0n, max: 10_000n }),
  bps: fc.bigInt({ min: 0n, max: 2_000n }),
})

describe('feeFor', () => {
  it('is the fixed part plus the basis points of the amount, rounded up to a whole minor unit', () => {
    expect(feeFor({ fixedMinor: 0n, bps: 50n }, 10_000n)).toBe(50n)
    expect(feeFor({ fixedMinor: 0n, bps: 50n }, 10_001n)).toBe(51n) // 50.005 -> 51
    expect(feeFor({ fixedMinor: 100n, bps: 0n }, 1n)).toBe(100n)
    expect(feeFor({ fixedMinor: 100n, bps: 25n }, 1n)).toBe(101n) // 0.0025 -> 1
    expect(feeFor({ fixedMinor: 0n, bps: 0n }, 123_456n)).toBe(0n)
  })

  it('never charges less than the exact fee, nor a whole unit more', () => {
    fc.assert(
      fc.property(feeRuleArb, fc.bigInt({ min: 0n, max: 10n ** 17n }), (rule, amount) => {
        const fee = feeFor(rule, amount)
        // fee - fixed is the least whole number >= amount * bps / 10000.
        const variable = fee - rule.fixedMinor
        expect(variable * 10_000n >= amount * rule.bps).toBe(true)
        expect((variable - 1n) * 10_000n < amount * rule.bps || variable === 0n).toBe(true)
      }),
    )
  })
})

describe('requestedAmount', () => {
  it('takes the one side that carries amtRequested, parsed to exact minor units', () => {
    expect(requestedAmount(input({ amtRequested: '0.00012345' }, {}))).toEqual({
      side: 'src',
      minor: 12_345n,
    })
    expect(requestedAmount(input({}, { amtRequested: '19.99' }))).toEqual({ side: 'dest', minor: 1_999n })
    expect(requestedAmount(input({}, {}), { optional: true })).toBeUndefined()
  })

  it('refuses both sides, neither side, and an amount the currency cannot hold, naming the field', () => {
    expect(requestedAmount(input({ amtRequested: '1' }, { amtRequested: '1' }))).toEqual<MoneyError>({
      kind: 'money_error',
      code: 'amount_on_both_sides',
      field: 'destReq.amtRequested',
      reason: 'must be left out when sourceReq.amtRequested is set',
    })
    expect(requestedAmount(input({}, {}))).toEqual<MoneyError>({
      kind: 'money_error',
      code: 'amount_missing',
      field: 'destReq.amtRequested',
      reason: 'set amtRequested on the source or the destination side',
    })
    expect(requestedAmount(input({ amtRequested: '0.000000001' }, {}))).toMatchObject({
      kind: 'money_error',
      code: 'amount_malformed',
      field: 'sourceReq.amtRequested',
    })
    expect(requestedAmount(input({}, { amtRequested: '1.001' }))).toMatchObject({
      code: 'amount_malformed',
      field: 'destReq.amtRequested',
    })
    // Where the amount is optional, a malformed one is still refused.
    expect(requestedAmount(input({}, { amtRequested: '-1' }), { optional: true })).toMatchObject({
      code: 'amount_malformed',
      field: 'destReq.amtRequested',
    })
  })
})

describe('walletAmounts', () => {
  const fx = parseRate('95000') // USD per BTC
  /** BTC to USD at 95,000, with a 0.5% fee. */
  const btcToUsd = (requested: Requested, opts: { networkFee?: bigint; deduct?: boolean } = {}) =>
    walletAmounts({
      requested,
      srcCcy: 'BTC',
      destCcy: 'USD',
      fx,
      feeRule: { fixedMinor: 0n, bps: 50n },
      networkFee: opts.networkFee ?? 0n,
      deduct: opts.deduct ?? false,
    })

  it('converts a source amount down and charges the fee on top', () => {
    // 0.001 BTC
    expect(btcToUsd({ side: 'src', minor: 100_000n })).toEqual({
      srcAmount: 100_000n,
      srcFee: 500n,
      destAmount: 9_500n,
    })
  })

  it('finds the source for a destination amount rounded up, so the destination gets at least what was asked', () => {
    // 10 / 95000 BTC = 0.000105263157... -> 10,527 sats, which converts to 10.00065 USD.
    expect(btcToUsd({ side: 'dest', minor: 1_000n })).toEqual({
      srcAmount: 10_527n,
      srcFee: 53n,
      destAmount: 1_000n,
    })
  })

  it('with fees deducted, the destination gets the conversion of what is left after both fees', () => {
    expect(btcToUsd({ side: 'src', minor: 100_000n }, { networkFee: 1_000n, deduct: true })).toEqual({
      srcAmount: 100_000n,
      srcFee: 500n,
      destAmount: convertDown(98_500n, 'BTC', 'USD', fx),
    })
  })

  it('refuses an amount too small to cover the fees, or that converts to nothing', () => {
    const base = { srcCcy: 'BTC', destCcy: 'USD', fx, feeRule: { fixedMinor: 100n, bps: 0n }, networkFee: 0n }
    expect(
      walletAmounts({ ...base, requested: { side: 'src', minor: 100n }, deduct: true }),
    ).toEqual<MoneyError>({
      kind: 'money_error',
      code: 'amount_below_fees',
      field: 'amtRequested',
      reason: 'is too small to cover the fees',
    })
    // 1 sat at 95,000 USD per BTC is 0.00095 USD: no cent.
    expect(
      walletAmounts({ ...base, requested: { side: 'src', minor: 1n }, deduct: false }),
    ).toEqual<MoneyError>({
      kind: 'money_error',
      code: 'converts_to_nothing',
      field: 'amtRequested',
      reason: 'converts to nothing at this rate',
    })
    // With the fees on top, the same small amount is not refused for them.
    expect(
      isMoneyError(walletAmounts({ ...base, requested: { side: 'src', minor: 2_000n }, deduct: false })),
    ).toBe(false)
  })

  it('never gives the destination more than the source converts to, nor less than a destination request', () => {
    fc.assert(
      fc.property(
        rateArb,
        feeRuleArb,
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.boolean(),
        (rate, feeRule, minor, fromSource) => {
          const got = walletAmounts({
            requested: { side: fromSource ? 'src' : 'dest', minor },
            srcCcy: 'BTC',
            destCcy: 'USD',
            fx: rate,
            feeRule,
            networkFee: 0n,
            deduct: false,
          })
          if (isMoneyError(got)) {
            // Without deduction only the conversion can refuse, and only a source amount.
            expect([got.code, fromSource]).toEqual(['converts_to_nothing', true])
            return
          }
          expect(got.destAmount).toBeGreaterThan(0n)
          expect(got.destAmount <= convertDown(got.srcAmount, 'BTC', 'USD', rate)).toBe(true)
          if (!fromSource) expect(got.destAmount).toBe(minor)
          expect(got.srcFee).toBe(feeFor(feeRule, got.srcAmount))
        },
      ),
    )
  })
})

describe('walletOutPostings', () => {
  const txn = (t: Partial<Txn>): Txn =>
    ({
      srcCcy: 'BTC',
      destCcy: 'BTC',
      srcAmountMinor: 0n,
      srcFeeMinor: 0n,
      srcNetworkFeeMinor: 0n,
      destAmountMinor: 0n,
      deductFeesFromDest: false,
      ...t,
    }) as Txn
  const sumsByCcy = (postings: Array<{ ccy: string; amount: bigint }>) => {
    const sums = new Map<string, bigint>()
    for (const p of postings) sums.set(p.ccy, (sums.get(p.ccy) ?? 0n) + p.amount)
    return Object.fromEntries(sums)
  }

  it('a send: the wallet pays amount and fees, the fee goes to revenue, the rest leaves by the rail', () => {
    const t = txn({
      srcAmountMinor: 10_000n,
      srcFeeMinor: 50n,
      srcNetworkFeeMinor: 200n,
      destAmountMinor: 10_000n,
    })
    expect(walletOutPostings(t, 'wal_a', { system: 'onchain' })).toEqual([
      { accountId: 'wal_a', ccy: 'BTC', amount: -10_250n },
      { accountId: 'sys:fees:BTC', ccy: 'BTC', amount: 50n },
      { accountId: 'sys:onchain:BTC', ccy: 'BTC', amount: 10_200n },
    ])
  })

  it('a swap: the source goes through FX liquidity in both currencies into the other wallet', () => {
    const t = txn({ destCcy: 'USD', srcAmountMinor: 100_000n, srcFeeMinor: 500n, destAmountMinor: 9_500n })
    expect(walletOutPostings(t, 'wal_btc', { wallet: 'wal_usd' })).toEqual([
      { accountId: 'wal_btc', ccy: 'BTC', amount: -100_500n },
      { accountId: 'sys:fees:BTC', ccy: 'BTC', amount: 500n },
      { accountId: 'sys:fx:BTC', ccy: 'BTC', amount: 100_000n },
      { accountId: 'sys:fx:USD', ccy: 'USD', amount: -9_500n },
      { accountId: 'wal_usd', ccy: 'USD', amount: 9_500n },
    ])
  })

  it('balances in every currency, fees deducted or not, and debits the wallet what walletDebit says', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 15n }),
        fc.bigInt({ min: 0n, max: 10n ** 6n }),
        fc.bigInt({ min: 0n, max: 10n ** 6n }),
        fc.bigInt({ min: 1n, max: 10n ** 15n }),
        fc.boolean(),
        fc.constantFrom('BTC', 'USD'),
        (srcAmount, fee, networkFee, destAmount, deduct, destCcy) => {
          const t = txn({
            destCcy: destCcy,
            srcAmountMinor: srcAmount,
            srcFeeMinor: fee,
            srcNetworkFeeMinor: networkFee,
            destAmountMinor: destAmount,
            deductFeesFromDest: deduct,
          })
          const postings = walletOutPostings(t, 'wal_a', { system: 'lightning' })
          for (const sum of Object.values(sumsByCcy(postings))) expect(sum).toBe(0n)
          expect(postings[0]).toEqual({ accountId: 'wal_a', ccy: 'BTC', amount: -walletDebit(t) })
          expect(walletDebit(t)).toBe(deduct ? srcAmount : srcAmount + fee + networkFee)
        },
      ),
    )
  })
})

describe('sameCurrencySendQuote', () => {
  /** A USDT send with a 1 USDT fixed fee, 0.1% on top, and a 2 USDT network fee. */
  const usdt = (minor: bigint, deduct = false) =>
    sameCurrencySendQuote({
      requested: { side: 'dest', minor },
      ccy: 'USDT',
      feeRule: { fixedMinor: 1_000_000n, bps: 10n },
      networkFee: 2_000_000n,
      deduct,
      destDetails: { address: 'T...' },
    })

  it('holds the service and network fees on top, at no conversion, from the wallet', () => {
    expect(usdt(100_000_000n)).toEqual({
      srcAmount: 100_000_000n,
      srcFee: 1_100_000n,
      srcNetworkFee: 2_000_000n,
      destAmount: 100_000_000n,
      fxRate: ONE,
      srcDetails: {},
      destDetails: { address: 'T...' },
      fromWallet: true,
    })
  })

  it('takes the fees from the amount with deduct, and refuses an amount they eat up', () => {
    expect(usdt(100_000_000n, true)).toMatchObject({ srcAmount: 100_000_000n, destAmount: 96_900_000n })
    const refused = usdt(3_000_000n, true)
    expect(isMoneyError(refused) && refused.code).toBe('amount_below_fees')
  })
})
