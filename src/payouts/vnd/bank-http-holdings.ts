/**
 * What the bank rail reads of the partner's books: the float it holds for us (`GET /v1/balance`),
 * the payouts made since a time (`GET /v1/payouts?since=`), and the health check built on them.
 */
import { formatMinor } from '../../shared/amount.js'
import { RailFailure, type RailCheckReport, type RailPayment, type RailReserves } from '../../rails/rail.js'
import type { BankHttpDeps } from './bank-http-deps.js'
import type { BankAnswer, Json } from './bank-http-request.js'
import { partnerErrorCode, PAYOUT_ID, readPayout } from './bank-http-payouts.js'

/** Payouts per page of GET /v1/payouts, and pages read at most in one listing. */
const LIST_PAGE_SIZE = 200
const LIST_PAGES_MAX = 50

/** The VND balance of a `GET /v1/balance` answer, or null when it shows none. */
export function vndBalance(json: Json | undefined): bigint | null {
  const available = json?.available
  if ((json?.currency ?? 'VND') !== 'VND' || typeof available !== 'string' || !/^-?\d{1,30}$/.test(available))
    return null
  return BigInt(available)
}

export async function checkBankHttp(deps: BankHttpDeps): Promise<RailCheckReport> {
  const { config } = deps
  const report: RailCheckReport = { rail: 'bank', adapter: 'bank-http', reachable: false, problems: [] }
  if (!config.signingSecret)
    report.problems.push('BANK_PAYOUT_SIGNING_SECRET is not set: requests to the partner go unsigned')
  if (!config.webhookSecret)
    report.problems.push(
      'BANK_PAYOUT_WEBHOOK_SECRET is not set: partner notifications are refused, so a payout returned after completion goes unnoticed',
    )
  let answer: BankAnswer
  try {
    answer = await deps.request('GET', '/v1/balance')
  } catch (err) {
    const code = err instanceof RailFailure ? err.code : 'bank_unreachable'
    report.problems.unshift(`the bank partner did not answer (${code})`)
    return report
  }
  report.reachable = true
  const { status, json } = answer
  const errorCode = partnerErrorCode(json)
  const code = errorCode === undefined ? '' : `: ${errorCode}`
  if (status === 401 || status === 403) {
    report.problems.unshift(`the bank partner refused our credentials (HTTP ${status}${code})`)
  } else if (status === 200) {
    const balance = vndBalance(json)
    if (balance !== null) report.balances = { VND: formatMinor(balance, 'VND') }
    else report.problems.unshift('the bank partner answered GET /v1/balance without a VND balance')
  } else if (status === 404) {
    // The partner authenticates before it routes: a 404 means our key and signature passed and
    // it keeps no balance to show.
  } else {
    report.problems.unshift(`GET /v1/balance answered HTTP ${status}${code}`)
  }
  return report
}

/** `BankPayoutRail.reserves`. */
export async function bankReserves(deps: BankHttpDeps): Promise<RailReserves> {
  const { status, json } = await deps.request('GET', '/v1/balance')
  if (status === 404)
    throw new RailFailure(
      'bank_no_balance',
      'the bank partner shows no balance (GET /v1/balance is 404)',
      true,
    )
  if (status !== 200)
    throw new RailFailure(`bank_http_${status}`, `GET /v1/balance answered HTTP ${status}`, true)
  const balance = vndBalance(json)
  if (balance === null)
    throw new RailFailure('bank_bad_response', 'GET /v1/balance answered without a VND balance', true)
  // A bank transfer is final once the partner accepts it: nothing is on its way in.
  return { balances: { VND: balance }, incoming: { VND: 0n } }
}

/** `BankPayoutRail.payments`: the completed payouts since `sinceMs`, a page at a time. */
export async function bankPayments(deps: BankHttpDeps, sinceMs: number): Promise<RailPayment[]> {
  const out: RailPayment[] = []
  let cursor: string | null = null
  for (let page = 0; page < LIST_PAGES_MAX; page++) {
    const query = new URLSearchParams({
      since: String(Math.max(0, Math.floor(sinceMs))),
      limit: String(LIST_PAGE_SIZE),
    })
    if (cursor !== null) query.set('cursor', cursor)
    const path = `/v1/payouts?${query}`
    const { status, json } = await deps.request('GET', path)
    if (status !== 200 || !Array.isArray(json?.data))
      throw new RailFailure(
        `bank_http_${status}`,
        `GET /v1/payouts answered HTTP ${status} without a list`,
        true,
      )
    for (const item of json.data as unknown[]) {
      const payment = listedPayment(item)
      if (payment) out.push(payment)
    }
    const next = json.nextCursor
    if (next === null || next === undefined) return out
    if (typeof next !== 'string' || !PAYOUT_ID.test(next))
      throw new RailFailure('bank_bad_response', 'GET /v1/payouts answered a malformed nextCursor', true)
    cursor = next
  }
  throw new RailFailure(
    'bank_history_too_long',
    `more than ${LIST_PAGES_MAX * LIST_PAGE_SIZE} payouts in the window: shorten it`,
    true,
  )
}

/** One listed payout as money that left, or null when it moved nothing; a malformed one is refused. */
export function listedPayment(item: unknown): RailPayment | null {
  const payout = readPayout(item)
  const createdAt = (item as Json).createdAt
  if (
    !payout ||
    payout.amount === undefined ||
    !/^\d{1,30}$/.test(payout.amount) ||
    !Number.isSafeInteger(createdAt)
  )
    throw new RailFailure(
      'bank_bad_response',
      'GET /v1/payouts listed a payout without id, amount or time',
      true,
    )
  // Only money that left and stayed gone: a payout refused, failed or sent back moved nothing.
  if (payout.status !== 'completed') return null
  return { ref: payout.id, direction: 'out', amountMinor: BigInt(payout.amount), at: createdAt as number }
}
