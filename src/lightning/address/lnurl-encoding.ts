import { bech32 } from '@scure/base'
import { utf8ToBytes } from '@noble/hashes/utils.js'

/**
 * LUD-01: an LNURL is the bech32 encoding (human-readable part `lnurl`, no checksum variant change)
 * of a URL's UTF-8 bytes. LUD-01 lifts bech32's 90-character limit, and asks for upper case in a QR
 * code (the alphanumeric mode is denser), so `encodeLnurl(url).toUpperCase()` goes in the QR.
 */
export function encodeLnurl(url: string): string {
  return bech32.encode('lnurl', bech32.toWords(utf8ToBytes(url)), false)
}

/** The URL an LNURL encodes (either case), or undefined when it is not one. */
export function decodeLnurl(text: string): string | undefined {
  try {
    const { prefix, words } = bech32.decode(text.toLowerCase() as `${string}1${string}`, false)
    if (prefix !== 'lnurl') return undefined
    return new TextDecoder('utf-8', { fatal: true }).decode(bech32.fromWords(words))
  } catch {
    return undefined
  }
}
