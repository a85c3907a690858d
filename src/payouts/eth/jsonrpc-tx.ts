/**
 * The bytes of an Ethereum USDT transfer, made here and exactly: RLP (the yellow paper's appendix
 * B), the EIP-1559 (type 2) transaction and its secp256k1 signature (EIP-2718 envelope, EIP-155
 * chain id inside the payload), the `transfer(address,uint256)` call data (the Solidity ABI), and
 * the address of the hot wallet's key (EIP-55 checksum for display).
 *
 * Why by hand over @noble/curves + @noble/hashes (already dependencies, audited) rather than viem
 * or ethers: the whole of it is about a hundred lines of encoding with fixed shapes (integers,
 * 20-byte addresses, one call), each checked below against published vectors in the tests, and it
 * keeps a 300-kB library with its own HTTP client, retries and nonce manager out of the path of the
 * money, where we want our own (the database's nonces, the project's HTTP helper).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { assert } from '../../shared/assert.js'

export type RlpItem = Uint8Array | RlpItem[]

const UINT256_LIMIT = 1n << 256n

/** The big-endian bytes of a non-negative integer without leading zeros (0 is empty), as RLP wants. */
export function intBytes(value: bigint): Uint8Array {
  assert(value >= 0n && value < UINT256_LIMIT, 'integer out of uint256 range')
  if (value === 0n) return new Uint8Array(0)
  const hex = value.toString(16)
  return hexToBytes(hex.length % 2 ? '0' + hex : hex)
}

function lengthPrefix(length: number, offset: number): Uint8Array {
  if (length < 56) return Uint8Array.of(offset + length)
  const lengthBytes = intBytes(BigInt(length))
  return concatBytes(Uint8Array.of(offset + 55 + lengthBytes.length), lengthBytes)
}

/** RLP encoding of a byte string or a (nested) list of them. */
export function rlpEncode(item: RlpItem): Uint8Array {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && item[0]! < 0x80) return item
    return concatBytes(lengthPrefix(item.length, 0x80), item)
  }
  const body = concatBytes(...item.map(rlpEncode))
  return concatBytes(lengthPrefix(body.length, 0xc0), body)
}

/** keccak256('Transfer(address,address,uint256)'): topic 0 of an ERC-20 Transfer log. */
export const TRANSFER_TOPIC = '0x' + bytesToHex(keccak_256(utf8ToBytes('Transfer(address,address,uint256)')))

/** The first four bytes of keccak256 of a function's signature. */
export function selector(signature: string): string {
  return bytesToHex(keccak_256(utf8ToBytes(signature))).slice(0, 8)
}

export const SELECTORS = {
  transfer: selector('transfer(address,uint256)'),
  balanceOf: selector('balanceOf(address)'),
  isBlackListed: selector('isBlackListed(address)'),
  paused: selector('paused()'),
} as const

/** A lower-case `0x` address, or refused. */
export function normalizeAddress(address: string): string {
  assert(/^0x[0-9a-fA-F]{40}$/.test(address), 'not a 20-byte hex address')
  return address.toLowerCase()
}

/** An ABI word holding an address. */
export function addressWord(address: string): string {
  return normalizeAddress(address).slice(2).padStart(64, '0')
}

export function uintWord(value: bigint): string {
  assert(value >= 0n && value < UINT256_LIMIT, 'amount out of uint256 range')
  return value.toString(16).padStart(64, '0')
}

/** Call data of `transfer(to, amount)`, `0x`-prefixed. */
export function transferCallData(to: string, amountMinor: bigint): string {
  return '0x' + SELECTORS.transfer + addressWord(to) + uintWord(amountMinor)
}

/** EIP-55 mixed-case checksum of an address. */
export function checksumAddress(address: string): string {
  const lower = normalizeAddress(address).slice(2)
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)))
  let out = '0x'
  for (let i = 0; i < 40; i++) out += parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!
  return out
}

/** The address of an uncompressed secp256k1 public key: the last 20 bytes of keccak256(x || y). */
export function addressOfPublicKey(uncompressed: Uint8Array): string {
  assert(uncompressed.length === 65 && uncompressed[0] === 4, 'expected an uncompressed public key')
  return '0x' + bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12))
}

export function addressOfPrivateKey(privateKey: Uint8Array): string {
  return addressOfPublicKey(secp256k1.getPublicKey(privateKey, false))
}

/** The fields of an EIP-1559 transaction with no access list (our transfers send no ETH: `value` 0). */
export interface Eip1559Fields {
  chainId: bigint
  nonce: bigint
  maxPriorityFeePerGas: bigint
  maxFeePerGas: bigint
  gasLimit: bigint
  to: string
  data: string
  value?: bigint
}

export interface SignedEthTx {
  /** `0x` hex of the EIP-2718 envelope, as eth_sendRawTransaction takes it. */
  raw: string
  /** keccak256 of the envelope: the hash every node knows the transaction by. */
  hash: string
}

function unsignedList(tx: Eip1559Fields): RlpItem[] {
  return [
    intBytes(tx.chainId),
    intBytes(tx.nonce),
    intBytes(tx.maxPriorityFeePerGas),
    intBytes(tx.maxFeePerGas),
    intBytes(tx.gasLimit),
    hexToBytes(normalizeAddress(tx.to).slice(2)),
    intBytes(tx.value ?? 0n),
    hexToBytes(tx.data.replace(/^0x/, '')),
    [],
  ]
}

/** Signs a type-2 transaction: keccak256(0x02 || rlp(fields)), then 0x02 || rlp(fields, yParity, r, s). */
export function signEip1559(tx: Eip1559Fields, privateKey: Uint8Array): SignedEthTx {
  assert(tx.maxPriorityFeePerGas <= tx.maxFeePerGas, 'the priority fee cannot exceed the fee cap')
  const fields = unsignedList(tx)
  const digest = keccak_256(concatBytes(Uint8Array.of(2), rlpEncode(fields)))
  // noble signs with RFC 6979 nonces and low S (EIP-2 requires low S); 'recovered' puts the recovery id first.
  const recovered = secp256k1.sign(digest, privateKey, { prehash: false, format: 'recovered' })
  const yParity = recovered[0]!
  assert(yParity <= 1, 'unexpected recovery id')
  const r = BigInt('0x' + bytesToHex(recovered.subarray(1, 33)))
  const s = BigInt('0x' + bytesToHex(recovered.subarray(33, 65)))
  const envelope = concatBytes(
    Uint8Array.of(2),
    rlpEncode([...fields, intBytes(BigInt(yParity)), intBytes(r), intBytes(s)]),
  )
  return { raw: '0x' + bytesToHex(envelope), hash: '0x' + bytesToHex(keccak_256(envelope)) }
}

/** A JSON-RPC quantity (`0x`-prefixed hex, no leading zeros) of a non-negative integer. */
export function quantity(value: bigint): string {
  assert(value >= 0n, 'a quantity is non-negative')
  return '0x' + value.toString(16)
}
