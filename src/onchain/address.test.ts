import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { createBase58check } from '@scure/base'
import * as bitcoin from 'bitcoinjs-lib'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { NETWORKS, type Network } from '../config/network.js'
import { validateAddress, type AddressType } from './address.js'

// Vectors copied from the "Test vectors" sections of bitcoin/bips bip-0173.mediawiki and
// bip-0350.mediawiki. The network is the one the address's prefix names (tb: testnet).

/** BIP173 and BIP350 "valid segwit address" vectors we accept: address, network, type, scriptPubKey. */
const VALID_SEGWIT: [string, Network, AddressType, string][] = [
  [
    'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4',
    'mainnet',
    'p2wpkh',
    '0014751e76e8199196d454941c45d1b3a323f1433bd6',
  ],
  [
    'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7',
    'testnet',
    'p2wsh',
    '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262',
  ],
  [
    'tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy',
    'testnet',
    'p2wsh',
    '0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433',
  ],
  [
    'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c',
    'testnet',
    'p2tr',
    '5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433',
  ],
  [
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0',
    'mainnet',
    'p2tr',
    '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798',
  ],
]

/** BIP350 valid addresses for witness versions or lengths we do not send to: refused, not misread. */
const VALID_BUT_UNSUPPORTED: [string, string][] = [
  [
    'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y',
    '5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6',
  ],
  ['BC1SW50QGDZ25J', '6002751e'],
  ['bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', '5210751e76e8199196d454941c45d1b3a323'],
]

/** BIP173 valid v1+ addresses: BIP350 made their bech32 checksum invalid. */
const BIP173_SUPERSEDED: string[] = [
  'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx',
  'BC1SW50QA3JX3S',
  'bc1zw508d6qejxtdg4y5r3zarvaryvg6kdaj',
]

/** BIP173 and BIP350 invalid vectors: address, its reason in the BIP, the issue we report. */
const INVALID_SEGWIT: [string, string, string][] = [
  ['tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty', 'Invalid human-readable part', 'unknown address prefix'],
  ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', 'Invalid checksum', 'bad checksum'],
  ['BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2', 'Invalid witness version', 'invalid witness version'],
  ['bc1rw5uspcuh', 'Invalid program length', 'invalid witness program length'],
  [
    'bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90',
    'Invalid program length',
    'invalid witness program length',
  ],
  [
    'BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P',
    'Invalid program length for witness version 0 (per BIP141)',
    'witness v0 program must be 20 or 32 bytes',
  ],
  ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7', 'Mixed case', 'mixed case'],
  ['bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du', 'zero padding of more than 4 bits', 'invalid padding'],
  [
    'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv',
    'Non-zero padding in 8-to-5 conversion',
    'invalid padding',
  ],
  ['bc1gmk9yu', 'Empty data section', 'empty data section'],
  [
    'tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut',
    'Invalid human-readable part',
    'unknown address prefix',
  ],
  [
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd',
    'Invalid checksum (Bech32 instead of Bech32m)',
    'must use a bech32m checksum',
  ],
  [
    'tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf',
    'Invalid checksum (Bech32 instead of Bech32m)',
    'must use a bech32m checksum',
  ],
  [
    'BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL',
    'Invalid checksum (Bech32 instead of Bech32m)',
    'must use a bech32m checksum',
  ],
  [
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh',
    'Invalid checksum (Bech32m instead of Bech32)',
    'must use a bech32 checksum',
  ],
  [
    'tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47',
    'Invalid checksum (Bech32m instead of Bech32)',
    'must use a bech32 checksum',
  ],
  [
    'bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4',
    'Invalid character in checksum',
    'invalid character',
  ],
  [
    'BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R',
    'Invalid witness version',
    'invalid witness version',
  ],
  ['bc1pw5dgrnzv', 'Invalid program length (1 byte)', 'invalid witness program length'],
  [
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav',
    'Invalid program length (41 bytes)',
    'invalid witness program length',
  ],
  [
    'BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P',
    'Invalid program length for witness version 0 (per BIP141)',
    'witness v0 program must be 20 or 32 bytes',
  ],
  ['tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq', 'Mixed case', 'mixed case'],
  [
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf',
    'zero padding of more than 4 bits',
    'invalid padding',
  ],
  [
    'tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j',
    'Non-zero padding in 8-to-5 conversion',
    'invalid padding',
  ],
  ['bc1gmk9yu', 'Empty data section', 'empty data section'],
]

/** bitcoinjs-lib's network objects by our names (signet shares testnet's prefixes). */
const BITCOINJS: Record<Network, bitcoin.networks.Network> = {
  mainnet: bitcoin.networks.bitcoin,
  testnet: bitcoin.networks.testnet,
  signet: bitcoin.networks.testnet,
  regtest: bitcoin.networks.regtest,
}

/**
 * bitcoinjs-lib checks taproot keys through a pluggable curve library; this adapter gives it noble's,
 * so the cross-check below covers P2TR too. initEccLib runs its own test vectors against it.
 */
const nobleEcc = {
  isXOnlyPoint(p: Uint8Array): boolean {
    try {
      schnorr.utils.lift_x(BigInt('0x' + bytesToHex(p)))
      return p.length === 32
    } catch {
      return false
    }
  },
  xOnlyPointAddTweak(p: Uint8Array, tweak: Uint8Array): { parity: 0 | 1; xOnlyPubkey: Uint8Array } | null {
    const t = BigInt('0x' + bytesToHex(tweak))
    if (t >= secp256k1.Point.CURVE().n) return null
    const point = schnorr.utils.lift_x(BigInt('0x' + bytesToHex(p)))
    const tweaked = t === 0n ? point : point.add(secp256k1.Point.BASE.multiply(t))
    if (tweaked.is0()) return null
    const { x, y } = tweaked.toAffine()
    return { parity: Number(y & 1n) as 0 | 1, xOnlyPubkey: hexToBytes(x.toString(16).padStart(64, '0')) }
  },
}

function bitcoinjsScript(address: string, network: Network): string | null {
  try {
    return bytesToHex(bitcoin.address.toOutputScript(address, BITCOINJS[network]))
  } catch {
    return null
  }
}

function script(address: string, network: Network): string {
  const result = validateAddress(address, network)
  if (!result.ok) throw new Error(`expected ${address} to be valid on ${network}: ${result.issue}`)
  return bytesToHex(result.script)
}

function issue(address: string, network: Network): string {
  const result = validateAddress(address, network)
  if (result.ok) throw new Error(`expected ${address} to be refused on ${network}`)
  return result.issue
}

function networkOf(address: string): Network {
  return address.toLowerCase().startsWith('tb') ? 'testnet' : 'mainnet'
}

beforeAll(() => {
  bitcoin.initEccLib(nobleEcc)
})

describe('validateAddress: BIP173 / BIP350 vectors', () => {
  it.each(VALID_SEGWIT)('accepts %s on %s as %s', (address, network, type, scriptHex) => {
    // The stored spelling is lower case, whichever case the vector uses (BIP173 allows all-upper).
    expect(validateAddress(address, network)).toEqual({
      ok: true,
      type,
      script: hexToBytes(scriptHex),
      address: address.toLowerCase(),
    })
    expect(bitcoinjsScript(address, network)).toBe(scriptHex)
  })

  it('accepts tb1 addresses on signet as on testnet', () => {
    for (const [address, network, , scriptHex] of VALID_SEGWIT) {
      if (network === 'testnet') expect(script(address, 'signet')).toBe(scriptHex)
    }
  })

  it.each(VALID_BUT_UNSUPPORTED)('refuses %s, valid but not a type we send to', (address) => {
    expect(issue(address, 'mainnet')).toContain('unsupported witness version')
  })

  it.each(BIP173_SUPERSEDED)('refuses %s, whose bech32 checksum BIP350 superseded', (address) => {
    expect(issue(address, 'mainnet')).toContain('must use a bech32m checksum')
  })

  it.each(INVALID_SEGWIT)('refuses %s (%s)', (address, _reason, expected) => {
    expect(issue(address, networkOf(address))).toContain(expected)
    expect(bitcoinjsScript(address, networkOf(address))).toBeNull()
  })
})

describe('validateAddress: base58check P2PKH and P2SH', () => {
  // Addresses from the Bitcoin wiki and the BOLT11 examples' fallback addresses.
  it.each([
    [
      '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
      'mainnet',
      'p2pkh',
      '76a91477bff20c60e522dfaa3350c39b030a5d004e839a88ac',
    ],
    [
      '1RustyRX2oai4EYYDpQGWvEL62BBGqN9T',
      'mainnet',
      'p2pkh',
      '76a91404b61f7dc1ea0dc99424464cc4064dc564d91e8988ac',
    ],
    [
      '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy',
      'mainnet',
      'p2sh',
      'a914b472a266d0bd89c13706a4132ccfb16f7c3b9fcb87',
    ],
    [
      '3EktnHQD7RiAE6uzMj2ZifT9YgRrkSgzQX',
      'mainnet',
      'p2sh',
      'a9148f55563b9a19f321c211e9b9f38cdf686ea0784587',
    ],
    [
      'mk2QpYatsKicvFVuTAQLBryyccRXMUaGHP',
      'testnet',
      'p2pkh',
      '76a9143172b5654f6683c8fb146959d347ce303cae4ca788ac',
    ],
  ] as const)('accepts %s on %s as %s', (address, network, type, scriptHex) => {
    // Base58's case is part of the encoding: the address is stored exactly as given.
    expect(validateAddress(address, network)).toEqual({
      ok: true,
      type,
      script: hexToBytes(scriptHex),
      address,
    })
    expect(validateAddress(address.toUpperCase(), network).ok).toBe(false)
    expect(validateAddress(address.toLowerCase(), network).ok).toBe(false)
    expect(bitcoinjsScript(address, network)).toBe(scriptHex)
  })

  it('refuses a base58 address from the other network', () => {
    expect(issue('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'testnet')).toContain('wrong network')
    expect(issue('3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'regtest')).toContain('wrong network')
    expect(issue('mk2QpYatsKicvFVuTAQLBryyccRXMUaGHP', 'mainnet')).toContain('wrong network')
  })

  it('refuses a bad checksum, bad characters and a wrong length', () => {
    expect(issue('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3', 'mainnet')).toBe('bad checksum')
    expect(issue('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN0', 'mainnet')).toContain('invalid characters')
    const base58check = createBase58check(sha256)
    expect(issue(base58check.encode(new Uint8Array(22)), 'mainnet')).toBe('invalid address length')
    expect(issue(base58check.encode(Uint8Array.of(0x30, ...new Uint8Array(20))), 'mainnet')).toBe(
      'unknown address version',
    )
  })
})

describe('validateAddress: networks and formats', () => {
  it('refuses a segwit address from another network, naming it', () => {
    expect(issue('BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', 'testnet')).toContain('for mainnet')
    expect(issue('tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', 'mainnet')).toContain(
      'wrong network',
    )
    expect(issue('tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', 'regtest')).toContain(
      'wrong network',
    )
  })

  it('refuses empty and overlong input', () => {
    expect(issue('', 'mainnet')).toBe('address is empty')
    expect(issue('bc1q' + 'q'.repeat(100), 'mainnet')).toBe('address is too long')
  })

  const hash20 = fc.uint8Array({ minLength: 20, maxLength: 20 })
  const hash32 = fc.uint8Array({ minLength: 32, maxLength: 32 })
  const taprootKey = fc
    .uint8Array({ minLength: 32, maxLength: 32 })
    .filter((k) => secp256k1.utils.isValidSecretKey(k))
    .map((k) => schnorr.getPublicKey(k))
  const cases = fc.oneof(
    fc.record({ type: fc.constant('p2wpkh' as const), data: hash20 }),
    fc.record({ type: fc.constant('p2wsh' as const), data: hash32 }),
    fc.record({ type: fc.constant('p2tr' as const), data: taprootKey }),
    fc.record({ type: fc.constant('p2pkh' as const), data: hash20 }),
    fc.record({ type: fc.constant('p2sh' as const), data: hash20 }),
  )

  /** Builds the address with bitcoinjs-lib, independently of the module under test. */
  function bitcoinjsAddress(type: AddressType, data: Uint8Array, network: Network): string {
    const net = BITCOINJS[network]
    switch (type) {
      case 'p2wpkh':
      case 'p2wsh':
        return bitcoin.address.toBech32(data, 0, net.bech32)
      case 'p2tr':
        return bitcoin.address.toBech32(data, 1, net.bech32)
      case 'p2pkh':
        return bitcoin.address.toBase58Check(data, net.pubKeyHash)
      case 'p2sh':
        return bitcoin.address.toBase58Check(data, net.scriptHash)
    }
  }

  it('agrees with bitcoinjs-lib on every address type and network', () => {
    fc.assert(
      fc.property(cases, fc.constantFrom(...NETWORKS), ({ type, data }, network) => {
        const address = bitcoinjsAddress(type, data, network)
        const result = validateAddress(address, network)
        expect(result).toMatchObject({ ok: true, type })
        expect(bytesToHex((result as { script: Uint8Array }).script)).toBe(bitcoinjsScript(address, network))
        // The same address is refused on every network with other prefixes or version bytes.
        for (const other of NETWORKS) {
          const sameParams = bitcoinjsAddress(type, data, other) === address
          expect(validateAddress(address, other).ok).toBe(sameParams)
        }
      }),
      { numRuns: 200 },
    )
  })

  it('refuses any single-character change to a valid address', () => {
    const address = 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0'
    const alphabet = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
    for (let at = 3; at < address.length; at++) {
      for (const c of alphabet) {
        if (c === address[at]) continue
        expect(validateAddress(address.slice(0, at) + c + address.slice(at + 1), 'mainnet').ok).toBe(false)
      }
    }
  })
})
