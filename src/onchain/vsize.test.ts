import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js'
import { Transaction, OutScript, p2wpkh } from '@scure/btc-signer'
import { describe, expect, it } from 'vitest'
import type { AddressType } from './address.js'
import { estimateSendVsize, networkFeeSats } from './vsize.js'

describe('estimateSendVsize', () => {
  it.each([
    ['p2wpkh', 141],
    ['p2wsh', 153],
    ['p2tr', 153],
    ['p2sh', 142],
    ['p2pkh', 144],
  ] as const)('a send to %s is %i vB', (type, vsize) => {
    expect(estimateSendVsize(type)).toBe(vsize)
  })

  // Builds and signs the same transaction shape with @scure/btc-signer and measures it. The real
  // signature is 71 or 72 bytes, so the estimate must equal the real vsize or exceed it by one at most.
  const key = secp256k1.utils.randomSecretKey()
  const spend = p2wpkh(secp256k1.getPublicKey(key, true))
  const destinations: Record<AddressType, Uint8Array> = {
    p2wpkh: OutScript.encode({ type: 'wpkh', hash: new Uint8Array(20).fill(1) }),
    p2wsh: OutScript.encode({ type: 'wsh', hash: new Uint8Array(32).fill(2) }),
    p2tr: OutScript.encode({ type: 'tr', pubkey: schnorr.getPublicKey(schnorr.utils.randomSecretKey()) }),
    p2sh: OutScript.encode({ type: 'sh', hash: new Uint8Array(20).fill(4) }),
    p2pkh: OutScript.encode({ type: 'pkh', hash: new Uint8Array(20).fill(5) }),
  }

  it.each(Object.keys(destinations) as AddressType[])('matches a real signed send to %s', (type) => {
    const tx = new Transaction()
    tx.addInput({
      txid: new Uint8Array(32).fill(9),
      index: 0,
      witnessUtxo: { script: spend.script, amount: 100_000n },
    })
    tx.addOutput({ script: destinations[type], amount: 50_000n })
    tx.addOutput({ script: spend.script, amount: 49_000n })
    tx.sign(key)
    tx.finalize()
    expect(estimateSendVsize(type) - tx.vsize).toBeGreaterThanOrEqual(0)
    expect(estimateSendVsize(type) - tx.vsize).toBeLessThanOrEqual(1)
  })
})

describe('networkFeeSats', () => {
  it('multiplies exactly and rounds a fractional vsize up', () => {
    expect(networkFeeSats(12n, 141)).toBe(1692n)
    expect(networkFeeSats(1n, 140.5)).toBe(141n)
    expect(networkFeeSats(0n, 141)).toBe(0n)
    expect(networkFeeSats(10_000_000_000n, 153)).toBe(1_530_000_000_000n)
  })

  it('refuses a negative rate or vsize', () => {
    expect(() => networkFeeSats(-1n, 141)).toThrow()
    expect(() => networkFeeSats(1n, -1)).toThrow()
    expect(() => networkFeeSats(1n, Number.NaN)).toThrow()
  })
})
