import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { createBase58check } from '@scure/base'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { tronAddressFromPrivateKey, tronAddressFromPublicKey, validateTronAddress } from './address.js'

const base58check = createBase58check(sha256)

// The witness key of TRON's documented private-network setup (tronprotocol docs, "TronDeployment")
// and its address, as published there in base58 and hex.
const DOCS_PRIVATE_KEY = 'da146374a75310b9666e834ee4ad0866d6f4035967bfc76217c5a495fff9f0d0'
const DOCS_ADDRESS = 'TPL66VK2gCXNCD7EJg9pgJRfqcRazjhUZY'
const DOCS_ADDRESS_HEX = '41928c9af0651632157ef27a2cf17ca72c575a4d21'
// The USDT (TRC-20) contract on TRON mainnet, widely published in both forms.
const USDT_CONTRACT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const USDT_CONTRACT_HEX = '41a614f803b6fd780986a42c78ec9c7f77e6ded13c'

describe('TRON addresses from keys', () => {
  it('derives the documented address from the documented private key', () => {
    expect(tronAddressFromPrivateKey(hexToBytes(DOCS_PRIVATE_KEY))).toBe(DOCS_ADDRESS)
    const publicKey = secp256k1.getPublicKey(hexToBytes(DOCS_PRIVATE_KEY), false)
    expect(tronAddressFromPublicKey(publicKey)).toBe(DOCS_ADDRESS)
  })

  it('refuses a compressed public key', () => {
    const compressed = secp256k1.getPublicKey(hexToBytes(DOCS_PRIVATE_KEY), true)
    expect(() => tronAddressFromPublicKey(compressed)).toThrow()
  })

  it('every derived address validates and round-trips through its hex form', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }).filter((k) => secp256k1.utils.isValidSecretKey(k)),
        (key) => {
          const address = tronAddressFromPrivateKey(key)
          expect(address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/)
          const check = validateTronAddress(address)
          expect(check.ok).toBe(true)
          const { hex } = check as { hex: string }
          expect(base58check.encode(hexToBytes(hex))).toBe(address)
        },
      ),
      { numRuns: 50 },
    )
  })
})

describe('validateTronAddress', () => {
  it('accepts known addresses and gives their hex form', () => {
    expect(validateTronAddress(DOCS_ADDRESS)).toEqual({ ok: true, hex: DOCS_ADDRESS_HEX })
    expect(validateTronAddress(USDT_CONTRACT)).toEqual({ ok: true, hex: USDT_CONTRACT_HEX })
  })

  it('refuses a bad checksum', () => {
    const changed = DOCS_ADDRESS.slice(0, -1) + (DOCS_ADDRESS.endsWith('Y') ? 'Z' : 'Y')
    expect(validateTronAddress(changed)).toEqual({ ok: false, issue: 'bad checksum' })
  })

  it('refuses a wrong version byte', () => {
    const payload = hexToBytes(DOCS_ADDRESS_HEX)
    payload[0] = 0x42
    const check = validateTronAddress(base58check.encode(payload))
    expect(check.ok).toBe(false)
    expect((check as { issue: string }).issue).toContain('wrong version byte')
    // A Bitcoin P2PKH address is base58check of 21 bytes too, with version 0x00.
    expect((validateTronAddress('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2') as { issue: string }).issue).toContain(
      'wrong version byte',
    )
  })

  it('refuses wrong lengths, bad characters, and empty or overlong input', () => {
    expect(validateTronAddress(base58check.encode(hexToBytes(DOCS_ADDRESS_HEX + '00')))).toEqual({
      ok: false,
      issue: 'a TRON address holds 21 bytes',
    })
    expect(validateTronAddress('TPL66VK2gCXNCD7EJg9pgJRfqcRazjhUZ0').ok).toBe(false)
    expect(validateTronAddress('0x928c9af0651632157ef27a2cf17ca72c575a4d21').ok).toBe(false)
    expect(validateTronAddress('')).toEqual({ ok: false, issue: 'address is empty' })
    expect(validateTronAddress('T'.repeat(41))).toEqual({ ok: false, issue: 'address is too long' })
    expect(validateTronAddress('T1')).toEqual({ ok: false, issue: 'address is too short' })
  })
})
