import { decode as bip21Decode } from 'bip21'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { buildBip21, satsToBtcText } from './bip21.js'

const ADDRESS = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu'

describe('buildBip21', () => {
  it('writes the example shape of BIP21', () => {
    // BIP21's own example: bitcoin:175tWpb8K1S7NmH4Zx6rewF9WQrcZv245W?amount=20.3&label=Luke-Jr
    expect(
      buildBip21({ address: '175tWpb8K1S7NmH4Zx6rewF9WQrcZv245W', amountBtc: '20.3', label: 'Luke-Jr' }),
    ).toBe('bitcoin:175tWpb8K1S7NmH4Zx6rewF9WQrcZv245W?amount=20.3&label=Luke-Jr')
    expect(buildBip21({ address: ADDRESS })).toBe(`bitcoin:${ADDRESS}`)
  })

  it('percent-encodes label and message', () => {
    const uri = buildBip21({
      address: ADDRESS,
      amountBtc: '0.001',
      label: 'Tiệm cà phê & co',
      message: 'Order #42 = 1/2 paid?',
    })
    expect(uri).toBe(
      `bitcoin:${ADDRESS}?amount=0.001&label=Ti%E1%BB%87m%20c%C3%A0%20ph%C3%AA%20%26%20co&message=Order%20%2342%20%3D%201%2F2%20paid%3F`,
    )
  })

  it('the independent bip21 package decodes it back to the same address, amount, label and message', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 2_100_000_000_000_000n }),
        fc.option(fc.string({ unit: 'grapheme', maxLength: 40 }), { nil: undefined }),
        fc.option(fc.string({ unit: 'grapheme', maxLength: 80 }), { nil: undefined }),
        (amountSats, label, message) => {
          const amountBtc = satsToBtcText(amountSats)
          const uri = buildBip21({ address: ADDRESS, amountBtc, label, message })
          const decoded = bip21Decode(uri)
          expect(decoded.address).toBe(ADDRESS)
          // The package parses the amount into a double; compare with the double of our exact text,
          // and separately check the exact text survives in the URI.
          expect(decoded.options.amount).toBe(Number(amountBtc))
          expect(new URL(uri).searchParams.get('amount')).toBe(amountBtc)
          expect(decoded.options.label).toBe(label)
          expect(decoded.options.message).toBe(message)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('refuses amounts that are not exact decimal BTC', () => {
    for (const amountBtc of ['', '1e-8', '0.000000001', '-1', '1,5', '01.5', '.5', '5.', '21000000000']) {
      expect(() => buildBip21({ address: ADDRESS, amountBtc })).toThrow()
    }
    expect(() => buildBip21({ address: 'bc1q?x=1', amountBtc: '1' })).toThrow()
  })
})

describe('satsToBtcText', () => {
  it.each([
    [0n, '0'],
    [1n, '0.00000001'],
    [12_000n, '0.00012'],
    [100_000_000n, '1'],
    [2_030_000_000n, '20.3'],
    [2_100_000_000_000_000n, '21000000'],
  ])('%s sats is %s BTC', (sats, text) => {
    expect(satsToBtcText(sats)).toBe(text)
  })
})
