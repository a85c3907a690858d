/** Output descriptor checksum (BIP 380): a BCH code over the descriptor's characters, in groups. */
import { RailFailure } from '../../rails/rail.js'

const INPUT_CHARSET =
  '0123456789()[],\'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#"\\ '
const CHECKSUM_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
const GENERATOR = [0xf5dee51989n, 0xa9fdca3312n, 0x1bab10e32dn, 0x3706b1677an, 0x644d626ffdn]

function polymod(c: bigint, value: number): bigint {
  const top = c >> 35n
  let next = ((c & 0x7ffffffffn) << 5n) ^ BigInt(value)
  for (let i = 0; i < 5; i++) if ((top >> BigInt(i)) & 1n) next ^= GENERATOR[i]!
  return next
}

/** The eight-character checksum Bitcoin Core expects after `#` on an imported descriptor. */
export function descriptorChecksum(descriptor: string): string {
  let c = 1n
  let group = 0
  let groupCount = 0
  for (const ch of descriptor) {
    const pos = INPUT_CHARSET.indexOf(ch)
    if (pos < 0)
      throw new RailFailure('invalid_descriptor', `descriptor has an invalid character ${ch}`, false)
    // Each character feeds its low five bits, and every three characters their high bits as one symbol.
    c = polymod(c, pos & 31)
    group = group * 3 + (pos >> 5)
    if (++groupCount === 3) {
      c = polymod(c, group)
      group = 0
      groupCount = 0
    }
  }
  if (groupCount > 0) c = polymod(c, group)
  for (let i = 0; i < 8; i++) c = polymod(c, 0)
  c ^= 1n
  let out = ''
  for (let i = 0; i < 8; i++) out += CHECKSUM_CHARSET[Number((c >> BigInt(5 * (7 - i))) & 31n)]
  return out
}

/** The descriptor with its checksum, as `importdescriptors` takes it. */
export function withChecksum(descriptor: string): string {
  return `${descriptor}#${descriptorChecksum(descriptor)}`
}
