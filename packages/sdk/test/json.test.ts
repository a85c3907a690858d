import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { JsonNumber, JsonSyntaxError, parseJsonLossless, plainDecimal } from '../src/json.js'
import { decodeResponse, encodeBody } from '../src/decode.js'

describe('parseJsonLossless', () => {
  it('keeps every number as its source text', () => {
    const v = parseJsonLossless(
      '{"a":0.30000000000000004,"b":[1e-7,123456789012345678901234567890],"c":-0}',
    ) as any
    expect(v.a).toEqual(new JsonNumber('0.30000000000000004'))
    expect(v.b[0].text).toBe('1e-7')
    expect(v.b[1].text).toBe('123456789012345678901234567890')
    expect(v.c.text).toBe('-0')
  })

  it('agrees with JSON.parse on everything but numbers', () => {
    const strip = (v: unknown): unknown =>
      v instanceof JsonNumber
        ? Number(v.text)
        : Array.isArray(v)
          ? v.map(strip)
          : v && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, strip(x)]))
            : v
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(strip(parseJsonLossless(text))).toEqual(JSON.parse(text))
      }),
      { numRuns: 500 },
    )
  })

  it('decodes escapes and unicode like the platform', () => {
    const text = '{"s":"a\\"b\\\\c\\u00e9\\ud83d\\ude00\\n","t":true,"f":false,"n":null}'
    expect(parseJsonLossless(text)).toEqual(JSON.parse(text))
  })

  it('treats __proto__ as an ordinary key', () => {
    const v = parseJsonLossless('{"__proto__":{"polluted":true}}') as any
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype)
    expect(({} as any).polluted).toBeUndefined()
    expect(Object.keys(v)).toEqual(['__proto__'])
  })

  it.each(['', '{', '{"a":}', '[1,]', '01', '1.', '.5', '"\u0001"', 'nul', '{"a":1}x', '{a:1}', '+1', 'NaN'])(
    'refuses %j',
    (text) => {
      expect(() => parseJsonLossless(text)).toThrow(JsonSyntaxError)
      expect(() => JSON.parse(text)).toThrow()
    },
  )

  it('refuses nesting deeper than its limit', () => {
    expect(() => parseJsonLossless('['.repeat(65) + ']'.repeat(65))).toThrow(/Nesting/)
    expect(parseJsonLossless('['.repeat(64) + ']'.repeat(64))).toBeDefined()
  })
})

describe('plainDecimal', () => {
  it.each([
    ['1e-6', '0.000001'],
    ['1.5E3', '1500'],
    ['-2.50e-2', '-0.025'],
    ['123', '123'],
    ['0.10', '0.10'],
    ['12.345e1', '123.45'],
    ['1e0', '1'],
    ['-0e5', '0'],
  ])('%s is %s', (input, out) => {
    expect(plainDecimal(input)).toBe(out)
  })
})

describe('decodeResponse', () => {
  const txn =
    '{"txnId":"t1","fxRate":2470000000.123456789,"createdAt":1767225600000,' +
    '"sourceReq":{"ccy":"BTC","amtRequested":0.00000001,"amtSettled":null,"svcpayFees":0.3,"reqDetails":{"amount":21000000.12345678}},' +
    '"destReq":{"ccy":"VND","amtRequested":24700000000000000000,"networkFees":0}}'

  it('gives amounts as exact decimal strings, rates as decimal strings and times as numbers', () => {
    const v = decodeResponse(txn, { amounts: 'decimal' }) as any
    expect(v.sourceReq.amtRequested).toBe('0.00000001')
    expect(v.sourceReq.svcpayFees).toBe('0.3')
    expect(v.sourceReq.amtSettled).toBeNull()
    expect(v.sourceReq.reqDetails.amount).toBe('21000000.12345678')
    expect(v.destReq.amtRequested).toBe('24700000000000000000')
    expect(v.fxRate).toBe('2470000000.123456789')
    expect(v.createdAt).toBe(1767225600000)
  })

  it('gives amounts as bigint minor units of the enclosing currency', () => {
    const v = decodeResponse(txn, { amounts: 'minor' }) as any
    expect(v.sourceReq.amtRequested).toBe(1n)
    expect(v.sourceReq.svcpayFees).toBe(30_000_000n)
    expect(v.sourceReq.reqDetails.amount).toBe(2_100_000_012_345_678n)
    expect(v.destReq.amtRequested).toBe(24_700_000_000_000_000_000n)
    expect(v.destReq.networkFees).toBe(0n)
    expect(v.fxRate).toBe('2470000000.123456789')
  })

  it('keeps a fraction or an unsafe integer outside amount fields as text, never a float', () => {
    const v = decodeResponse('{"x":0.1,"y":9007199254740993,"z":42}', { amounts: 'decimal' }) as any
    expect(v).toEqual({ x: '0.1', y: '9007199254740993', z: 42 })
  })

  it('reads every number as a decimal when asked (rates)', () => {
    expect(
      decodeResponse('{"data":{"BTCUSD":95000.5,"BTCVND":2470000000}}', {
        amounts: 'minor',
        numbersAsDecimal: true,
      }),
    ).toEqual({
      data: { BTCUSD: '95000.5', BTCVND: '2470000000' },
    })
  })
})

describe('encodeBody', () => {
  it('writes bigint minor units as decimals of the side currency and keeps decimal strings', () => {
    const text = encodeBody({
      extRefId: 'x',
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: 123_456n, reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', amtRequested: undefined, reqDetails: {} },
    })
    expect(JSON.parse(text)).toEqual({
      extRefId: 'x',
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.00123456', reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
    })
    expect(JSON.parse(encodeBody({ ccy: 'USDT', amount: '12.5' }))).toEqual({ ccy: 'USDT', amount: '12.5' })
  })

  it('refuses a float amount and a bigint outside an amount field', () => {
    expect(() => encodeBody({ sourceReq: { ccy: 'BTC', amtRequested: 0.001 } })).toThrow(/never as numbers/)
    expect(() => encodeBody({ blocks: 1n })).toThrow(/only accepted for amounts/)
    expect(() => encodeBody({ amount: 5n })).toThrow(/needs the currency/)
    expect(JSON.parse(encodeBody({ amount: 5n }, { defaultCcy: 'BTC' }))).toEqual({ amount: '0.00000005' })
  })
})
