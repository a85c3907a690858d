/**
 * The bytes of a TRC-20 transfer: the ABI parameter we ask the node to build, the protobuf raw
 * data it answers with (decoded here, never taken on trust), and our signature over its id. No
 * network and no state: every function is pure.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { assert } from '../../shared/assert.js'
import type { Json } from './trongrid-http.js'

/** The first 4 bytes of keccak256('transfer(address,uint256)'). */
export const TRC20_TRANSFER_SELECTOR = 'a9059cbb'
/** java-tron's enum value for a TriggerSmartContract in `Transaction.Contract.type`. */
const TRIGGER_SMART_CONTRACT = 31n
const TRIGGER_TYPE_URL = 'type.googleapis.com/protocol.TriggerSmartContract'
export const UINT256_LIMIT = 1n << 256n
export const TX_HASH = /^[0-9a-f]{64}$/

/**
 * The `parameter` of `transfer(address,uint256)`: the recipient's 20-byte address (its `41`
 * version byte dropped) and the amount, each left-padded to 32 bytes, as the Solidity ABI says.
 */
export function encodeTrc20Transfer(toHex41: string, amountMinor: bigint): string {
  assert(/^41[0-9a-f]{40}$/.test(toHex41), 'expected a 21-byte hex TRON address starting 41')
  assert(amountMinor >= 0n && amountMinor < UINT256_LIMIT, 'amount out of uint256 range')
  return toHex41.slice(2).padStart(64, '0') + amountMinor.toString(16).padStart(64, '0')
}

/**
 * Signs a transaction id (already a SHA-256 digest, so it is not hashed again) the way TRON
 * expects: r || s || v, 65 bytes in hex, v being the recovery id plus 27.
 */
export function signTxId(txId: Uint8Array, privateKey: Uint8Array): string {
  assert(txId.length === 32, 'a transaction id is 32 bytes')
  // noble's 'recovered' format puts the recovery id first; TRON wants it last.
  const recovered = secp256k1.sign(txId, privateKey, { prehash: false, format: 'recovered' })
  const recovery = recovered[0]
  assert(recovery !== undefined && recovery <= 3, 'bad recovery id')
  return bytesToHex(recovered.subarray(1)) + (recovery + 27).toString(16).padStart(2, '0')
}

/** The fields of a TriggerSmartContract transaction that matter to us, read from its raw bytes. */
export interface DecodedTrigger {
  contractCount: number
  contractType: bigint
  typeUrl: string
  owner: string
  contract: string
  data: string
  callValue: bigint
  callTokenValue: bigint
  feeLimitSun: bigint
  expirationMs: bigint
}

/** Decodes `raw_data_hex` (protobuf `protocol.Transaction.raw`). Throws on malformed input. */
export function decodeTriggerTransaction(rawDataHex: string): DecodedTrigger {
  const raw = readFields(hexToBytes(rawDataHex))
  const contracts = raw.filter((f) => f.field === 11)
  const contract = readFields(bytesOf(contracts[0]))
  const any = readFields(bytesOf(contract.find((f) => f.field === 2)))
  const trigger = readFields(bytesOf(any.find((f) => f.field === 2)))
  const bytesField = (fields: ProtoField[], n: number): string => {
    const found = fields.find((f) => f.field === n)
    return found?.bytes ? bytesToHex(found.bytes) : ''
  }
  const varintField = (fields: ProtoField[], n: number): bigint =>
    fields.find((f) => f.field === n)?.varint ?? 0n
  return {
    contractCount: contracts.length,
    contractType: varintField(contract, 1),
    typeUrl: new TextDecoder().decode(bytesOf(any.find((f) => f.field === 1))),
    owner: bytesField(trigger, 1),
    contract: bytesField(trigger, 2),
    data: bytesField(trigger, 4),
    callValue: varintField(trigger, 3),
    callTokenValue: varintField(trigger, 5),
    feeLimitSun: varintField(raw, 18),
    expirationMs: varintField(raw, 8),
  }
}

/** What the transaction must call: from the hot wallet, on the token contract, with this data. */
export interface ExpectedCall {
  owner: string
  contract: string
  data: string
  /** Unchecked for a transaction signed earlier, under the fee limit configured then. */
  feeLimitSun?: bigint
}

/** Why the node's unsigned transaction must not be signed, or its id and expiry when it may be. */
export function checkUnsigned(
  tx: Json | undefined,
  expected: ExpectedCall,
): string | { txHash: string; expirationMs: bigint } {
  if (!tx || typeof tx !== 'object') return 'no transaction in the answer'
  const { txID, raw_data_hex: rawHex } = tx
  if (typeof txID !== 'string' || !TX_HASH.test(txID)) return 'txID is not 32 bytes of hex'
  if (typeof rawHex !== 'string' || !/^([0-9a-f]{2})+$/.test(rawHex)) return 'raw_data_hex is not hex'
  if (typeof tx.raw_data !== 'object' || tx.raw_data === null) return 'raw_data is missing'
  // The signature covers txID; txID must be the hash of exactly these bytes or we would sign blind.
  if (bytesToHex(sha256(hexToBytes(rawHex))) !== txID) return 'txID is not sha256(raw_data_hex)'
  let decoded: DecodedTrigger
  try {
    decoded = decodeTriggerTransaction(rawHex)
  } catch (err) {
    return `raw_data_hex does not decode: ${(err as Error).message}`
  }
  if (decoded.contractCount !== 1) return 'not exactly one contract'
  if (decoded.contractType !== TRIGGER_SMART_CONTRACT || decoded.typeUrl !== TRIGGER_TYPE_URL)
    return 'not a TriggerSmartContract'
  if (decoded.owner !== expected.owner) return 'sent from another address'
  if (decoded.contract !== expected.contract) return 'calls another contract'
  if (decoded.data !== expected.data) return 'calls something other than our transfer'
  if (decoded.callValue !== 0n || decoded.callTokenValue !== 0n) return 'moves TRX or TRC-10 tokens too'
  if (expected.feeLimitSun !== undefined && decoded.feeLimitSun !== expected.feeLimitSun)
    return 'has another fee limit'
  if (decoded.expirationMs <= 0n) return 'has no expiration'
  // A node's JSON raw_data that differs from these bytes hashes differently, so it fails SIGERROR.
  return { txHash: txID, expirationMs: decoded.expirationMs }
}

interface ProtoField {
  field: number
  varint?: bigint
  bytes?: Uint8Array
}

/** Reads one level of protobuf fields. Only what TRON transactions use: varints and byte strings. */
function readFields(buf: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = []
  let at = 0
  const varint = (): bigint => {
    let value = 0n
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = buf[at++]
      if (byte === undefined) throw new Error('truncated varint')
      value |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return value
    }
    throw new Error('varint longer than 10 bytes')
  }
  while (at < buf.length) {
    const key = varint()
    const field = Number(key >> 3n)
    const wire = Number(key & 7n)
    if (field === 0) throw new Error('field number 0')
    if (wire === 0) fields.push({ field, varint: varint() })
    else if (wire === 2) {
      const length = Number(varint())
      if (at + length > buf.length) throw new Error('length past the end')
      fields.push({ field, bytes: buf.subarray(at, at + length) })
      at += length
    } else if (wire === 1) at += 8
    else if (wire === 5) at += 4
    else throw new Error(`unsupported wire type ${wire}`)
    if (at > buf.length) throw new Error('field past the end')
  }
  return fields
}

function bytesOf(field: ProtoField | undefined): Uint8Array {
  if (!field?.bytes) throw new Error('missing nested message')
  return field.bytes
}
