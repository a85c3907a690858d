import { sha512 } from '@noble/hashes/sha2.js'
import { pbkdf2 } from '@noble/hashes/pbkdf2.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { createBase58check } from '@scure/base'
import { HDKey } from '@scure/bip32'
import * as bitcoin from 'bitcoinjs-lib'
import { describe, expect, it } from 'vitest'
import { NETWORKS, type Network } from '../config/network.js'
import { validateAddress } from '../onchain/address.js'
import { deriveAccountXpub, deriveReceiveAddress, newMasterKey } from './bip84.js'

// The BIP84 test vectors (bitcoin/bips bip-0084.mediawiki).
const MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'
const ROOT_ZPRV =
  'zprvAWgYBBk7JR8Gjrh4UJQ2uJdG1r3WNRRfURiABBE3RvMXYSrRJL62XuezvGdPvG6GFBZduosCc1YP5wixPox7zhZLfiUm8aunE96BBa4Kei5'
const ACCOUNT_ZPRV =
  'zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE'
const FIRST_RECEIVE = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu'
const SECOND_RECEIVE = 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g'

const ZPRV_ZPUB = { private: 0x04b2430c, public: 0x04b24746 }
const base58check = createBase58check(sha256)

/** Re-spells an extended key with another 4-byte version, e.g. zprv as xprv. */
function withVersion(key: string, version: number): string {
  const bytes = base58check.decode(key)
  return base58check.encode(
    Uint8Array.of(
      version >>> 24,
      (version >>> 16) & 0xff,
      (version >>> 8) & 0xff,
      version & 0xff,
      ...bytes.subarray(4),
    ),
  )
}

const BITCOINJS: Record<Network, bitcoin.networks.Network> = {
  mainnet: bitcoin.networks.bitcoin,
  testnet: bitcoin.networks.testnet,
  signet: bitcoin.networks.testnet,
  regtest: bitcoin.networks.regtest,
}

describe('BIP84 specification vectors', () => {
  // BIP39 seed = PBKDF2-HMAC-SHA512(mnemonic, "mnemonic" + passphrase, 2048 rounds, 64 bytes).
  const seed = pbkdf2(sha512, MNEMONIC, 'mnemonic', { c: 2048, dkLen: 64 })
  const root = HDKey.fromMasterSeed(seed, ZPRV_ZPUB)
  const rootXprv = withVersion(ROOT_ZPRV, 0x0488ade4)

  it('the mnemonic gives the root key of the vector', () => {
    expect(root.privateExtendedKey).toBe(ROOT_ZPRV)
    expect(root.derive("m/84'/0'/0'").privateExtendedKey).toBe(ACCOUNT_ZPRV)
  })

  it('derives the receive addresses from the master key, as xprv or zprv', () => {
    expect(deriveReceiveAddress(rootXprv, 0, 'mainnet')).toBe(FIRST_RECEIVE)
    expect(deriveReceiveAddress(rootXprv, 1, 'mainnet')).toBe(SECOND_RECEIVE)
    expect(deriveReceiveAddress(ROOT_ZPRV, 0, 'mainnet')).toBe(FIRST_RECEIVE)
  })

  it('derives the same addresses from the account public key, as xpub or zpub', () => {
    const accountXpub = deriveAccountXpub(rootXprv, 'mainnet')
    expect(accountXpub.startsWith('xpub')).toBe(true)
    const accountZpub = HDKey.fromExtendedKey(ACCOUNT_ZPRV, ZPRV_ZPUB).publicExtendedKey
    expect(withVersion(accountXpub, ZPRV_ZPUB.public)).toBe(accountZpub)
    expect(deriveReceiveAddress(accountXpub, 0, 'mainnet')).toBe(FIRST_RECEIVE)
    expect(deriveReceiveAddress(accountZpub, 1, 'mainnet')).toBe(SECOND_RECEIVE)
  })

  it('uses coin type 1 on the test networks', () => {
    const tprv = withVersion(ROOT_ZPRV, 0x04358394)
    const expected = HDKey.fromMasterSeed(seed).derive("m/84'/1'/0'/0/0").publicKey!
    const hash = bitcoin.crypto.hash160(expected)
    for (const network of ['testnet', 'signet', 'regtest'] as const) {
      expect(deriveReceiveAddress(tprv, 0, network)).toBe(
        bitcoin.address.toBech32(hash, 0, BITCOINJS[network].bech32),
      )
    }
  })
})

describe('deriveReceiveAddress on every network', () => {
  it.each(NETWORKS)(
    'gives valid, distinct P2WPKH addresses on %s, the same from the master key and the account key',
    (network) => {
      const master = newMasterKey(network)
      expect(master.slice(0, 4)).toBe(network === 'mainnet' ? 'xprv' : 'tprv')
      const account = deriveAccountXpub(master, network)
      expect(account.slice(0, 4)).toBe(network === 'mainnet' ? 'xpub' : 'tpub')
      const addresses = new Set<string>()
      for (const index of [0, 1, 2, 19, 1000, 2 ** 31 - 1]) {
        const address = deriveReceiveAddress(master, index, network)
        expect(deriveReceiveAddress(account, index, network)).toBe(address)
        const script = bitcoin.address.toOutputScript(address, BITCOINJS[network])
        expect(validateAddress(address, network)).toEqual({
          ok: true,
          type: 'p2wpkh',
          script: Uint8Array.from(script),
          address,
        })
        addresses.add(address)
      }
      expect(addresses.size).toBe(6)
    },
  )

  it('makes a new random master key each time', () => {
    expect(newMasterKey('mainnet')).not.toBe(newMasterKey('mainnet'))
  })
})

describe('deriveReceiveAddress refuses keys it cannot use', () => {
  const rootXprv = withVersion(ROOT_ZPRV, 0x0488ade4)

  it('a key of the other network family', () => {
    expect(() => deriveReceiveAddress(rootXprv, 0, 'testnet')).toThrow(/mainnet/)
    expect(() => deriveReceiveAddress(newMasterKey('regtest'), 0, 'mainnet')).toThrow(/test network/)
  })

  it('a private key that is not the master, or a public key that is not the account', () => {
    const accountXprv = withVersion(ACCOUNT_ZPRV, 0x0488ade4)
    expect(() => deriveReceiveAddress(accountXprv, 0, 'mainnet')).toThrow(/depth 0/)
    const masterXpub = HDKey.fromExtendedKey(rootXprv).publicExtendedKey
    expect(() => deriveReceiveAddress(masterXpub, 0, 'mainnet')).toThrow(/depth 3/)
  })

  it('garbage, an unknown version and a bad index', () => {
    expect(() => deriveReceiveAddress('xpub-not-a-key', 0, 'mainnet')).toThrow(/base58check/)
    expect(() => deriveReceiveAddress(withVersion(ROOT_ZPRV, 0x01020304), 0, 'mainnet')).toThrow(/version/)
    expect(() => deriveReceiveAddress(rootXprv, -1, 'mainnet')).toThrow(RangeError)
    expect(() => deriveReceiveAddress(rootXprv, 2 ** 31, 'mainnet')).toThrow(RangeError)
    expect(() => deriveReceiveAddress(rootXprv, 1.5, 'mainnet')).toThrow(RangeError)
  })
})
