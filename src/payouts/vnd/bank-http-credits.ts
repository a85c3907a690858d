/**
 * Incoming transfers on the bank rail (docs/payouts.md, "Incoming credits"): the partner's signed
 * credit notification, and its statement of credits (`GET /v1/credits?since=`), a page at a time.
 * Both become `BankCredit`s (src/payouts/vnd/bank-credit.ts).
 *
 * What a partner sends is read defensively: a listed credit without a usable id, amount, currency
 * or booking time is left out and reported (`skipped`, with its id only when that is a valid id),
 * never thrown, so one bad item cannot stop the statement from being read. A credit carries the
 * payer's name and account: nothing here logs, and no reported problem quotes a credit's fields.
 */
import { RailFailure, type RailPayment } from '../../rails/rail.js'
import type { BankCredit } from './bank-credit.js'
import type { BankHttpDeps } from './bank-http-deps.js'
import { parseObject, partnerSignedBody, type Json } from './bank-http-request.js'
import { PAYOUT_ID } from './bank-http-payouts.js'

/** Credits per page of `GET /v1/credits` (the partner's maximum). */
export const CREDIT_PAGE_SIZE = 200
/** The longest memo kept, in code points; a longer description is cut to it. */
export const MEMO_CHARS_MAX = 500
const AMOUNT = /^[1-9]\d{0,29}$/
const BANK_BIN = /^\d{6}$/
const ACCOUNT_NUMBER = /^[A-Za-z0-9]{1,34}$/
const PAYER_NAME_CHARS_MAX = 140
// Control characters (NUL cannot be stored in a PostgreSQL text column) and line or bidi overrides.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/** Why a listed item was left out: the field at fault, and the partner's id when it is a valid one. */
export interface SkippedCredit {
  id?: string
  problem: 'not_an_object' | 'id' | 'amount' | 'currency' | 'booked_at' | 'description'
}

export interface CreditPage {
  credits: BankCredit[]
  skipped: SkippedCredit[]
  /** Send back as `cursor` (with the same `since`) for the next page; null on the last page. */
  nextCursor: string | null
}

/** What a credit notification held: the credit, or why it is refused. */
export type CreditNotice =
  | { ok: true; credit: BankCredit }
  | { ok: false; error: 'unauthorized' }
  | { ok: false; error: 'malformed'; problem: SkippedCredit['problem'] | 'type'; id?: string }

/** A partner's credit (a notification body or a listed item) as a `BankCredit`, or why not. */
export function readCredit(value: unknown): BankCredit | SkippedCredit {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'not_an_object' }
  const item = value as Json
  if (typeof item.id !== 'string' || !PAYOUT_ID.test(item.id)) return { problem: 'id' }
  const id = item.id
  if (typeof item.amount !== 'string' || !AMOUNT.test(item.amount)) return { id, problem: 'amount' }
  if (item.currency !== 'VND') return { id, problem: 'currency' }
  const bookedAt = item.bookedAt
  if (typeof bookedAt !== 'number' || !Number.isSafeInteger(bookedAt) || bookedAt < 0)
    return { id, problem: 'booked_at' }
  // A transfer without a description is still money in: it is kept with an empty memo.
  const description = item.description ?? ''
  if (typeof description !== 'string') return { id, problem: 'description' }
  const credit: BankCredit = {
    bankRef: id,
    amountMinor: BigInt(item.amount),
    memo: printable(description, MEMO_CHARS_MAX),
    bookedAtMs: bookedAt,
  }
  const payer = readPayer(item.payer)
  if (payer) credit.payer = payer
  return credit
}

/** The payer's details the partner gave, each kept only when it is well formed. */
function readPayer(value: unknown): BankCredit['payer'] | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const p = value as Json
  const payer: NonNullable<BankCredit['payer']> = {}
  if (typeof p.bankBin === 'string' && BANK_BIN.test(p.bankBin)) payer.bankBin = p.bankBin
  if (typeof p.accountNumber === 'string' && ACCOUNT_NUMBER.test(p.accountNumber))
    payer.accountNumber = p.accountNumber
  if (typeof p.name === 'string') {
    const name = printable(p.name, PAYER_NAME_CHARS_MAX).trim()
    if (name) payer.name = name
  }
  return Object.keys(payer).length > 0 ? payer : undefined
}

/** Unprintable characters become spaces, and the text is cut to `max` code points. */
function printable(text: string, max: number): string {
  const chars = [...text.replace(UNPRINTABLE, ' ')]
  return chars.length > max ? chars.slice(0, max).join('') : chars.join('')
}

function isCredit(read: BankCredit | SkippedCredit): read is BankCredit {
  return 'bankRef' in read
}

/** `BankHttpRail.verifyCredit`: a signed credit notification (`type: "credit"`) as a credit. */
export function verifyCredit(
  deps: BankHttpDeps,
  rawBody: string | Uint8Array,
  signature: string | undefined,
): CreditNotice {
  const body = partnerSignedBody(deps.config.webhookSecret, rawBody, signature)
  if (!body) return { ok: false, error: 'unauthorized' }
  const json = parseObject(body.toString('utf8'))
  if (json?.type !== 'credit') return { ok: false, error: 'malformed', problem: 'type' }
  const read = readCredit(json)
  return isCredit(read)
    ? { ok: true, credit: read }
    : { ok: false, error: 'malformed', problem: read.problem, ...(read.id ? { id: read.id } : {}) }
}

/** `BankHttpRail.listCredits`: one page of the credits booked at or after `sinceMs`, oldest first. */
export async function listCredits(
  deps: BankHttpDeps,
  sinceMs: number,
  cursor: string | null,
): Promise<CreditPage> {
  const query = new URLSearchParams({
    since: String(Math.max(0, Math.floor(sinceMs))),
    limit: String(CREDIT_PAGE_SIZE),
  })
  if (cursor !== null) {
    if (!PAYOUT_ID.test(cursor)) throw new RailFailure('invalid_cursor', 'not a partner cursor', false)
    query.set('cursor', cursor)
  }
  const { status, json } = await deps.request('GET', `/v1/credits?${query}`)
  if (status !== 200 || !Array.isArray(json?.data))
    throw new RailFailure(
      `bank_http_${status}`,
      `GET /v1/credits answered HTTP ${status} without a list`,
      true,
    )
  const page: CreditPage = { credits: [], skipped: [], nextCursor: null }
  for (const item of json.data as unknown[]) {
    const read = readCredit(item)
    if (isCredit(read)) page.credits.push(read)
    else page.skipped.push(read)
  }
  const next = json.nextCursor
  if (next !== null && next !== undefined) {
    if (typeof next !== 'string' || !PAYOUT_ID.test(next))
      throw new RailFailure('bank_bad_response', 'GET /v1/credits answered a malformed nextCursor', true)
    page.nextCursor = next
  }
  return page
}

/** How far before the matching window the statement is read: a credit booked just before it may be credited inside it. */
const CREDITS_LOOKBACK_MS = 2 * 86_400_000
const CREDIT_PAGES_MAX = 50

/**
 * The credits of the statement since `sinceMs` (less CREDITS_LOOKBACK_MS) as payments into the
 * rail, for reconciliation's item matching (docs/reconciliation.md): the statement is the rail's
 * truth for money in. A listed item that is not a usable Credit is left out (the poll keeps it for
 * operators). A partner without the statement (404) lists none, so that every credit it notified
 * shows as missing from it.
 */
export async function creditPayments(deps: BankHttpDeps, sinceMs: number): Promise<RailPayment[]> {
  const out: RailPayment[] = []
  let cursor: string | null = null
  const since = Math.max(0, sinceMs - CREDITS_LOOKBACK_MS)
  for (let page = 0; page < CREDIT_PAGES_MAX; page++) {
    let read: CreditPage
    try {
      read = await listCredits(deps, since, cursor)
    } catch (err) {
      if (err instanceof RailFailure && err.code === 'bank_http_404' && cursor === null) return out
      throw err
    }
    for (const c of read.credits)
      out.push({ ref: c.bankRef, direction: 'in', amountMinor: c.amountMinor, at: c.bookedAtMs })
    if (read.nextCursor === null) return out
    cursor = read.nextCursor
  }
  throw new RailFailure(
    'bank_history_too_long',
    `more than ${CREDIT_PAGES_MAX * CREDIT_PAGE_SIZE} credits in the window: shorten it`,
    true,
  )
}
