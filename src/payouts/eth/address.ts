/**
 * Ethereum addresses as a payout names them: `0x` and 40 hex digits (20 bytes). Written all in
 * lower or all in upper case the digits carry no checksum and are accepted as they are; written in
 * mixed case they must be the EIP-55 checksum form (https://eips.ethereum.org/EIPS/eip-55): a
 * letter is upper case exactly when the matching nibble of keccak-256 over the lower-case hex text
 * is 8 or more. A mixed-case address that fails the checksum is a typo, and is refused.
 */
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

/** Longer text than this is refused before it is looked at (0x + 40 digits, with some slack). */
const ADDRESS_CHARS_MAX = 64

export type EthAddressCheck =
  /** `checksummed` is the EIP-55 form of the address, the one the service stores and shows. */
  { ok: true; checksummed: string } | { ok: false; issue: string }

/** Checks `text` as an Ethereum address. Never throws. */
export function validateEthAddress(text: string): EthAddressCheck {
  if (text.length === 0) return { ok: false, issue: 'address is empty' }
  if (text.length > ADDRESS_CHARS_MAX) return { ok: false, issue: 'address is too long' }
  if (!text.startsWith('0x')) return { ok: false, issue: 'an Ethereum address starts with 0x' }
  const digits = text.slice(2)
  if (!/^[0-9a-fA-F]*$/.test(digits)) return { ok: false, issue: 'invalid hex digit' }
  if (digits.length !== 40) return { ok: false, issue: 'an Ethereum address holds 40 hex digits (20 bytes)' }
  const checksummed = toChecksumAddress(digits)
  const mixed = digits !== digits.toLowerCase() && digits !== digits.toUpperCase()
  if (mixed && checksummed !== text) return { ok: false, issue: 'bad EIP-55 checksum (mixed case)' }
  return { ok: true, checksummed }
}

/** The EIP-55 form of 40 hex digits (any case, without 0x). */
export function toChecksumAddress(hex40: string): string {
  const lower = hex40.toLowerCase()
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)))
  let out = '0x'
  for (let i = 0; i < lower.length; i++) {
    const c = lower[i]!
    out += c >= 'a' && parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c
  }
  return out
}
