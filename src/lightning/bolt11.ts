/**
 * BOLT11 invoices: our own encoder/signer and decoder/verifier.
 *
 * An invoice is bech32 without the 90-character limit. Its human-readable part is `ln` + currency
 * prefix + optional amount; its data part is a 35-bit timestamp, tagged fields and a 65-byte
 * recoverable secp256k1 signature over sha256(hrp bytes || data words packed into bytes, zero-padded).
 * Spec: https://github.com/lightning/bolts/blob/master/11-payment-encoding.md
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { bech32 } from '@scure/base'
import { assert } from '../shared/assert.js'
import type { Network } from '../config/network.js'

/** Currency prefixes per network; the longer prefix of a pair must be tried first when parsing. */
const PREFIX_BY_NETWORK: Record<Network, string> = {
  mainnet: 'bc',
  testnet: 'tb',
  signet: 'tbs',
  regtest: 'bcrt',
}
const PREFIXES_LONGEST_FIRST = (Object.entries(PREFIX_BY_NETWORK) as [Network, string][]).sort(
  (a, b) => b[1].length - a[1].length,
)

/** Tagged-field type codes (the bech32 character's value). */
const TAG = {
  paymentHash: 1, // p
  routing: 3, // r
  features: 5, // 9
  expiry: 6, // x
  fallback: 9, // f
  description: 13, // d
  paymentSecret: 16, // s
  payeeNodeKey: 19, // n
  descriptionHash: 23, // h
  minFinalCltvExpiry: 24, // c
} as const

/** Defaults the spec gives readers when the field is absent. */
export const EXPIRY_SECONDS_DEFAULT = 3600
export const MIN_FINAL_CLTV_EXPIRY_DEFAULT = 18

/** The most characters a QR code holds; longer text cannot be a scannable invoice, so we refuse it early. */
export const INVOICE_CHARS_MAX = 7089
/** 21 million BTC in millisatoshis: no amount can be larger. */
const AMOUNT_MSAT_MAX = 2_100_000_000_000_000_000n
const MSAT_PER_BTC = 100_000_000_000n
/** Multiplier letters and how many msat one unit of each is worth (`p` is a tenth of a msat). */
const MSAT_PER_UNIT: Record<'m' | 'u' | 'n', bigint> = { m: 100_000_000n, u: 100_000n, n: 100n }
const TIMESTAMP_WORDS = 7
const SIGNATURE_WORDS = 104
/** A 639-byte description fills the 10-bit data_length's maximum of 1023 words. */
const DESCRIPTION_BYTES_MAX = 639
/** Integer fields longer than 7 words (35 bits) would not be meaningful and could overflow a double. */
const INT_FIELD_WORDS_MAX = 7

/**
 * Feature bits we write, as LND does: var_onion_optin (8) and payment_secret (14) required,
 * basic_mpp (17) optional. An invoice carrying `s` must set payment_secret (BOLT 9/11).
 */
const INVOICE_FEATURE_BITS = [8, 14, 17]
/** Even ("required") feature bits we understand; any other even bit makes the invoice unpayable. */
const KNOWN_REQUIRED_FEATURE_BITS = new Set([8, 14, 16, 24, 48])

/** What `encodeInvoice` puts into an invoice. */
export interface InvoiceFields {
  network: Network
  /** Omit for a zero-amount ("any amount") invoice. */
  amountMsat?: bigint
  paymentHash: Uint8Array
  paymentSecret: Uint8Array
  description: string
  /**
   * SHA-256 of a description kept elsewhere (32 bytes): written as the `h` field instead of `d`
   * (BOLT11 requires exactly one of them). LNURL-pay (LUD-06) commits to its metadata this way.
   */
  descriptionHash?: Uint8Array
  expirySeconds: number
  timestampSec: number
  /** Defaults to the spec's 18 blocks. */
  minFinalCltvExpiry?: number
}

/** A decoded invoice whose checksum and signature have been verified. Hashes and keys are lower-case hex. */
export interface DecodedInvoice {
  network: Network
  amountMsat: bigint | null
  paymentHash: string
  /** Always present: the spec now requires readers to refuse invoices without `s`. */
  paymentSecret: string
  description?: string
  descriptionHash?: string
  expirySeconds: number
  timestampSec: number
  expiresAtMs: number
  /** Compressed public key that signed the invoice (recovered, or the `n` field when present). */
  payeeNodeKey: string
  minFinalCltvExpiry: number
  /** Numbers of the feature bits set in the `9` field. */
  features: number[]
}

/**
 * Builds and signs a BOLT11 invoice with `nodePrivateKey` (32 bytes). Inputs come from our own code,
 * so malformed ones are bugs and throw.
 */
export function encodeInvoice(fields: InvoiceFields, nodePrivateKey: Uint8Array): string {
  assert(fields.paymentHash.length === 32, 'payment hash must be 32 bytes')
  assert(fields.paymentSecret.length === 32, 'payment secret must be 32 bytes')
  assert(isUint(fields.timestampSec, 35), 'timestamp must fit 35 bits')
  assert(isUint(fields.expirySeconds, 35), 'expiry must be a non-negative integer')
  const cltv = fields.minFinalCltvExpiry ?? MIN_FINAL_CLTV_EXPIRY_DEFAULT
  assert(isUint(cltv, 35), 'min_final_cltv_expiry must be a non-negative integer')
  assert(
    fields.descriptionHash === undefined || fields.descriptionHash.length === 32,
    'description hash must be 32 bytes',
  )
  const descriptionBytes = utf8ToBytes(fields.description)
  assert(descriptionBytes.length <= DESCRIPTION_BYTES_MAX, 'description longer than 639 bytes')
  assert(
    fields.descriptionHash === undefined || fields.descriptionHash.length === 32,
    'description hash must be 32 bytes',
  )
  const describe =
    fields.descriptionHash === undefined
      ? taggedField(TAG.description, bech32.toWords(descriptionBytes))
      : taggedField(TAG.descriptionHash, bech32.toWords(fields.descriptionHash))

  const hrp =
    'ln' +
    PREFIX_BY_NETWORK[fields.network] +
    (fields.amountMsat === undefined ? '' : amountToHrp(fields.amountMsat))
  const data = [
    ...uintToWords(fields.timestampSec, TIMESTAMP_WORDS),
    ...taggedField(TAG.paymentHash, bech32.toWords(fields.paymentHash)),
    ...taggedField(TAG.paymentSecret, bech32.toWords(fields.paymentSecret)),
    ...describe,
    ...taggedField(TAG.expiry, uintToWords(fields.expirySeconds)),
    ...taggedField(TAG.minFinalCltvExpiry, uintToWords(cltv)),
    ...taggedField(TAG.features, featureWords(INVOICE_FEATURE_BITS)),
  ]
  // noble's 'recovered' format is recovery byte || r || s; BOLT11 wants r || s || recovery byte.
  const recovered = secp256k1.sign(signingHash(hrp, data), nodePrivateKey, {
    prehash: false,
    format: 'recovered',
  })
  const signature = concatBytes(recovered.subarray(1), recovered.subarray(0, 1))
  const invoice = bech32.encode(hrp, [...data, ...bech32.toWords(signature)], false)
  // We signed it, so its payee is our key: the decode that follows an issue needs no recovery.
  const issued = decodeUncached(invoice, nodePublicKey(nodePrivateKey))
  assert(!('error' in issued), 'an invoice we encoded decodes')
  remember(invoice, issued)
  return invoice
}

const nodePublicKeys = new Map<string, string>()

/** The compressed public key of a node key, computed once per key. */
function nodePublicKey(nodePrivateKey: Uint8Array): string {
  const id = bytesToHex(nodePrivateKey)
  let key = nodePublicKeys.get(id)
  if (key === undefined) {
    key = bytesToHex(secp256k1.getPublicKey(nodePrivateKey, true))
    if (nodePublicKeys.size >= 16) nodePublicKeys.clear()
    nodePublicKeys.set(id, key)
  }
  return key
}

// Verifying an invoice recovers the payee key from its signature, some milliseconds of CPU, and one
// invoice is decoded several times in its life (issued, quoted, confirmed, paid). Decoding is a pure
// function of the text, so recent good results are remembered, oldest dropped first.
const DECODED_MAX = 1_000
const recentlyDecoded = new Map<string, DecodedInvoice>()

/**
 * Parses and verifies a BOLT11 invoice (either case; a `lightning:` scheme is tolerated). Every
 * reason to refuse it is returned as `{ error }`, never thrown.
 */
export function decodeInvoice(text: string): DecodedInvoice | { error: string } {
  const known = recentlyDecoded.get(text)
  // A copy, so that a caller changing its result cannot change another's.
  if (known) return { ...known, features: [...known.features] }
  const result = decodeUncached(text)
  if (!('error' in result)) remember(text, result)
  return result
}

function remember(text: string, result: DecodedInvoice): void {
  if (recentlyDecoded.size >= DECODED_MAX) recentlyDecoded.delete(recentlyDecoded.keys().next().value!)
  recentlyDecoded.set(text, { ...result, features: [...result.features] })
}

/** Decodes and verifies; with `signedBy` (only for an invoice we just signed) the signature is trusted. */
function decodeUncached(text: string, signedBy?: string): DecodedInvoice | { error: string } {
  const invoice = text.replace(/^lightning:/i, '')
  if (invoice.length > INVOICE_CHARS_MAX) return { error: 'invoice is too long' }
  if (invoice !== invoice.toLowerCase() && invoice !== invoice.toUpperCase()) return { error: 'mixed case' }
  let hrp: string
  let words: number[]
  try {
    ;({ prefix: hrp, words } = bech32.decode(invoice, false))
  } catch (e) {
    return { error: /checksum/i.test((e as Error).message) ? 'bad checksum' : 'not a bech32 string' }
  }

  const head = parseHrp(hrp)
  if ('error' in head) return head
  if (words.length < TIMESTAMP_WORDS + SIGNATURE_WORDS) return { error: 'invoice is too short' }
  const data = words.slice(0, -SIGNATURE_WORDS)
  const fields = parseTaggedFields(data.slice(TIMESTAMP_WORDS))
  if ('error' in fields) return fields

  const payee =
    signedBy !== undefined
      ? { key: fields.payeeNodeKey ? bytesToHex(fields.payeeNodeKey) : signedBy }
      : verifySignature(hrp, data, words.slice(-SIGNATURE_WORDS), fields.payeeNodeKey)
  if ('error' in payee) return payee

  const timestampSec = wordsToUint(data.slice(0, TIMESTAMP_WORDS))
  const expirySeconds = fields.expirySeconds ?? EXPIRY_SECONDS_DEFAULT
  const decoded: DecodedInvoice = {
    network: head.network,
    amountMsat: head.amountMsat,
    paymentHash: fields.paymentHash,
    paymentSecret: fields.paymentSecret,
    expirySeconds,
    timestampSec,
    expiresAtMs: (timestampSec + expirySeconds) * 1000,
    payeeNodeKey: payee.key,
    minFinalCltvExpiry: fields.minFinalCltvExpiry ?? MIN_FINAL_CLTV_EXPIRY_DEFAULT,
    features: fields.features,
  }
  if (fields.description !== undefined) decoded.description = fields.description
  if (fields.descriptionHash !== undefined) decoded.descriptionHash = fields.descriptionHash
  return decoded
}

/** Shortest amount text: the largest multiplier that represents `amountMsat` exactly. */
function amountToHrp(amountMsat: bigint): string {
  assert(amountMsat > 0n && amountMsat <= AMOUNT_MSAT_MAX, 'invoice amount out of range')
  if (amountMsat % MSAT_PER_BTC === 0n) return String(amountMsat / MSAT_PER_BTC)
  for (const unit of ['m', 'u', 'n'] as const) {
    if (amountMsat % MSAT_PER_UNIT[unit] === 0n) return `${amountMsat / MSAT_PER_UNIT[unit]}${unit}`
  }
  return `${amountMsat * 10n}p`
}

function parseHrp(hrp: string): { network: Network; amountMsat: bigint | null } | { error: string } {
  if (!hrp.startsWith('ln')) return { error: 'not a lightning invoice (prefix must start with ln)' }
  for (const [network, prefix] of PREFIXES_LONGEST_FIRST) {
    if (!hrp.startsWith(prefix, 2)) continue
    const amount = /^(?:([1-9][0-9]*)([munp]?))?$/.exec(hrp.slice(2 + prefix.length))
    if (amount === null) continue
    const [, digits, unit] = amount
    if (digits === undefined) return { network, amountMsat: null }
    const value = BigInt(digits)
    let amountMsat: bigint
    if (unit === 'p') {
      if (value % 10n !== 0n) return { error: 'amount has sub-millisatoshi precision' }
      amountMsat = value / 10n
    } else {
      amountMsat =
        unit === '' || unit === undefined
          ? value * MSAT_PER_BTC
          : value * MSAT_PER_UNIT[unit as 'm' | 'u' | 'n']
    }
    if (amountMsat > AMOUNT_MSAT_MAX) return { error: 'amount exceeds 21 million BTC' }
    return { network, amountMsat }
  }
  return { error: `unknown prefix or malformed amount: ${hrp}` }
}

interface TaggedFields {
  paymentHash?: string
  paymentSecret?: string
  description?: string
  descriptionHash?: string
  payeeNodeKey?: Uint8Array
  expirySeconds?: number
  minFinalCltvExpiry?: number
  features: number[]
}

/** Fields whose length the spec fixes; a reader must fail on any other length (BOLT11, 2025). */
const FIXED_FIELD_WORDS = new Map<number, number>([
  [TAG.paymentHash, 52],
  [TAG.paymentSecret, 52],
  [TAG.descriptionHash, 52],
  [TAG.payeeNodeKey, 53],
])

/**
 * Reads the tagged fields by the current reader rules: fixed-length fields of the wrong length, a
 * missing `s`, not exactly one of `d`/`h`, non-minimal integers and unknown even feature bits all fail;
 * unknown field types are skipped; when a type repeats, the first occurrence wins.
 */
function parseTaggedFields(
  words: number[],
): (TaggedFields & { paymentHash: string; paymentSecret: string }) | { error: string } {
  const out: TaggedFields = { features: [] }
  let at = 0
  while (at < words.length) {
    if (at + 3 > words.length) return { error: 'truncated tagged field' }
    const type = words[at]!
    const length = words[at + 1]! * 32 + words[at + 2]!
    const body = words.slice(at + 3, at + 3 + length)
    if (body.length !== length) return { error: 'tagged field runs into the signature' }
    at += 3 + length
    const expected = FIXED_FIELD_WORDS.get(type)
    if (expected !== undefined && length !== expected)
      return { error: `field of type ${type} has wrong length` }
    let issue: string | undefined
    try {
      issue = readField(out, type, body)
    } catch {
      issue = `malformed field of type ${type}`
    }
    if (issue !== undefined) return { error: issue }
  }
  const { paymentHash, paymentSecret } = out
  if (paymentHash === undefined) return { error: 'missing payment hash (p field)' }
  if (paymentSecret === undefined) return { error: 'missing payment secret (s field)' }
  if ((out.description === undefined) === (out.descriptionHash === undefined)) {
    return { error: 'invoice must carry exactly one of description (d) or description hash (h)' }
  }
  // Unknown odd bits are optional and ignored; an unknown even bit means we cannot pay correctly.
  const unknownRequired = out.features.find((bit) => bit % 2 === 0 && !KNOWN_REQUIRED_FEATURE_BITS.has(bit))
  if (unknownRequired !== undefined) return { error: `unknown required feature bit ${unknownRequired}` }
  return { ...out, paymentHash, paymentSecret }
}

/**
 * Stores one field into `out` unless one of its type came earlier. Returns an issue for data that
 * breaks a rule; throws on data that cannot be decoded at all (bad padding, bad UTF-8).
 */
function readField(out: TaggedFields, type: number, body: number[]): string | undefined {
  switch (type) {
    case TAG.paymentHash:
      out.paymentHash ??= bytesToHex(bech32.fromWords(body))
      return
    case TAG.paymentSecret:
      out.paymentSecret ??= bytesToHex(bech32.fromWords(body))
      return
    case TAG.descriptionHash:
      out.descriptionHash ??= bytesToHex(bech32.fromWords(body))
      return
    case TAG.payeeNodeKey:
      out.payeeNodeKey ??= bech32.fromWords(body)
      return
    case TAG.description:
      out.description ??= new TextDecoder('utf-8', { fatal: true }).decode(bech32.fromWords(body))
      return
    case TAG.expiry:
    case TAG.minFinalCltvExpiry:
    case TAG.features: {
      // Writers must use the fewest words, so a leading zero word marks a malformed invoice.
      if (body[0] === 0) return `field of type ${type} is not minimally encoded`
      if (type === TAG.features) {
        if (out.features.length === 0) out.features = featureBits(body)
        return
      }
      if (body.length > INT_FIELD_WORDS_MAX) return `field of type ${type} is too long`
      if (type === TAG.expiry) out.expirySeconds ??= wordsToUint(body)
      else out.minFinalCltvExpiry ??= wordsToUint(body)
      return
    }
    default:
      // Routing hints (r), fallback addresses (f), metadata (m) and unknown types carry nothing we use.
      return
  }
}

/** Checks the signature and returns the payee's compressed key. */
function verifySignature(
  hrp: string,
  data: number[],
  signatureWords: number[],
  declaredKey: Uint8Array | undefined,
): { key: string } | { error: string } {
  const signature = bech32.fromWordsUnsafe(signatureWords)
  if (signature === undefined || signature.length !== 65) return { error: 'malformed signature' }
  const recovery = signature[64]!
  if (recovery > 3) return { error: 'invalid signature recovery id' }
  const compact = signature.subarray(0, 64)
  const hash = signingHash(hrp, data)
  try {
    if (declaredKey !== undefined) {
      // With `n` the spec has readers verify against it, and refuse high-S signatures; without `n`
      // they recover the key and accept either S.
      const valid = secp256k1.verify(compact, hash, declaredKey, { prehash: false, lowS: true })
      return valid
        ? { key: bytesToHex(declaredKey) }
        : { error: 'signature does not match the payee node key' }
    }
    const recovered = concatBytes(Uint8Array.of(recovery), compact)
    return { key: bytesToHex(secp256k1.recoverPublicKey(recovered, hash, { prehash: false })) }
  } catch {
    return { error: 'invalid signature' }
  }
}

/** sha256 of the hrp's bytes followed by the data words packed into bytes, zero-padded to a byte. */
function signingHash(hrp: string, dataWords: number[]): Uint8Array {
  const bytes = new Uint8Array(Math.ceil((dataWords.length * 5) / 8))
  let bit = 0
  for (const word of dataWords) {
    for (let i = 4; i >= 0; i--, bit++) {
      if ((word >> i) & 1) bytes[bit >> 3]! |= 0x80 >> (bit & 7)
    }
  }
  return sha256(concatBytes(utf8ToBytes(hrp), bytes))
}

function taggedField(type: number, body: number[]): number[] {
  assert(body.length < 1024, 'tagged field longer than 1023 words')
  return [type, body.length >> 5, body.length & 31, ...body]
}

/** Big-endian 5-bit words; with no `count`, the fewest words that hold the value (none for zero). */
function uintToWords(value: number, count?: number): number[] {
  const words: number[] = []
  for (let rest = value; rest > 0; rest = Math.floor(rest / 32)) words.unshift(rest % 32)
  while (words.length < (count ?? 0)) words.unshift(0)
  assert(count === undefined || words.length === count, 'value does not fit the field')
  return words
}

function wordsToUint(words: number[]): number {
  return words.reduce((acc, word) => acc * 32 + word, 0)
}

/** The `9` field is a big-endian bit vector: bit 0 is the lowest bit of the last word. */
function featureWords(bits: number[]): number[] {
  const words = new Array<number>(Math.ceil((Math.max(...bits) + 1) / 5)).fill(0)
  for (const bit of bits) words[words.length - 1 - Math.floor(bit / 5)]! |= 1 << (bit % 5)
  return words
}

function featureBits(words: number[]): number[] {
  const bits: number[] = []
  for (let i = 0; i < words.length; i++) {
    const word = words[words.length - 1 - i]!
    for (let b = 0; b < 5; b++) if ((word >> b) & 1) bits.push(i * 5 + b)
  }
  return bits
}

function isUint(value: number, bits: number): boolean {
  return Number.isInteger(value) && value >= 0 && value < 2 ** bits
}
