/**
 * How the service spells a Bitcoin address it stores or compares. It stands in src/shared because
 * the engine's request hash compares addresses in this spelling as well as the on-chain flow, and
 * the engine imports no flow. The checks of an address from outside stay in src/onchain/address.ts.
 */

/** The human-readable parts of the segwit addresses of the networks the service runs on. */
export const BECH32_HRPS: readonly string[] = ['bc', 'tb', 'bcrt']

/**
 * The stored spelling of an address that is already known to be valid (one of ours, or one a node
 * reports): an all-upper-case bech32 address in lower case, anything else unchanged. For input from
 * outside use `validateAddress`, which also refuses what is not an address.
 */
export function canonicalAddress(text: string): string {
  const lower = text.toLowerCase()
  const separator = lower.lastIndexOf('1')
  const segwit = separator > 0 && BECH32_HRPS.includes(lower.slice(0, separator))
  return segwit && text === text.toUpperCase() ? lower : text
}
