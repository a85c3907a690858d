import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { bech32 } from '@scure/base'
import bolt11 from 'bolt11'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Network } from '../config/network.js'
import { NETWORKS } from '../config/network.js'
import { decodeInvoice, encodeInvoice, type DecodedInvoice, type InvoiceFields } from './bolt11.js'
import { INVALID_VECTORS, SPEC_NODE_KEY, SPEC_NODE_PRIVATE_KEY, VALID_VECTORS } from './bolt11.vectors.js'

/** The independent library knows mainnet, testnet and regtest; signet must be described to it. */
const BOLT11_LIB_NETWORK: Record<Network, Parameters<typeof bolt11.decode>[1]> = {
  mainnet: undefined,
  testnet: undefined,
  regtest: undefined,
  signet: { bech32: 'tbs', pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] },
}

function decoded(text: string): DecodedInvoice {
  const result = decodeInvoice(text)
  if ('error' in result) throw new Error(`expected a valid invoice, got: ${result.error}`)
  return result
}

function libTag(text: string, network: Network, name: string): unknown {
  return bolt11.decode(text, BOLT11_LIB_NETWORK[network]).tags.find((tag) => tag.tagName === name)?.data
}

const nodeKey = hexToBytes('7f1c2a5e9b3d4f60718293a4b5c6d7e8f90112233445566778899aabbccddeef')
const nodePub = bytesToHex(secp256k1.getPublicKey(nodeKey, true))

function fields(overrides: Partial<InvoiceFields> = {}): InvoiceFields {
  return {
    network: 'mainnet',
    amountMsat: 250_000_000n,
    paymentHash: sha256(utf8ToBytes('preimage')),
    paymentSecret: new Uint8Array(32).fill(7),
    description: 'svcpay test',
    expirySeconds: 3600,
    timestampSec: 1_700_000_000,
    ...overrides,
  }
}

describe('decodeInvoice: BOLT11 specification examples', () => {
  it.each(VALID_VECTORS)('decodes "$title"', ({ invoice, expect: want }) => {
    const got = decoded(invoice)
    const { features, ...rest } = want
    expect(got).toMatchObject(rest)
    if (want.description === undefined) expect(got.description).toBeUndefined()
    if (want.descriptionHash === undefined) expect(got.descriptionHash).toBeUndefined()
    if (features !== undefined) expect(got.features).toEqual(features)
    expect(got.expiresAtMs).toBe((want.timestampSec + want.expirySeconds) * 1000)
  })

  it('the spec key really is the public key of the spec private key', () => {
    expect(bytesToHex(secp256k1.getPublicKey(hexToBytes(SPEC_NODE_PRIVATE_KEY), true))).toBe(SPEC_NODE_KEY)
  })

  it('the hashed-description examples commit to the text the spec gives', () => {
    const text =
      'One piece of chocolate cake, one icecream cone, one pickle, one slice of swiss cheese, one slice of ' +
      'salami, one lollypop, one piece of cherry pie, one sausage, one cupcake, and one slice of watermelon'
    const hashed = VALID_VECTORS.filter((v) => v.expect.descriptionHash !== undefined)
    expect(hashed.length).toBeGreaterThan(0)
    for (const v of hashed) expect(v.expect.descriptionHash).toBe(bytesToHex(sha256(utf8ToBytes(text))))
  })

  // Guards against typing mistakes in the vectors file: the independent library must agree.
  it.each(VALID_VECTORS)('the bolt11 package agrees on "$title"', ({ invoice, expect: want }) => {
    const lib = bolt11.decode(invoice)
    expect(lib.payeeNodeKey).toBe(want.payeeNodeKey)
    expect(lib.millisatoshis ?? null).toBe(want.amountMsat === null ? null : String(want.amountMsat))
    expect(lib.timestamp).toBe(want.timestampSec)
    expect(lib.tags.find((t) => t.tagName === 'payment_hash')?.data).toBe(want.paymentHash)
    expect(lib.tags.find((t) => t.tagName === 'payment_secret')?.data).toBe(want.paymentSecret)
  })

  it.each(INVALID_VECTORS)('rejects "$title"', ({ invoice, issue }) => {
    const result = decodeInvoice(invoice)
    expect(result).toHaveProperty('error')
    expect((result as { error: string }).error).toContain(issue)
  })
})

describe('encodeInvoice', () => {
  it('writes the network prefixes of the contract', () => {
    const prefixes = NETWORKS.map((network) =>
      encodeInvoice(fields({ network, amountMsat: undefined }), nodeKey),
    )
    expect(prefixes.map((text) => text.slice(0, text.lastIndexOf('1')))).toEqual([
      'lnbc',
      'lntb',
      'lntbs',
      'lnbcrt',
    ])
  })

  it.each([
    [1n, '10p'],
    [10n, '100p'],
    [1_000n, '10n'],
    [123_456n, '1234560p'],
    [100_000n, '1u'],
    [250_000_000n, '2500u'],
    [2_500_000_000n, '25m'],
    [100_000_000_000n, '1'],
    [2_100_000_000_000_000_000n, '21000000'],
  ])('writes %s msat as the shortest amount %s', (amountMsat, text) => {
    const invoice = encodeInvoice(fields({ amountMsat }), nodeKey)
    expect(invoice.slice(0, invoice.lastIndexOf('1'))).toBe(`lnbc${text}`)
    expect(decoded(invoice).amountMsat).toBe(amountMsat)
    expect(bolt11.decode(invoice).millisatoshis).toBe(String(amountMsat))
  })

  it('refuses inputs that cannot make a valid invoice', () => {
    expect(() => encodeInvoice(fields({ paymentHash: new Uint8Array(31) }), nodeKey)).toThrow()
    expect(() => encodeInvoice(fields({ amountMsat: 0n }), nodeKey)).toThrow()
    expect(() => encodeInvoice(fields({ amountMsat: 2_100_000_000_000_000_001n }), nodeKey)).toThrow()
    expect(() => encodeInvoice(fields({ description: 'x'.repeat(640) }), nodeKey)).toThrow()
    expect(() => encodeInvoice(fields({ expirySeconds: -1 }), nodeKey)).toThrow()
  })

  it('sets payment_secret and var_onion as required and basic_mpp as optional, as LND does', () => {
    const invoice = encodeInvoice(fields(), nodeKey)
    expect(decoded(invoice).features).toEqual([8, 14, 17])
    const lib = libTag(invoice, 'mainnet', 'feature_bits') as Record<
      string,
      { required?: boolean; supported?: boolean }
    >
    expect(lib.var_onion_optin).toEqual({ required: true, supported: false })
    expect(lib.payment_secret).toEqual({ required: true, supported: false })
    expect(lib.basic_mpp).toEqual({ required: false, supported: true })
  })

  it('re-signs a spec example with the spec key and the result carries the same payee', () => {
    const spec = decoded(VALID_VECTORS[1]!.invoice)
    const invoice = encodeInvoice(
      {
        network: spec.network,
        amountMsat: spec.amountMsat!,
        paymentHash: hexToBytes(spec.paymentHash),
        paymentSecret: hexToBytes(spec.paymentSecret),
        description: spec.description!,
        expirySeconds: spec.expirySeconds,
        timestampSec: spec.timestampSec,
      },
      hexToBytes(SPEC_NODE_PRIVATE_KEY),
    )
    expect(decoded(invoice)).toMatchObject({ ...spec, features: [8, 14, 17] })
    expect(bolt11.decode(invoice).payeeNodeKey).toBe(SPEC_NODE_KEY)
  })
})

describe('round trip through our decoder and the independent bolt11 package', () => {
  const arbitraryFields = fc.record({
    network: fc.constantFrom(...NETWORKS),
    amountMsat: fc.option(fc.bigInt({ min: 1n, max: 2_100_000_000_000_000_000n }), { nil: undefined }),
    paymentHash: fc.uint8Array({ minLength: 32, maxLength: 32 }),
    paymentSecret: fc.uint8Array({ minLength: 32, maxLength: 32 }),
    description: fc.string({ unit: 'grapheme', maxLength: 100 }),
    expirySeconds: fc.integer({ min: 0, max: 31_536_000 }),
    timestampSec: fc.integer({ min: 0, max: 2 ** 35 - 1 }),
    minFinalCltvExpiry: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
  })

  it('every invoice we encode decodes to what we put in, by both decoders', () => {
    fc.assert(
      fc.property(arbitraryFields, (input) => {
        const invoice = encodeInvoice(input, nodeKey)
        const ours = decoded(invoice)
        expect(ours).toMatchObject({
          network: input.network,
          amountMsat: input.amountMsat ?? null,
          paymentHash: bytesToHex(input.paymentHash),
          paymentSecret: bytesToHex(input.paymentSecret),
          description: input.description,
          expirySeconds: input.expirySeconds,
          timestampSec: input.timestampSec,
          minFinalCltvExpiry: input.minFinalCltvExpiry ?? 18,
          payeeNodeKey: nodePub,
        })

        const lib = bolt11.decode(invoice, BOLT11_LIB_NETWORK[input.network])
        expect(lib.payeeNodeKey).toBe(nodePub)
        expect(lib.millisatoshis ?? null).toBe(
          input.amountMsat === undefined ? null : String(input.amountMsat),
        )
        expect(lib.timestamp).toBe(input.timestampSec)
        expect(libTag(invoice, input.network, 'payment_hash')).toBe(bytesToHex(input.paymentHash))
        expect(libTag(invoice, input.network, 'payment_secret')).toBe(bytesToHex(input.paymentSecret))
        expect(libTag(invoice, input.network, 'description')).toBe(input.description)
        // The library reads an empty (minimal) expiry field as absent, i.e. its default.
        expect(libTag(invoice, input.network, 'expire_time') ?? 0).toBe(input.expirySeconds)
      }),
      { numRuns: 60 },
    )
  })

  it('accepts upper case and the lightning: scheme', () => {
    const invoice = encodeInvoice(fields(), nodeKey)
    expect(decoded(`lightning:${invoice.toUpperCase()}`)).toEqual(decoded(invoice))
  })
})

describe('tampering', () => {
  const invoice = encodeInvoice(fields(), nodeKey)
  const { prefix, words } = bech32.decode(invoice, false)

  it('a changed character breaks the checksum', () => {
    const at = invoice.length - 20
    const swapped = invoice.slice(0, at) + (invoice[at] === 'q' ? 'p' : 'q') + invoice.slice(at + 1)
    expect(decodeInvoice(swapped)).toEqual({ error: 'bad checksum' })
  })

  it('a re-checksummed change to the amount no longer recovers our node key', () => {
    const forged = bech32.encode(prefix.replace('2500u', '2501u'), words, false)
    const result = decodeInvoice(forged)
    // Without an `n` field BOLT11 recovers the key, so a forgery yields some other payee (or none).
    expect('error' in result ? 'refused' : result.payeeNodeKey).not.toBe(nodePub)
    expect(bolt11.decode(forged).payeeNodeKey).not.toBe(nodePub)
  })

  it('a re-checksummed change to the payment hash no longer recovers our node key', () => {
    const forgedWords = [...words]
    forgedWords[12] = (forgedWords[12]! + 1) % 32
    const result = decodeInvoice(bech32.encode(prefix, forgedWords, false))
    expect('error' in result ? 'refused' : result.payeeNodeKey).not.toBe(nodePub)
  })

  it('a recovery id above 3 is refused', () => {
    const signature = bech32.fromWords(words.slice(-104))
    signature[64] = 4
    const forged = bech32.encode(prefix, [...words.slice(0, -104), ...bech32.toWords(signature)], false)
    expect(decodeInvoice(forged)).toEqual({ error: 'invalid signature recovery id' })
  })

  it('an invoice whose n field names another key is refused', () => {
    // Insert an `n` field (type 19, 53 words) with a different key before the signature and re-sign
    // with our key: the declared payee no longer matches the signer.
    const other = secp256k1.getPublicKey(hexToBytes(SPEC_NODE_PRIVATE_KEY), true)
    const data = [...words.slice(0, -104), 19, 1, 21, ...bech32.toWords(other)]
    const forged = resign(prefix, data, nodeKey)
    expect(decodeInvoice(forged)).toEqual({ error: 'signature does not match the payee node key' })
    // Declaring our own key in `n` is accepted and reported as the payee.
    const honest = resign(
      prefix,
      [...words.slice(0, -104), 19, 1, 21, ...bech32.toWords(hexToBytes(nodePub))],
      nodeKey,
    )
    expect(decoded(honest).payeeNodeKey).toBe(nodePub)
    expect(bolt11.decode(honest).payeeNodeKey).toBe(nodePub)
  })

  it('refuses strings that are not invoices', () => {
    expect(decodeInvoice('')).toHaveProperty('error')
    expect(decodeInvoice('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4')).toHaveProperty('error')
    expect(decodeInvoice('lnbc' + 'q'.repeat(8000))).toEqual({ error: 'invoice is too long' })
  })
})

/** Signs data words as BOLT11 prescribes, written here apart from the module under test. */
function resign(prefix: string, data: number[], key: Uint8Array): string {
  const bits = data.map((word) => word.toString(2).padStart(5, '0')).join('')
  const padded = bits.padEnd(Math.ceil(bits.length / 8) * 8, '0')
  const bytes = Uint8Array.from(padded.match(/.{8}/g)!, (byte) => parseInt(byte, 2))
  const message = sha256(new Uint8Array([...utf8ToBytes(prefix), ...bytes]))
  const recovered = secp256k1.sign(message, key, { prehash: false, format: 'recovered' })
  const signature = new Uint8Array([...recovered.subarray(1), recovered[0]!])
  return bech32.encode(prefix, [...data, ...bech32.toWords(signature)], false)
}
