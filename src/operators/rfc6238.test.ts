import { describe, expect, it } from 'vitest'
import { base32, fromBase32, hotp, matchTotp, totp, totpStep } from './totp.js'

// RFC 6238 appendix B: the seeds are the ASCII digits "1234567890" repeated to the hash's size.
const SEED_SHA1 = Buffer.from('12345678901234567890')
const SEED_SHA256 = Buffer.from('12345678901234567890123456789012')
const SEED_SHA512 = Buffer.from('1234567890123456789012345678901234567890123456789012345678901234')

const VECTORS: Array<[number, string, string, string]> = [
  // [time in seconds, SHA1, SHA256, SHA512], 8 digits
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
]

describe('RFC 6238 appendix B', () => {
  for (const [t, sha1, sha256, sha512] of VECTORS) {
    it(`T = ${t}`, () => {
      expect(totp(SEED_SHA1, t * 1000, 8, 'sha1')).toBe(sha1)
      expect(totp(SEED_SHA256, t * 1000, 8, 'sha256')).toBe(sha256)
      expect(totp(SEED_SHA512, t * 1000, 8, 'sha512')).toBe(sha512)
    })
  }
  it('counts steps of 30 s from the epoch', () => {
    expect(totpStep(59_000)).toBe(1n)
    expect(totpStep(1111111109_000)).toBe(0x23523ecn)
    expect(totpStep(20000000000_000)).toBe(0x27bc86aan)
  })
})

describe('RFC 4226 appendix D (HOTP)', () => {
  it('gives the published six-digit values', () => {
    const expected = [
      '755224',
      '287082',
      '359152',
      '969429',
      '338314',
      '254676',
      '287922',
      '162583',
      '399871',
      '520489',
    ]
    expected.forEach((code, i) => expect(hotp(SEED_SHA1, BigInt(i))).toBe(code))
  })
})

describe('the accepted window', () => {
  const now = 1_700_000_000_000
  it('accepts the previous, current and next step and nothing further', () => {
    const step = totpStep(now)
    for (const d of [-1n, 0n, 1n]) expect(matchTotp(SEED_SHA1, hotp(SEED_SHA1, step + d), now)).toBe(step + d)
    for (const d of [-3n, -2n, 2n, 3n])
      expect(matchTotp(SEED_SHA1, hotp(SEED_SHA1, step + d), now)).toBeUndefined()
  })
  it('refuses what is not six digits', () => {
    for (const code of ['', '12345', '1234567', 'abcdef', ' 123456'])
      expect(matchTotp(SEED_SHA1, code, now)).toBeUndefined()
  })
})

describe('base32 (RFC 4648 section 10)', () => {
  it('encodes the standard vectors without padding, and back', () => {
    const vectors: Array<[string, string]> = [
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ]
    for (const [plain, encoded] of vectors) {
      expect(base32(Buffer.from(plain))).toBe(encoded)
      expect(fromBase32(encoded).toString()).toBe(plain)
    }
  })
})
