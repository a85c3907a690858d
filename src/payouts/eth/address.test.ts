import { describe, expect, it } from 'vitest'
import { toChecksumAddress, validateEthAddress } from './address.js'

/** EIP-55's own test vectors (https://eips.ethereum.org/EIPS/eip-55, "Test Cases"). */
const ALL_CAPS = ['0x52908400098527886E0F7030069857D2E4169EE7', '0x8617E340B3D01FA5F11F306F4090FD50E238070D']
const ALL_LOWER = ['0xde709f2102306220921060314715629080e2fb77', '0x27b1fdb04752bbc536007a920d24acb045561c26']
const NORMAL = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
]

describe('Ethereum addresses (EIP-55)', () => {
  it('gives each published vector its own checksum form', () => {
    for (const address of [...ALL_CAPS, ...ALL_LOWER, ...NORMAL])
      expect(toChecksumAddress(address.slice(2))).toBe(address)
  })

  it('accepts the published vectors and the all-lower and all-upper forms of every one', () => {
    for (const address of NORMAL) {
      expect(validateEthAddress(address)).toEqual({ ok: true, checksummed: address })
      const digits = address.slice(2)
      expect(validateEthAddress('0x' + digits.toLowerCase())).toEqual({ ok: true, checksummed: address })
      expect(validateEthAddress('0x' + digits.toUpperCase())).toEqual({ ok: true, checksummed: address })
    }
    for (const address of [...ALL_CAPS, ...ALL_LOWER]) expect(validateEthAddress(address).ok).toBe(true)
  })

  it('refuses a mixed-case address whose checksum fails: one letter of a vector in the wrong case', () => {
    for (const address of NORMAL) {
      const i = [...address].findIndex((c, k) => k > 1 && /[a-f]/i.test(c))
      const c = address[i]!
      const flipped =
        address.slice(0, i) +
        (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) +
        address.slice(i + 1)
      expect(validateEthAddress(flipped)).toEqual({ ok: false, issue: 'bad EIP-55 checksum (mixed case)' })
    }
  })

  it('refuses anything that is not 0x and 40 hex digits', () => {
    const good = NORMAL[0]!.slice(2)
    for (const text of [
      '',
      good,
      '0X' + good,
      '0x' + good.slice(1),
      '0x' + good + '0',
      '0x' + good.slice(0, 39) + 'g',
      ' 0x' + good,
      '0x' + 'a'.repeat(100),
      'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    ])
      expect(validateEthAddress(text).ok, text).toBe(false)
  })
})
