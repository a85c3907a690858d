/**
 * Bitcoin address validation for on-chain sends: Bech32 (BIP173, witness v0), Bech32m (BIP350,
 * taproot) and base58check P2SH / P2PKH, each checked against the network we run on. The result
 * carries the output script so callers never parse the address a second time.
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { base58, bech32, bech32m, createBase58check } from '@scure/base'
import type { Network } from '../config/network.js'
import { BECH32_HRPS } from '../shared/address-spelling.js'

/** The output types the spec accepts for on-chain sends (bc1q, bc1p, 3…, 1…). */
export type AddressType = 'p2wpkh' | 'p2wsh' | 'p2tr' | 'p2sh' | 'p2pkh'

/**
 * `address` is the one spelling the service stores and compares: bech32/bech32m in lower case (BIP173
 * allows an all-upper-case spelling, as QR codes use, for the same script), base58 exactly as given
 * (its case is part of the encoding).
 */
export type AddressCheck =
  { ok: true; type: AddressType; script: Uint8Array; address: string } | { ok: false; issue: string }

interface NetworkParams {
  hrp: string
  pubKeyHash: number
  scriptHash: number
}

export const ADDRESS_PARAMS: Record<Network, NetworkParams> = {
  mainnet: { hrp: 'bc', pubKeyHash: 0x00, scriptHash: 0x05 },
  testnet: { hrp: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4 },
  signet: { hrp: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4 },
  regtest: { hrp: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4 },
}

/** BIP173's length limit for segwit addresses; base58 addresses are shorter still. */
const ADDRESS_CHARS_MAX = 90
const BECH32_CHARSET = /^[qpzry9x8gf2tvdw0s3jn54khce6mua7l]*$/
const BASE58_CHARSET = /^[1-9A-HJ-NP-Za-km-z]+$/
const base58check = createBase58check(sha256)

const OP_0 = 0x00
const OP_1 = 0x51
const OP_DUP = 0x76
const OP_HASH160 = 0xa9
const OP_EQUAL = 0x87
const OP_EQUALVERIFY = 0x88
const OP_CHECKSIG = 0xac

/**
 * Checks `text` as a Bitcoin address for `network`. Never throws: every problem comes back as a short
 * issue a user can act on ("wrong network", "bad checksum", …).
 */
export function validateAddress(text: string, network: Network): AddressCheck {
  if (text.length === 0) return fail('address is empty')
  if (text.length > ADDRESS_CHARS_MAX) return fail('address is too long')
  const lower = text.toLowerCase()
  const separator = lower.lastIndexOf('1')
  if (separator > 0 && BECH32_HRPS.includes(lower.slice(0, separator))) return validateSegwit(text, network)
  // Anything else that parses as bech32 has a human-readable part we do not know.
  if (bech32.decodeUnsafe(lower) || bech32m.decodeUnsafe(lower)) return fail('unknown address prefix')
  return validateBase58(text, network)
}

function validateSegwit(text: string, network: Network): AddressCheck {
  if (text !== text.toLowerCase() && text !== text.toUpperCase())
    return fail('mixed case: a bech32 address is written all in lower case or all in upper case (BIP173)')
  const lower = text.toLowerCase()
  const separator = lower.lastIndexOf('1')
  const hrp = lower.slice(0, separator)
  if (!BECH32_CHARSET.test(lower.slice(separator + 1))) return fail('invalid character in address')

  // Decode under both checksums: which one matches decides whether the witness version is allowed.
  const asBech32 = bech32.decodeUnsafe(lower)
  const asBech32m = asBech32 ? undefined : bech32m.decodeUnsafe(lower)
  const decoded = asBech32 ?? asBech32m
  if (!decoded) return fail('bad checksum')

  const expected = ADDRESS_PARAMS[network].hrp
  if (hrp !== expected)
    return fail(`wrong network: this address is for ${networkOfHrp(hrp)}, expected ${expected}1…`)
  const [version, ...programWords] = decoded.words
  if (version === undefined) return fail('empty data section')
  if (version > 16) return fail('invalid witness version')
  const program = bech32.fromWordsUnsafe(programWords)
  if (!program) return fail('invalid padding')
  if (program.length < 2 || program.length > 40) return fail('invalid witness program length')

  if (version === 0) {
    if (!asBech32) return fail('witness v0 addresses must use a bech32 checksum, not bech32m (BIP350)')
    if (program.length === 20) return ok('p2wpkh', witnessScript(0, program), lower)
    if (program.length === 32) return ok('p2wsh', witnessScript(0, program), lower)
    return fail('witness v0 program must be 20 or 32 bytes')
  }
  if (!asBech32m) return fail(`witness v${version} addresses must use a bech32m checksum (BIP350)`)
  if (version === 1 && program.length === 32) return ok('p2tr', witnessScript(1, program), lower)
  // Valid but not spendable by us today: sending there would burn funds, so we refuse.
  return fail(`unsupported witness version ${version} with ${program.length}-byte program`)
}

function validateBase58(text: string, network: Network): AddressCheck {
  if (!BASE58_CHARSET.test(text)) return fail('not a Bitcoin address (invalid characters)')
  let payload: Uint8Array
  try {
    payload = base58check.decode(text)
  } catch {
    // The characters are base58, so the only remaining reason is the 4-byte checksum.
    return base58.decode(text).length >= 4 ? fail('bad checksum') : fail('address is too short')
  }
  if (payload.length !== 21) return fail('invalid address length')
  const version = payload[0]!
  const hash = payload.subarray(1)
  const params = ADDRESS_PARAMS[network]
  if (version === params.pubKeyHash)
    return ok('p2pkh', Uint8Array.of(OP_DUP, OP_HASH160, 20, ...hash, OP_EQUALVERIFY, OP_CHECKSIG), text)
  if (version === params.scriptHash) return ok('p2sh', Uint8Array.of(OP_HASH160, 20, ...hash, OP_EQUAL), text)
  const other = (Object.keys(ADDRESS_PARAMS) as Network[]).find(
    (n) => ADDRESS_PARAMS[n].pubKeyHash === version || ADDRESS_PARAMS[n].scriptHash === version,
  )
  return fail(
    other
      ? `wrong network: this address is for ${other === 'mainnet' ? 'mainnet' : 'a test network'}`
      : 'unknown address version',
  )
}

function networkOfHrp(hrp: string): string {
  return hrp === 'bc' ? 'mainnet' : hrp === 'bcrt' ? 'regtest' : 'testnet/signet'
}

function witnessScript(version: number, program: Uint8Array): Uint8Array {
  return Uint8Array.of(version === 0 ? OP_0 : OP_1 + version - 1, program.length, ...program)
}

function ok(type: AddressType, script: Uint8Array, address: string): AddressCheck {
  return { ok: true, type, script, address }
}

function fail(issue: string): AddressCheck {
  return { ok: false, issue }
}
