/**
 * Amounts as Bitcoin Core's RPC writes and reads them: JSON numbers in BTC with eight decimals,
 * parsed from their source text (never through a float), and decimal strings we send. Also the
 * conversion of `estimatesmartfee`'s rate to what a send pays.
 */
import { normaliseDecimal } from '../../shared/amount.js'
import { TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure } from '../../rails/rail.js'

const SATS_PER_BTC = 100_000_000n
/** `estimatesmartfee` accepts targets from 1 to 1008 blocks. */
const CONF_TARGET_MAX = 1008

const BTC_RE = /^(-)?(\d{1,8})(?:\.(\d{1,8}))?$/

/** A BTC amount (JSON number text, up to eight decimals) in satoshis, exactly. */
export function btcToSats(value: unknown): bigint {
  const text = typeof value === 'string' ? normaliseDecimal(value) : null
  const m = text === null ? null : BTC_RE.exec(text)
  if (!m) throw new RailFailure(TRANSPORT_CODES.badResponse, `not a BTC amount: ${String(value)}`, true)
  const sats = BigInt(m[2]!) * SATS_PER_BTC + BigInt((m[3] ?? '').padEnd(8, '0'))
  return m[1] ? -sats : sats
}

/** Satoshis as BTC decimal text with eight decimals, as the RPC's amount arguments accept. */
export function satsToBtcText(sats: bigint): string {
  const sign = sats < 0n ? '-' : ''
  const abs = sats < 0n ? -sats : sats
  return `${sign}${abs / SATS_PER_BTC}.${(abs % SATS_PER_BTC).toString().padStart(8, '0')}`
}

/** A confirmation target in blocks as `estimatesmartfee` accepts it: whole, from 1 to 1008. */
export function confTarget(targetBlocks: number): number {
  return Math.min(Math.max(Math.trunc(targetBlocks), 1), CONF_TARGET_MAX)
}

/** `estimatesmartfee`'s `feerate` (BTC per 1000 vB) as whole sat/vB, at least 1. */
export function satsPerVbOfFeerate(feerate: unknown): bigint {
  // BTC per 1000 vB -> sat per 1000 vB -> sat per vB, rounded up so a send never pays below it.
  const satsPerKvb = btcToSats(feerate)
  const satsPerVb = (satsPerKvb + 999n) / 1000n
  return satsPerVb < 1n ? 1n : satsPerVb
}
