/**
 * Virtual size of the hot wallet's typical send, for quoting network fees before the transaction
 * exists: one P2WPKH input, one output to the destination and one P2WPKH change output.
 *
 * Sizes in weight units (vbytes x 4), so the arithmetic stays in integers:
 * - overhead 42 WU (10.5 vB): version 4 + locktime 4 + input count 1 + output count 1 bytes, each
 *   x4, plus the segwit marker and flag (2 WU).
 * - P2WPKH input 272 WU (68 vB): outpoint 36 + script length 1 + sequence 4 bytes (x4 = 164 WU), plus
 *   the witness: item count 1 + signature 1+72 + public key 1+33 = 108 WU. 72 bytes is the largest
 *   usual DER signature, so we round up rather than down.
 * - outputs, 8-byte value + script length + script, x4: P2WPKH 31 vB, P2WSH 43, P2TR 43, P2SH 32,
 *   P2PKH 34.
 * A P2WPKH send is therefore 42 + 272 + 124 + 124 = 562 WU = 140.5 vB, charged as 141.
 */
import { assert } from '../shared/assert.js'
import type { AddressType } from './address.js'

const OVERHEAD_WU = 42
const P2WPKH_INPUT_WU = 272
const OUTPUT_VBYTES: Record<AddressType, number> = {
  p2wpkh: 31,
  p2wsh: 43,
  p2tr: 43,
  p2sh: 32,
  p2pkh: 34,
}

/** Whole vbytes (rounded up) of a 1-input send to `destType` with P2WPKH change. */
export function estimateSendVsize(destType: AddressType): number {
  const weight = OVERHEAD_WU + P2WPKH_INPUT_WU + 4 * OUTPUT_VBYTES[destType] + 4 * OUTPUT_VBYTES.p2wpkh
  return Math.ceil(weight / 4)
}

/**
 * Fee in sats for `vsize` vbytes at `feeRateSatPerVb`, rounded up so the rate is never undershot
 * (a fractional vsize is first rounded up to whole vbytes).
 */
export function networkFeeSats(feeRateSatPerVb: bigint, vsize: number): bigint {
  assert(feeRateSatPerVb >= 0n, 'fee rate must not be negative')
  assert(Number.isFinite(vsize) && vsize >= 0, 'vsize must be a non-negative number')
  return feeRateSatPerVb * BigInt(Math.ceil(vsize))
}
