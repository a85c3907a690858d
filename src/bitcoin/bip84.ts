/**
 * BIP84 receive addresses: native segwit P2WPKH at m/84'/coin'/0'/0/index, coin 0 on mainnet and 1
 * on the test networks. https://github.com/bitcoin/bips/blob/master/bip-0084.mediawiki
 *
 * Which extended keys are accepted, and from where derivation starts:
 * - an account-level extended public key (depth 3, i.e. m/84'/coin'/0'; xpub/tpub, or the SLIP-132
 *   zpub/vpub spelling) derives 0/index. This is the watch-only setup: the server holds no secret.
 * - a master extended private key (depth 0; xprv/tprv, or zprv/vprv) derives the full path.
 * Anything else (other depths, a key for the other network family) throws: it is a configuration
 * error, not user input.
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { randomBytes } from '@noble/hashes/utils.js'
import { createBase58check } from '@scure/base'
import { HDKey } from '@scure/bip32'
import { NETWORK, TEST_NETWORK, p2wpkh } from '@scure/btc-signer'
import type { Network } from '../config/network.js'

type Family = 'mainnet' | 'test'

interface KeyVersion {
  family: Family
  kind: 'private' | 'public'
  /** The private/public version pair to hand to HDKey so that it accepts this key. */
  versions: { private: number; public: number }
}

const XPRV_XPUB = { private: 0x0488ade4, public: 0x0488b21e }
const TPRV_TPUB = { private: 0x04358394, public: 0x043587cf }
const ZPRV_ZPUB = { private: 0x04b2430c, public: 0x04b24746 }
const VPRV_VPUB = { private: 0x045f18bc, public: 0x045f1cf6 }

/** Every 4-byte version prefix we accept, mapped to what it says about the key. */
const KEY_VERSIONS = new Map<number, KeyVersion>()
for (const [family, versions] of [
  ['mainnet', XPRV_XPUB],
  ['test', TPRV_TPUB],
  ['mainnet', ZPRV_ZPUB],
  ['test', VPRV_VPUB],
] as const) {
  KEY_VERSIONS.set(versions.private, { family, kind: 'private', versions })
  KEY_VERSIONS.set(versions.public, { family, kind: 'public', versions })
}

/** btc-signer's network shape; it exports the two presets but not the type. */
type BtcNetwork = typeof NETWORK

const REGTEST: BtcNetwork = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }
const BTC_NETWORKS: Record<Network, BtcNetwork> = {
  mainnet: NETWORK,
  testnet: TEST_NETWORK,
  signet: TEST_NETWORK,
  regtest: REGTEST,
}

const HARDENED = 0x80000000
const ACCOUNT_DEPTH = 3
const RECEIVE_CHAIN = 0
const base58check = createBase58check(sha256)

function familyOf(network: Network): Family {
  return network === 'mainnet' ? 'mainnet' : 'test'
}

function coinType(network: Network): number {
  return network === 'mainnet' ? 0 : 1
}

/**
 * The `index`-th BIP84 receive address of the wallet behind `xprvOrXpub`, for `network`.
 * See the module comment for which keys are accepted.
 */
export function deriveReceiveAddress(xprvOrXpub: string, index: number, network: Network): string {
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED) {
    throw new RangeError(`address index must be an integer in [0, 2^31): ${index}`)
  }
  const account = accountKey(xprvOrXpub, network)
  const child = account.deriveChild(RECEIVE_CHAIN).deriveChild(index)
  const address = p2wpkh(child.publicKey!, BTC_NETWORKS[network]).address
  if (address === undefined) throw new Error('P2WPKH address could not be encoded')
  return address
}

/** The account-level extended public key (m/84'/coin'/0') for watch-only use, as xpub or tpub. */
export function deriveAccountXpub(masterXprv: string, network: Network): string {
  const account = accountKey(masterXprv, network)
  const versions = familyOf(network) === 'mainnet' ? XPRV_XPUB : TPRV_TPUB
  return base58check.encode(
    Uint8Array.of(...u32be(versions.public), ...base58check.decode(account.publicExtendedKey).subarray(4)),
  )
}

/** A fresh random master extended private key: xprv on mainnet, tprv on the test networks. */
export function newMasterKey(network: Network): string {
  const versions = familyOf(network) === 'mainnet' ? XPRV_XPUB : TPRV_TPUB
  return HDKey.fromMasterSeed(randomBytes(32), versions).privateExtendedKey
}

/** Decodes `text` and brings it to the account level m/84'/coin'/0'. */
function accountKey(text: string, network: Network): HDKey {
  let bytes: Uint8Array
  try {
    bytes = base58check.decode(text)
  } catch {
    throw new Error('extended key is not valid base58check')
  }
  const version = KEY_VERSIONS.get(
    ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0,
  )
  if (version === undefined) throw new Error('unknown extended key version')
  if (version.family !== familyOf(network)) {
    throw new Error(
      `extended key is for ${version.family === 'mainnet' ? 'mainnet' : 'a test network'}, not ${network}`,
    )
  }
  const key = HDKey.fromExtendedKey(text, version.versions)
  if (version.kind === 'public') {
    if (key.depth !== ACCOUNT_DEPTH)
      throw new Error(`extended public key must be account-level (depth 3), got depth ${key.depth}`)
    return key
  }
  if (key.depth !== 0)
    throw new Error(`extended private key must be the master key (depth 0), got depth ${key.depth}`)
  return key.derive(`m/84'/${coinType(network)}'/0'`)
}

function u32be(value: number): number[] {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]
}
