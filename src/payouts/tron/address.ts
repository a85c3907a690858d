/**
 * TRON addresses: base58check of 21 bytes, the version byte 0x41 followed by the last 20 bytes of
 * keccak256 over the 64-byte uncompressed public key (without its 0x04 prefix). Version 0x41 is why
 * every address starts with `T`.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { base58, createBase58check } from '@scure/base'
import { assert } from '../../shared/assert.js'

export const TRON_ADDRESS_VERSION = 0x41
const BASE58_CHARSET = /^[1-9A-HJ-NP-Za-km-z]+$/
/** A 21-byte payload with its 4-byte checksum is 34 base58 characters; allow a little slack before refusing. */
const ADDRESS_CHARS_MAX = 40
const base58check = createBase58check(sha256)

export type TronAddressCheck = { ok: true; hex: string } | { ok: false; issue: string }

/**
 * Checks `text` as a TRON address. On success `hex` is the 21-byte form TRON's APIs use
 * (`41` + 20 bytes, lower case). Never throws.
 */
export function validateTronAddress(text: string): TronAddressCheck {
  if (text.length === 0) return { ok: false, issue: 'address is empty' }
  if (text.length > ADDRESS_CHARS_MAX) return { ok: false, issue: 'address is too long' }
  if (!BASE58_CHARSET.test(text)) return { ok: false, issue: 'invalid base58 character' }
  let payload: Uint8Array
  try {
    payload = base58check.decode(text)
  } catch {
    return { ok: false, issue: base58.decode(text).length > 4 ? 'bad checksum' : 'address is too short' }
  }
  if (payload.length !== 21) return { ok: false, issue: 'a TRON address holds 21 bytes' }
  if (payload[0] !== TRON_ADDRESS_VERSION)
    return { ok: false, issue: 'wrong version byte (TRON addresses start with T, 0x41)' }
  assert(text.startsWith('T'), 'a 0x41-version base58check address always starts with T')
  return { ok: true, hex: bytesToHex(payload) }
}

/** The address of a 65-byte uncompressed secp256k1 public key (0x04 || x || y). */
export function tronAddressFromPublicKey(uncompressedPubKey65: Uint8Array): string {
  assert(
    uncompressedPubKey65.length === 65 && uncompressedPubKey65[0] === 0x04,
    'expected a 65-byte uncompressed public key',
  )
  const hash = keccak_256(uncompressedPubKey65.subarray(1))
  return base58check.encode(Uint8Array.of(TRON_ADDRESS_VERSION, ...hash.subarray(12)))
}

/** The address of a 32-byte secp256k1 private key. */
export function tronAddressFromPrivateKey(privateKey: Uint8Array): string {
  return tronAddressFromPublicKey(secp256k1.getPublicKey(privateKey, false))
}
