import { hexToBytes } from '@noble/hashes/utils.js'
import bolt11 from 'bolt11'
import { describe, expect, it } from 'vitest'
import { decodeInvoice, encodeInvoice } from './bolt11.js'
import { SPEC_NODE_KEY, SPEC_NODE_PRIVATE_KEY } from './bolt11.vectors.js'

// decodeInvoice remembers recent good results (recovering the payee key is the costly part);
// these pin down that a remembered answer is the answer a fresh decode gives, and stays so.
describe('decodeInvoice, decoding the same invoice again', () => {
  const invoice = encodeInvoice(
    {
      network: 'regtest',
      amountMsat: 250_000n,
      paymentHash: hexToBytes('0001020304050607080900010203040506070809000102030405060708090102'),
      paymentSecret: hexToBytes('1111111111111111111111111111111111111111111111111111111111111111'),
      description: 'again',
      expirySeconds: 600,
      timestampSec: 1_700_000_000,
    },
    hexToBytes(SPEC_NODE_PRIVATE_KEY),
  )

  it('answers the same, and a caller changing its copy changes nothing for the next', () => {
    const first = decodeInvoice(invoice)
    if ('error' in first) throw new Error(first.error)
    expect(first.payeeNodeKey).toBe(SPEC_NODE_KEY)
    const snapshot = structuredClone(first)
    first.features.push(99)
    first.payeeNodeKey = 'changed'
    const second = decodeInvoice(invoice)
    expect(second).toEqual(snapshot)
    expect(decodeInvoice(invoice)).toEqual(snapshot)
  })

  it('gives an invoice it just signed the fields an independent decoder reads from it', () => {
    // encodeInvoice remembers its own invoice without recovering the key; the bolt11 library
    // recovers it from the signature.
    const ours = decodeInvoice(invoice)
    if ('error' in ours) throw new Error(ours.error)
    const lib = bolt11.decode(invoice, {
      bech32: 'bcrt',
      pubKeyHash: 0x6f,
      scriptHash: 0xc4,
      validWitnessVersions: [0, 1],
    })
    expect(ours.payeeNodeKey).toBe(lib.payeeNodeKey)
    expect(ours.paymentHash).toBe(lib.tags.find((t) => t.tagName === 'payment_hash')?.data)
    expect(ours.amountMsat).toBe(BigInt(lib.millisatoshis!))
    expect(ours.timestampSec).toBe(lib.timestamp)
    expect(ours.expiresAtMs).toBe(lib.timeExpireDate! * 1000)
  })

  it('still refuses an altered copy of a remembered invoice', () => {
    expect('error' in decodeInvoice(invoice)).toBe(false)
    // One data character changed: the checksum no longer holds.
    const i = invoice.length - 20
    const altered = invoice.slice(0, i) + (invoice[i] === 'q' ? 'p' : 'q') + invoice.slice(i + 1)
    expect(decodeInvoice(altered)).toEqual({ error: 'bad checksum' })
    expect(decodeInvoice(altered)).toEqual({ error: 'bad checksum' })
  })
})
