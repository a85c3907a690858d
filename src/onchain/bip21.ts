/**
 * BIP21 payment URIs: `bitcoin:<address>?amount=<BTC>&label=…&message=…`.
 * https://github.com/bitcoin/bips/blob/master/bip-0021.mediawiki
 */
import { assert } from '../shared/assert.js'

export interface Bip21Fields {
  address: string
  /**
   * Amount in BTC as exact decimal text (at most 8 decimals, no exponent), e.g. `'0.00012'`; kept as
   * text so no float ever touches the amount. Omitted from the URI when absent.
   */
  amountBtc?: string
  label?: string
  message?: string
}

/** BIP21 amounts are decimal BTC with a period; at most 8 decimals because a satoshi is indivisible. */
const AMOUNT_BTC_PATTERN = /^(0|[1-9][0-9]{0,7})(\.[0-9]{1,8})?$/

/** Builds the URI. Inputs come from our own code, so a malformed amount is a bug and throws. */
export function buildBip21({ address, amountBtc, label, message }: Bip21Fields): string {
  assert(/^[a-zA-Z0-9]+$/.test(address), 'BIP21 address must be alphanumeric')
  const params: string[] = []
  if (amountBtc !== undefined) {
    assert(AMOUNT_BTC_PATTERN.test(amountBtc), `BIP21 amount must be decimal BTC text: ${amountBtc}`)
    params.push(`amount=${amountBtc}`)
  }
  // encodeURIComponent percent-encodes every reserved character (RFC 3986), spaces as %20, not '+'.
  if (label !== undefined) params.push(`label=${encodeURIComponent(label)}`)
  if (message !== undefined) params.push(`message=${encodeURIComponent(message)}`)
  return `bitcoin:${address}${params.length > 0 ? '?' + params.join('&') : ''}`
}

/** Decimal BTC text for an amount in satoshis, with trailing zeros trimmed: 12_000n -> '0.00012'. */
export function satsToBtcText(amountSats: bigint): string {
  assert(amountSats >= 0n, 'amount must not be negative')
  const whole = amountSats / 100_000_000n
  const fraction = (amountSats % 100_000_000n).toString().padStart(8, '0').replace(/0+$/, '')
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`
}
