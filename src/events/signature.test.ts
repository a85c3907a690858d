import { createHmac } from 'node:crypto'

import { describe, expect, it } from 'vitest'

import { signBody, verifySignature } from './signature.js'

describe('signBody', () => {
  it('matches RFC 4231 test case 2 (HMAC-SHA256, key "Jefe")', () => {
    expect(signBody('what do ya want for nothing?', 'Jefe')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })

  it('is lowercase hex HMAC-SHA256 of the raw bytes, as node:crypto computes it independently', () => {
    const body = Buffer.from('{"txnId":"t_1","extRefId":"","txnState":"completed","msg":"","updatedAt":1}')
    const secret = 'whsec_0123456789abcdef'
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')
    expect(signBody(body, secret)).toBe(expected)
    expect(signBody(body, secret)).toMatch(/^[0-9a-f]{64}$/)
  })

  it('signs a string as its UTF-8 bytes', () => {
    const text = '{"msg":"Thanh toán thành công ✓"}'
    expect(signBody(text, 'secret-secret-16')).toBe(signBody(Buffer.from(text, 'utf8'), 'secret-secret-16'))
  })
})

describe('verifySignature', () => {
  const secret = 'a-webhook-secret-of-some-length'
  const body = Buffer.from('{"txnId":"abc","txnState":"completed","updatedAt":1700000000000}')
  const signature = createHmac('sha256', secret).update(body).digest('hex')

  it('accepts the signature of the exact body', () => {
    expect(verifySignature(body, secret, signature)).toBe(true)
  })

  it('accepts upper-case hex of the same digest', () => {
    expect(verifySignature(body, secret, signature.toUpperCase())).toBe(true)
  })

  it('rejects a body changed by one byte', () => {
    const tampered = Buffer.from(body)
    tampered[tampered.length - 2] = (tampered[tampered.length - 2] ?? 0) ^ 0x01
    expect(verifySignature(tampered, secret, signature)).toBe(false)
  })

  it('rejects the same JSON re-serialised with different whitespace', () => {
    const reserialised = JSON.stringify(JSON.parse(body.toString()), null, 1)
    expect(verifySignature(reserialised, secret, signature)).toBe(false)
  })

  it('rejects a different secret', () => {
    expect(verifySignature(body, `${secret}x`, signature)).toBe(false)
  })

  it('rejects a signature with one hex digit changed', () => {
    const last = signature.at(-1) === '0' ? '1' : '0'
    expect(verifySignature(body, secret, `${signature.slice(0, -1)}${last}`)).toBe(false)
  })

  it.each([
    ['empty', ''],
    ['truncated', signature.slice(0, 63)],
    ['one digit too many', `${signature}0`],
    ['half length', signature.slice(0, 32)],
    ['non-hex of the right length', 'z'.repeat(64)],
    ['hex with a prefix', `sha256=${signature}`.slice(0, 64)],
    ['base64 of the digest', createHmac('sha256', secret).update(body).digest('base64')],
  ])('returns false without throwing for a %s value', (_name, value) => {
    expect(() => verifySignature(body, secret, value)).not.toThrow()
    expect(verifySignature(body, secret, value)).toBe(false)
  })
})
