import { describe, expect, it } from 'vitest'
import { normalise, parseList } from './normalise.js'
import { readAnswer } from './provider.js'

describe('screening: destinations in one spelling', () => {
  it('compares bech32 in lower case, base58 and TRON as written, node keys and Ethereum in lower case, bank accounts without separators', () => {
    expect(normalise('bitcoin', ' BCRT1QG975H6GDX5MRYEAC72H6LJ2NZYGUGXHY5N57Q2 ')).toBe(
      'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2',
    )
    expect(normalise('bitcoin', '1BoatSLRHtKNngkdXEeobR76b53LETtpyT')).toBe(
      '1BoatSLRHtKNngkdXEeobR76b53LETtpyT',
    )
    expect(normalise('bitcoin', 'bc1qb0rken')).toBeUndefined()
    expect(normalise('lightning_node', `03${'AB'.repeat(32)}`)).toBe(`03${'ab'.repeat(32)}`)
    expect(normalise('tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')
    expect(normalise('tron', 'tr7nhqjekqxgtci8q8zy4pl8otszgjlj6t')).toBeUndefined()
    expect(normalise('ethereum', '0x52908400098527886E0F7030069857D2E4169EE7')).toBe(
      '0x52908400098527886e0f7030069857d2e4169ee7',
    )
    expect(normalise('bank', 'vcb:0123-456 789')).toBe('VCB:0123456789')
    expect(normalise('bank', '0123456789')).toBeUndefined()
  })

  it('reads a list file: bare lines of a type, type,value lines, comments, a header and duplicates', () => {
    const parsed = parseList(
      '# list\ntype,value\nbitcoin,BCRT1QG975H6GDX5MRYEAC72H6LJ2NZYGUGXHY5N57Q2\nbank,970436,0123456789\n\nTR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t\nTR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t\n',
      'tron',
    )
    expect(parsed).toEqual({
      entries: [
        { type: 'bitcoin', value: 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2' },
        { type: 'bank', value: '970436:0123456789' },
        { type: 'tron', value: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
      ],
      rejected: [],
    })
    expect(parseList('bitcoin,nope\nmars,x\nTR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toMatchObject({
      error: '3 line(s) are not a destination',
      rejected: [{ line: 1 }, { line: 2 }, { line: 3 }],
    })
  })

  it("reads the provider's answer, and calls any other shape an error", () => {
    const asked = [{ type: 'tron' as const, value: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }]
    expect(readAnswer('{"matches":[]}', asked)).toEqual({ verdict: 'clear' })
    expect(readAnswer(JSON.stringify({ matches: [{ ...asked[0], list: 'sdn' }] }), asked)).toEqual({
      verdict: 'hit',
      matches: [{ ...asked[0], list: 'sdn' }],
    })
    expect(readAnswer('{"matches":[{"type":"tron","value":"Tother"}]}', asked)).toMatchObject({
      verdict: 'error',
    })
    expect(readAnswer('{"hit":true}', asked)).toMatchObject({ verdict: 'error' })
    expect(readAnswer('<html>', asked)).toMatchObject({ verdict: 'error' })
  })
})
