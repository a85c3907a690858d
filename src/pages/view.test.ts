import { describe, expect, it } from 'vitest'
import { encodeVietQr } from '../payins/vietqr.js'
import { parseRate } from '../shared/amount.js'
import type { RatesService } from '../rates/service.js'
import { pageStatusEvent } from './page-status.js'
import { BIP84_ADDRESS, BOLT11_COFFEE } from './testing.js'
import {
  buildInvoicePageView,
  fiatText,
  fiatValue,
  isPageIdShape,
  pageStatusOf,
  paymentOf,
  type PageRecord,
} from './view.js'

const lightning = (overrides: Partial<PageRecord> = {}): PageRecord => ({
  txnId: 'txn_secret',
  kind: 'ln_receive',
  state: 'srccreated',
  srcAmount: 250_000n,
  srcSettled: null,
  srcDetails: { paymentRequest: BOLT11_COFFEE, invoicePageUrl: 'http://x/pay/abc' },
  expiresAtMs: 1_750_000_900_000,
  merchantName: 'Cà phê Sài Gòn',
  ...overrides,
})

const onchain = (overrides: Partial<PageRecord> = {}): PageRecord => ({
  txnId: 'txn_secret2',
  kind: 'onchain_receive',
  state: 'srcintent',
  srcAmount: 12_345n,
  srcSettled: null,
  srcDetails: {
    address: BIP84_ADDRESS,
    invoice: `bitcoin:${BIP84_ADDRESS}?amount=0.00012345&label=Acme`,
  },
  expiresAtMs: 1_750_086_400_000,
  merchantName: 'Acme',
  ...overrides,
})

const VND_QR = encodeVietQr({
  bankBin: '970436',
  accountNumber: '0011001932418',
  amount: 500_000n,
  memo: 'SVCPAY 7F3KQ2',
})

/** A VND receive after confirm, with src_details as the flow records them (and one field the page must not read). */
const vndReceive = (overrides: Partial<PageRecord> = {}): PageRecord => ({
  txnId: 'txn_secret3',
  kind: 'vnd_receive',
  state: 'srccreated',
  srcAmount: 500_000n,
  srcSettled: null,
  srcDetails: {
    bankBin: '970436',
    bankName: 'Vietcombank',
    bankAcctNum: '0011001932418',
    accountName: 'CONG TY TNHH SVCPAY',
    amount: '500000',
    memo: 'SVCPAY 7F3KQ2',
    vietQr: VND_QR,
    invoicePageUrl: 'http://x/pay/CCCCCCCCCCCCCCCCCCCCCC',
    internalNote: 'not for the payer',
  },
  expiresAtMs: 1_750_000_900_000,
  merchantName: 'Cà phê Sài Gòn',
  ...overrides,
})

/** A rates service over fixed rates, the way the static provider answers. */
const fixedRates = (rates: Record<string, string>): RatesService => ({
  async current() {
    const map = new Map(Object.entries(rates).map(([k, v]) => [k, parseRate(v)]))
    return { rates: map, texts: rates, fetchedAt: Date.now() }
  },
  perBtc(snapshot, ccy) {
    const r = snapshot.rates.get(ccy)
    if (!r) throw new Error(`no rate for ${ccy}`)
    return r
  },
})

describe('pageStatusOf', () => {
  it.each([
    ['ln_receive', 'srccreated', { state: 'awaiting_payment' }],
    ['ln_receive', 'completed', { state: 'paid' }],
    ['ln_receive', 'expired', { state: 'expired' }],
    ['onchain_receive', 'srcintent', { state: 'awaiting_payment' }],
    ['onchain_receive', 'completed', { state: 'paid' }],
    ['onchain_receive', 'expired', { state: 'expired' }],
    ['vnd_receive', 'srccreated', { state: 'awaiting_payment' }],
    ['vnd_receive', 'completed', { state: 'paid' }],
    ['vnd_receive', 'expired', { state: 'expired' }],
    ['vnd_receive', 'quoted', { state: 'expired' }],
    // States no page can be in are never shown as payable.
    ['ln_receive', 'failed', { state: 'expired' }],
    ['onchain_receive', 'error', { state: 'expired' }],
  ] as const)('%s %s -> %j', (kind, state, expected) => {
    expect(pageStatusOf({ kind, state, srcDetails: {} }, 3)).toEqual(expected)
  })

  it('shows an on-chain payment in srccreated as seen with its confirmations, capped at those required', () => {
    const seen = (confirmations: unknown) =>
      pageStatusOf({ kind: 'onchain_receive', state: 'srccreated', srcDetails: { confirmations } }, 3)
    expect(seen(0)).toEqual({ state: 'seen', confirmations: { have: 0, need: 3 } })
    expect(seen(2)).toEqual({ state: 'seen', confirmations: { have: 2, need: 3 } })
    expect(seen(7)).toEqual({ state: 'seen', confirmations: { have: 3, need: 3 } })
    expect(seen(undefined)).toEqual({ state: 'seen', confirmations: { have: 0, need: 3 } })
    expect(seen('junk')).toEqual({ state: 'seen', confirmations: { have: 0, need: 3 } })
  })

  it('a receive completed with another amount than asked is paid short or over, with what arrived', () => {
    const done = (srcSettled: bigint) => vndReceive({ state: 'completed', srcSettled })
    expect(pageStatusOf(done(400_000n), 3)).toEqual({
      state: 'paid',
      paid: { outcome: 'underpaid', arrived: '400000' },
    })
    expect(pageStatusOf(done(600_000n), 3)).toEqual({
      state: 'paid',
      paid: { outcome: 'overpaid', arrived: '600000' },
    })
    expect(pageStatusOf(done(500_000n), 3)).toEqual({ state: 'paid' })
    const short = onchain({ state: 'completed', srcAmount: 100_000n, srcSettled: 40_000n })
    expect(pageStatusEvent(pageStatusOf(short, 3))).toBe(
      'event: status\ndata: {"state":"paid","paid":{"outcome":"underpaid","arrived":"40000"}}\n\n',
    )
    const view = buildInvoicePageView('pg_x', short, { confirmationsNeeded: 3 })
    expect(view).toMatchObject({ state: 'paid', paid: { outcome: 'underpaid', arrived: '40000' } })
  })

  it('gives the stream nothing but the public status', () => {
    const status = pageStatusOf(onchain({ state: 'srccreated', srcDetails: { confirmations: 1 } }), 2)
    expect(pageStatusEvent(status)).toBe(
      'event: status\ndata: {"state":"seen","confirmations":{"have":1,"need":2}}\n\n',
    )
  })
})

describe('paymentOf', () => {
  it('puts a Lightning invoice behind the lightning: scheme and shows it bare', () => {
    expect(paymentOf(lightning())).toEqual({ uri: `lightning:${BOLT11_COFFEE}`, text: BOLT11_COFFEE })
  })

  it('uses the BIP21 URI recorded at confirm and shows the address', () => {
    expect(paymentOf(onchain())).toEqual({
      uri: `bitcoin:${BIP84_ADDRESS}?amount=0.00012345&label=Acme`,
      text: BIP84_ADDRESS,
    })
  })

  it('builds a BIP21 URI from the address and amount when none was recorded', () => {
    expect(paymentOf(onchain({ srcDetails: { address: BIP84_ADDRESS } })).uri).toBe(
      `bitcoin:${BIP84_ADDRESS}?amount=0.00012345`,
    )
  })
})

describe('fiat value', () => {
  it('writes every decimal of the currency', () => {
    expect(fiatText(2370n, 'USD')).toBe('23.70')
    expect(fiatText(5n, 'USD')).toBe('0.05')
    expect(fiatText(0n, 'USD')).toBe('0.00')
    expect(fiatText(6_250_000n, 'VND')).toBe('6250000')
  })

  it('converts exactly and rounds down', async () => {
    const rates = fixedRates({ USD: '95000', VND: '2470000000' })
    // 12,345 sats at 95,000 USD/BTC is 11.72775 USD.
    expect(await fiatValue(rates, 'USD', 12_345n)).toEqual({ ccy: 'USD', amount: '11.72' })
    expect(await fiatValue(rates, 'VND', 12_345n)).toEqual({ ccy: 'VND', amount: '304921' })
  })

  it('shows no fiat value rather than fail when there is no rate', async () => {
    const down: RatesService = {
      current: async () => {
        throw new Error('rate_unavailable')
      },
      perBtc: () => ({ num: 1n, scale: 0 }),
    }
    expect(await fiatValue(down, 'USD', 1n)).toBeUndefined()
    expect(await fiatValue(fixedRates({ USD: '1' }), 'EUR', 1n)).toBeUndefined()
  })
})

describe('buildInvoicePageView', () => {
  it('builds a Lightning view with exact amounts and nothing private', () => {
    const view = buildInvoicePageView('AAAAAAAAAAAAAAAAAAAAAA', lightning(), {
      confirmationsNeeded: 1,
      fiat: { ccy: 'USD', amount: '237.50' },
    })
    expect(view).toEqual({
      pageId: 'AAAAAAAAAAAAAAAAAAAAAA',
      kind: 'lightning',
      merchantName: 'Cà phê Sài Gòn',
      amountBtc: '0.0025',
      amountSats: '250000',
      fiat: { ccy: 'USD', amount: '237.50' },
      paymentUri: `lightning:${BOLT11_COFFEE}`,
      paymentText: BOLT11_COFFEE,
      expiresAtMs: 1_750_000_900_000,
      state: 'awaiting_payment',
    })
    expect(JSON.stringify(view)).not.toContain('txn_secret')
    expect(JSON.stringify(view)).not.toContain('invoicePageUrl')
  })

  it('builds an on-chain view with its confirmations once seen', () => {
    const view = buildInvoicePageView(
      'BBBBBBBBBBBBBBBBBBBBBB',
      onchain({ state: 'srccreated', srcDetails: { ...onchain().srcDetails, confirmations: 1 } }),
      { confirmationsNeeded: 3 },
    )
    expect(view).toMatchObject({
      kind: 'onchain',
      amountBtc: '0.00012345',
      amountSats: '12345',
      state: 'seen',
      confirmations: { have: 1, need: 3 },
    })
    expect('fiat' in view).toBe(false)
  })

  it('builds a VND bank transfer view from exactly the recorded transfer details', () => {
    const view = buildInvoicePageView('CCCCCCCCCCCCCCCCCCCCCC', vndReceive(), { confirmationsNeeded: 3 })
    expect(view).toEqual({
      pageId: 'CCCCCCCCCCCCCCCCCCCCCC',
      kind: 'vietqr',
      merchantName: 'Cà phê Sài Gòn',
      bankBin: '970436',
      bankName: 'Vietcombank',
      accountNumber: '0011001932418',
      accountName: 'CONG TY TNHH SVCPAY',
      amountVnd: '500000',
      memo: 'SVCPAY 7F3KQ2',
      vietQr: VND_QR,
      expiresAtMs: 1_750_000_900_000,
      state: 'awaiting_payment',
    })
    expect(JSON.stringify(view)).not.toContain('txn_secret3')
    expect(JSON.stringify(view)).not.toContain('invoicePageUrl')
    expect(JSON.stringify(view)).not.toContain('internalNote')
  })
})

describe('isPageIdShape', () => {
  it('accepts 128-bit base64url ids and nothing that could not be one', () => {
    expect(isPageIdShape('7mQ2xV9kLr4TzB8nW1cY5e')).toBe(true)
    expect(isPageIdShape('short')).toBe(false)
    expect(isPageIdShape('7mQ2xV9kLr4TzB8nW1cY5e/../x')).toBe(false)
    expect(isPageIdShape('7mQ2xV9kLr4TzB8nW1cY5e%00')).toBe(false)
    expect(isPageIdShape('a'.repeat(65))).toBe(false)
  })
})
