/**
 * The hot wallet's USDT transfers as TronGrid's v1 API lists them
 * (`GET /v1/accounts/{address}/transactions/trc20`), for reconciliation's item matching (issue 18).
 * java-tron itself keeps no index by account; TronGrid builds one from the contracts' events.
 *
 * What the API does, and what we rely on:
 * - `only_from=true` keeps transfers the account sent, `contract_address` one token's, `only_confirmed`
 *   those in solidified blocks (the reading every outcome here is based on), `min_timestamp` the
 *   block time from which to list (milliseconds), `order_by=block_timestamp,asc` oldest first.
 * - `limit` is at most 200 a page. A page that has a next one carries `meta.fingerprint`; the next
 *   page is asked with the same query plus `fingerprint`, nothing else changed.
 * - Each item is one Transfer event: `transaction_id`, `from` and `to` in base58, `value` the token's
 *   integer amount as text (USDT has 6 decimals), `block_timestamp` in ms, `token_info.address` the
 *   contract in base58. A transaction that moved USDT twice (Tether's fee to its owner, when it
 *   charges one) lists twice under one `transaction_id`: its amounts are summed.
 * - A bad request answers HTTP 400 `{success: false, error}`; a good one `{success: true, data, meta}`.
 */
import { RailFailure, type RailPayment } from '../../rails/rail.js'
import { v1Error, type Json } from './trongrid-http.js'
import { TX_HASH } from './trongrid-transaction.js'

/** Transfers per page: TronGrid's maximum. */
export const TRC20_PAGE_SIZE = 200
/** Pages read at most in one listing (10,000 transfers): beyond that the rail cannot say. */
export const TRC20_PAGES_MAX = 50
const VALUE = /^\d{1,78}$/

export interface Trc20Source {
  /** A GET of a TronGrid path with its query; throws RailFailure on transport or HTTP trouble. */
  get(pathWithQuery: string): Promise<Json>
  /** The hot wallet, base58. */
  wallet: string
  /** The USDT contract, base58. */
  contract: string
}

/** Every USDT transfer the hot wallet made in a solidified block since `sinceMs`, one per transaction. */
export async function trc20TransfersFrom(source: Trc20Source, sinceMs: number): Promise<RailPayment[]> {
  const query = new URLSearchParams({
    only_confirmed: 'true',
    only_from: 'true',
    contract_address: source.contract,
    min_timestamp: String(Math.max(0, Math.floor(sinceMs))),
    order_by: 'block_timestamp,asc',
    limit: String(TRC20_PAGE_SIZE),
  })
  const path = `/v1/accounts/${encodeURIComponent(source.wallet)}/transactions/trc20`
  const byTx = new Map<string, RailPayment>()
  let fingerprint: string | undefined
  for (let page = 0; page < TRC20_PAGES_MAX; page++) {
    const q = new URLSearchParams(query)
    if (fingerprint !== undefined) q.set('fingerprint', fingerprint)
    const answer = await source.get(`${path}?${q}`)
    if (answer.success !== true || !Array.isArray(answer.data))
      throw new RailFailure('tron_bad_response', `${path}: ${v1Error(JSON.stringify(answer))}`, true)
    for (const item of answer.data as Json[]) {
      const payment = readTransfer(item, source)
      if (!payment) continue
      const seen = byTx.get(payment.ref)
      if (seen) seen.amountMinor += payment.amountMinor
      else byTx.set(payment.ref, payment)
    }
    const next = (answer.meta as Json | undefined)?.fingerprint
    if (typeof next !== 'string' || next.length === 0) return [...byTx.values()]
    if (next.length > 512)
      throw new RailFailure('tron_bad_response', `${path}: a fingerprint of ${next.length} characters`, true)
    fingerprint = next
  }
  throw new RailFailure(
    'tron_history_too_long',
    `more than ${TRC20_PAGES_MAX * TRC20_PAGE_SIZE} transfers in the window: shorten it`,
    true,
  )
}

/** One listed transfer from the hot wallet of the configured token; anything else is not ours to count. */
function readTransfer(item: Json, source: Trc20Source): RailPayment | undefined {
  const token = (item.token_info ?? {}) as Json
  if (item.from !== source.wallet || token.address !== source.contract) return undefined
  if (item.type !== undefined && item.type !== 'Transfer') return undefined
  const txId = item.transaction_id
  const value = item.value
  const at = item.block_timestamp
  if (typeof txId !== 'string' || !TX_HASH.test(txId) || typeof value !== 'string' || !VALUE.test(value))
    throw new RailFailure('tron_bad_response', 'a TRC-20 transfer without a transaction id or value', true)
  if (typeof at !== 'number' || !Number.isSafeInteger(at))
    throw new RailFailure('tron_bad_response', `transfer ${txId} has no block time`, true)
  return { ref: txId, direction: 'out', amountMinor: BigInt(value), at }
}
