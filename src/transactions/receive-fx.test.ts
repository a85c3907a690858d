import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { parseRate } from '../shared/amount.js'
import type { Posting } from '../ledger/ledger.js'
import type { CreateInput } from './flow.js'
import { isMoneyError } from './errors.js'
import { receiveFxQuote, receiveIntoWalletPostings } from './receive-fx.js'
import { asAccountId } from '../shared/ids.js'

/** The pure part of a receive credited to a wallet in another currency than the rail's. */

const sums = (postings: Posting[]) => {
  const by = new Map<string, bigint>()
  for (const p of postings) by.set(p.ccy, (by.get(p.ccy) ?? 0n) + p.amount)
  return Object.fromEntries(by)
}

describe('receiveIntoWalletPostings', () => {
  it('BTC into a USDT wallet: rail pays in, fee and rest to BTC, sys:fx:USDT pays the wallet the conversion', () => {
    // 94534.95 USDT per BTC is 945.3495 micro-USDT per sat; 19,795 sats make 18,713,193.3... micro-USDT.
    const r = receiveIntoWalletPostings({
      railAccount: 'sys:lightning:BTC',
      walletId: 'wal_u',
      srcCcy: 'BTC',
      destCcy: 'USDT',
      receivedMinor: 20_000n,
      feeMinor: 205n,
      fxRate: parseRate('94534.95'),
    })
    expect(r.creditedMinor).toBe(18_713_193n)
    expect(r.postings).toEqual([
      { accountId: 'sys:lightning:BTC', ccy: 'BTC', amount: -20_000n },
      { accountId: 'sys:fees:BTC', ccy: 'BTC', amount: 205n },
      { accountId: 'sys:fx:BTC', ccy: 'BTC', amount: 19_795n },
      { accountId: 'sys:fx:USDT', ccy: 'USDT', amount: -18_713_193n },
      { accountId: 'wal_u', ccy: 'USDT', amount: 18_713_193n },
    ])
  })

  it('VND from a bank rail into a BTC wallet rounds the sats down', () => {
    // 1,000,000 VND less 1,000 fee at 0.000000000404 BTC per dong: 40,359.6 sats, so 40,359.
    const r = receiveIntoWalletPostings({
      railAccount: 'sys:bank:VND',
      walletId: 'wal_b',
      srcCcy: 'VND',
      destCcy: 'BTC',
      receivedMinor: 1_000_000n,
      feeMinor: 1_000n,
      fxRate: parseRate('0.000000000404'),
    })
    expect(r.creditedMinor).toBe(40_359n)
    expect(sums(r.postings)).toEqual({ VND: 0n, BTC: 0n })
  })

  it('in one currency it is the plain receive: the wallet gets what arrived less the fee', () => {
    const r = receiveIntoWalletPostings({
      railAccount: 'sys:lightning:BTC',
      walletId: 'wal_b',
      srcCcy: 'BTC',
      destCcy: 'BTC',
      receivedMinor: 10_105n,
      feeMinor: 105n,
      fxRate: parseRate('1'),
    })
    expect(r).toEqual({
      creditedMinor: 10_000n,
      postings: [
        { accountId: 'sys:lightning:BTC', ccy: 'BTC', amount: -10_105n },
        { accountId: 'wal_b', ccy: 'BTC', amount: 10_000n },
        { accountId: 'sys:fees:BTC', ccy: 'BTC', amount: 105n },
      ],
    })
  })

  it('always sums to zero per currency and never credits more than the rate gives', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 15n }),
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.integer({ min: 0, max: 12 }),
        (received, feeRaw, num, scale) => {
          const fee = feeRaw % (received + 1n)
          const r = receiveIntoWalletPostings({
            railAccount: 'sys:lightning:BTC',
            walletId: 'wal',
            srcCcy: 'BTC',
            destCcy: 'VND',
            receivedMinor: received,
            feeMinor: fee,
            fxRate: { num, scale },
          })
          expect(sums(r.postings)).toEqual({ BTC: 0n, VND: 0n })
          // VND has no decimals, BTC 8: exact value in dong is (received - fee) * num / 10^(scale + 8).
          const exactTimesDen = (received - fee) * num
          const den = 10n ** BigInt(scale + 8)
          expect(r.creditedMinor * den <= exactTimesDen).toBe(true)
          expect((r.creditedMinor + 1n) * den > exactTimesDen).toBe(true)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('refuses a fee larger than what arrived', () => {
    expect(() =>
      receiveIntoWalletPostings({
        railAccount: 'sys:lightning:BTC',
        walletId: 'wal',
        srcCcy: 'BTC',
        destCcy: 'USDT',
        receivedMinor: 10n,
        feeMinor: 11n,
        fxRate: parseRate('95000'),
      }),
    ).toThrow()
  })
})

describe('receiveFxQuote', () => {
  const input = (side: 'src' | 'dest', amt: string, destCcy = 'VND'): CreateInput => ({
    accountId: asAccountId('acc_x'),
    deductNetworkFeesFromDest: false,
    sourceReq: { ccy: 'BTC', method: 'lightning', ...(side === 'src' ? { amtRequested: amt } : {}) },
    destReq: { ccy: destCcy, method: 'svcpay', ...(side === 'dest' ? { amtRequested: amt } : {}) },
  })
  const feeRule = { fixedMinor: 5n, bps: 100n }
  const fx = parseRate('2457650000')

  it('from the source: the fee comes out of the sats paid, the rest converts down', () => {
    const q = receiveFxQuote({ input: input('src', '0.0002'), fx, feeRule, srcDetails: {} })
    // 20,000 sats, fee 5 + 200; 19,795 sats at 24.5765 dong each: 486,491.8...
    expect(q).toMatchObject({ srcAmount: 20_000n, srcFee: 205n, destAmount: 486_491n, fxRate: fx })
  })

  it('from the destination: the sats that cover it plus the fee on them; what they buy is quoted', () => {
    const q = receiveFxQuote({ input: input('dest', '500000'), fx, feeRule, srcDetails: {} })
    // 500,000 dong need 20,344.6... sats, so 20,345 (buying 500,008 dong); fee 5 + 204.
    expect(q).toMatchObject({ srcAmount: 20_554n, srcFee: 209n, destAmount: 500_008n })
  })

  it('from the destination, a tiny amount is one sat plus its fee, not a refusal', () => {
    const q = receiveFxQuote({ input: input('dest', '1'), fx, feeRule, srcDetails: {} })
    // 1 dong needs 1 sat (buying 24 dong); fee 5 + 1.
    expect(q).toMatchObject({ srcAmount: 7n, srcFee: 6n, destAmount: 24n })
  })

  it('refuses a source amount the fee takes whole, and one converting to nothing', () => {
    const small = receiveFxQuote({ input: input('src', '0.00000005'), fx, feeRule, srcDetails: {} })
    expect(isMoneyError(small) && small.code).toBe('amount_below_fees')
    const tiny = receiveFxQuote({
      input: input('src', '0.0000001', 'BTC'),
      fx: parseRate('0.00000001'),
      feeRule,
      srcDetails: {},
    })
    expect(isMoneyError(tiny) && tiny.code).toBe('converts_to_nothing')
  })
})
