import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { JSON_DEPTH_MAX, JsonInputError, parseJsonBody, stringify } from './json.js'
import { DecimalText, parseAmount } from './amount.js'

describe('parseJsonBody', () => {
  it('keeps amounts as their exact source text', () => {
    const body = parseJsonBody(
      '{"destReq":{"ccy":"USD","amtRequested":0.1},"sourceReq":{"amtRequested":0.30000000000000004}}',
    ) as any
    expect(body.destReq.amtRequested).toBe('0.1')
    expect(body.sourceReq.amtRequested).toBe('0.30000000000000004')
    expect(parseJsonBody('{"amount":123456789012345678901234567890.123456789}')).toEqual({
      amount: '123456789012345678901234567890.123456789',
    })
    expect(parseJsonBody('{"amount":1e-8}')).toEqual({ amount: '1e-8' })
  })

  it('lets amount parsing see exactly what the client wrote', () => {
    const body = parseJsonBody('{"amtRequested":0.30000000000000004}') as any
    // As a float this would be indistinguishable from a valid two-decimal amount once rounded.
    expect(parseAmount(body.amtRequested, 'USD')).toEqual({
      ok: false,
      issue: 'has more than 2 decimal places for USD',
    })
    expect(parseAmount((parseJsonBody('{"amtRequested":0.1}') as any).amtRequested, 'BTC')).toEqual({
      ok: true,
      minor: 10_000_000n,
    })
  })

  it('reads other numbers as numbers and everything else as JSON.parse does', () => {
    const text = '{"limit":20,"page":1.5,"flag":true,"none":null,"s":"a\\"b","list":[1,"x",{"k":-2e3}]}'
    expect(parseJsonBody(text)).toEqual(JSON.parse(text))
  })

  it('refuses malformed JSON, trailing garbage and duplicate keys with different values', () => {
    for (const bad of ['', ' ', '{"a":', '{a:1}', "{'a':1}", '{"a":1} x', '[1,]', '{"a":1,"a":2}', 'NaN']) {
      expect(() => parseJsonBody(bad), bad).toThrow(JsonInputError)
    }
  })

  it('refuses nesting deeper than the limit before parsing', () => {
    const nested = (n: number) => '['.repeat(n) + ']'.repeat(n)
    expect(() => parseJsonBody(nested(JSON_DEPTH_MAX))).not.toThrow()
    expect(() => parseJsonBody(nested(JSON_DEPTH_MAX + 1))).toThrow(/nesting deeper than 32/)
    expect(() => parseJsonBody('{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000))).toThrow(JsonInputError)
  })

  it('does not count brackets inside strings, escaped quotes included', () => {
    const deepText = '['.repeat(100) + '\\"' + '{'.repeat(100)
    expect(parseJsonBody(JSON.stringify({ note: deepText }))).toEqual({ note: deepText })
  })

  it('does not let a body change object prototypes', () => {
    const body = parseJsonBody(
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}}',
    ) as any
    expect(({} as any).polluted).toBeUndefined()
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype)
    expect(body.polluted).toBeUndefined()
  })
})

describe('stringify', () => {
  it('writes DecimalText as a bare number, never an exponent', () => {
    expect(stringify({ amount: new DecimalText('0.000001') })).toBe('{"amount":0.000001}')
    expect(stringify({ amount: new DecimalText('0.00000001') })).toBe('{"amount":0.00000001}')
    expect(stringify([new DecimalText('2470000000'), new DecimalText('0.3')])).toBe('[2470000000,0.3]')
    expect(stringify(new DecimalText('95123.123456789012345678'))).toBe('95123.123456789012345678')
  })

  it('keeps any text a string, even text shaped like the number markers', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const note = `\u0000${a}:${b}\u0000`
        const out = stringify({ note, amount: new DecimalText('1.5') })
        expect(JSON.parse(out)).toEqual({ note, amount: 1.5 })
      }),
    )
  })

  it('serialises plain values like JSON.stringify', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(stringify(value)).toBe(JSON.stringify(value))
      }),
    )
  })

  it('omits undefined fields and functions, writes bigints, dates and non-finite numbers sensibly', () => {
    const when = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6))
    expect(
      stringify({
        a: undefined,
        f: () => 1,
        b: 12n,
        d: when,
        n: NaN,
        i: Infinity,
        arr: [undefined, 1],
        s: 'é"\n',
      }),
    ).toBe('{"b":12,"d":"2026-01-02T03:04:05.006Z","n":null,"i":null,"arr":[null,1],"s":"é\\"\\n"}')
    expect(stringify(undefined)).toBe('null')
    expect(stringify(null)).toBe('null')
    expect(stringify(false)).toBe('false')
  })

  it('produces text that JSON.parse reads back', () => {
    const value = {
      data: { BTCUSD: new DecimalText('95000'), BTCETH: new DecimalText('27.94') },
      list: [{ x: 'y' }],
    }
    expect(JSON.parse(stringify(value))).toEqual({
      data: { BTCUSD: 95000, BTCETH: 27.94 },
      list: [{ x: 'y' }],
    })
  })
})
