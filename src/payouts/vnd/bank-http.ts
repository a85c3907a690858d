/**
 * The real VND rail: bank payouts through a payout partner over HTTP. There is no public standard
 * for this, so we define the partner API ourselves (docs/payouts.md, "Bank payout partner API") and
 * a partner, or a small bridge in front of one, implements it:
 *
 * - `POST /v1/payouts` with `Idempotency-Key: <requestId>` creates a payout; a repeated key answers
 *   409 with the payout that key created, so a retry never pays twice.
 * - `GET /v1/payouts/{id}` reads one.
 * - `GET /v1/balance` (optional) tells the float the partner holds for us.
 * - `GET /v1/payouts?since=` (for reconciliation) lists the payouts made since a time, a page at a time.
 * - Optionally the partner notifies us of changes, signed with HMAC-SHA256 under a shared secret.
 * - With a signing secret, every request we send is signed the same way, over a timestamp, the
 *   method, the path and the body (`signRequest`), so that the partner can refuse a forged or
 *   replayed request even from someone who holds the API key.
 * - A payout the beneficiary's bank sends back after `completed` reads `returned` (or `reversed`):
 *   reported as the state `reversed`, and the payout flow gives the money back.
 *
 * The request carries the beneficiary's personal data (name, account number). It goes to the
 * partner and nowhere else: no failure message built here quotes it, and nothing here logs.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { assert } from '../../shared/assert.js'
import { formatMinor } from '../../shared/amount.js'
import {
  httpRequest,
  renameTransportFailure,
  TRANSPORT_CODES,
  type TransportCode,
} from '../../rails/http-json.js'
import {
  RailFailure,
  type BankPayoutRail,
  type PayoutState,
  type RailCheckReport,
  type RailPayment,
  type RailReserves,
} from '../../rails/rail.js'

export interface BankHttpConfig {
  /** The partner's base URL, e.g. `https://payouts.partner.example`. */
  url: string
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string
  /** The shared secret the partner signs notifications with; without it notifications are refused. */
  webhookSecret?: string
  /**
   * The shared secret our requests are signed with (`X-Svcpay-Timestamp`, `X-Svcpay-Signature`);
   * without it requests go unsigned and `check()` reports that as a problem. Never logged.
   */
  signingSecret?: string
  /** Per HTTP request, body included. Default 15 s. */
  timeoutMs?: number
  /** The clock the signatures' timestamps are read from (tests). */
  now?: () => number
}

/** The headers of a signed request (docs/payouts.md, "Request signing"). */
export const SIGNATURE_HEADER = 'x-svcpay-signature'
export const TIMESTAMP_HEADER = 'x-svcpay-timestamp'
/** How far a signed request's timestamp may be from the partner's clock before it is refused. */
export const SIGNATURE_MAX_AGE_MS = 5 * 60_000

/**
 * The signature of one request: lowercase hex HMAC-SHA256, under the signing secret, of
 * `<timestamp>.<METHOD>.<path>.<body>`, where the timestamp is epoch milliseconds as sent in
 * `X-Svcpay-Timestamp`, the path includes any query, and the body is the exact bytes sent (empty
 * for a GET). The partner recomputes it over what it received.
 */
export function signRequest(
  secret: string,
  timestamp: string,
  method: string,
  path: string,
  body: string | Uint8Array,
): string {
  return createHmac('sha256', secret)
    .update(`${timestamp}.${method.toUpperCase()}.${path}.`)
    .update(body)
    .digest('hex')
}

export interface BankHttpRail extends BankPayoutRail {
  /** Reachability, whether the partner accepts our key and signature, and its balance if it shows one. */
  check(): Promise<RailCheckReport>
  /**
   * Checks a partner notification: `signature` is the `X-Partner-Signature` header, the lowercase
   * hex HMAC-SHA256 of the exact body bytes. Returns the payout it concerns, or null when the
   * signature or body is wrong. A notification is only a hint: read the payout with `getPayout`,
   * so a replayed or reordered notification can never move a payout to a wrong state.
   */
  verifyNotification(rawBody: string | Uint8Array, signature: string | undefined): { bankRef: string } | null
}

export const BANK_TIMEOUT_MS_DEFAULT = 15_000
const TIMEOUT_MS_MAX = 60_000
/** A payout is a few hundred bytes; a partner answering more than this is broken. */
const RESPONSE_BYTES_MAX = 256 * 1024
const NOTIFICATION_BYTES_MAX = 64 * 1024
/**
 * Our codes for a request that got no usable answer (the codes `httpRequest` raises). A redirect
 * is refused as unreachable; what an answer's status means is decided by each operation.
 */
const NO_ANSWER: Record<TransportCode, string> = {
  [TRANSPORT_CODES.timeout]: 'bank_timeout',
  [TRANSPORT_CODES.unreachable]: 'bank_unreachable',
  [TRANSPORT_CODES.tls]: 'bank_unreachable',
  [TRANSPORT_CODES.tooLarge]: 'bank_bad_response',
}
/** Partner ids go into a URL path; anything outside this alphabet is refused rather than escaped blindly. */
const PAYOUT_ID = /^[A-Za-z0-9._:-]{1,128}$/
const REASON_CODE = /^[a-z0-9_]{1,64}$/
/** Payouts per page of GET /v1/payouts, and pages read at most in one listing. */
const LIST_PAGE_SIZE = 200
const LIST_PAGES_MAX = 50

type PartnerStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'rejected' | 'returned' | 'reversed'
const STATUSES: ReadonlySet<string> = new Set<PartnerStatus>([
  'pending',
  'processing',
  'completed',
  'failed',
  'rejected',
  'returned',
  'reversed',
])

interface PartnerPayout {
  id: string
  status: PartnerStatus
  reason?: string
  amount?: string
  currency?: string
}

type Json = Record<string, unknown>

export function createBankHttpRail(config: BankHttpConfig): BankHttpRail {
  const baseUrl = config.url.replace(/\/+$/, '')
  assert(/^https?:\/\//.test(baseUrl), 'BANK_PAYOUT_URL must be an http(s) URL')
  assert(config.apiKey.length > 0, 'BANK_PAYOUT_API_KEY is required')
  const timeoutMs = config.timeoutMs ?? BANK_TIMEOUT_MS_DEFAULT
  assert(timeoutMs > 0 && timeoutMs <= TIMEOUT_MS_MAX, `timeoutMs must be in (0, ${TIMEOUT_MS_MAX}]`)
  const now = config.now ?? Date.now

  async function request(
    method: 'GET' | 'POST',
    path: string,
    body?: Json,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: number; json: Json | undefined }> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${config.apiKey}`,
      ...extraHeaders,
    }
    if (body) headers['content-type'] = 'application/json'
    // These bytes are both signed and sent: the partner checks the signature over what it received.
    const sent = body ? Buffer.from(JSON.stringify(body), 'utf8') : undefined
    if (config.signingSecret) {
      const timestamp = String(now())
      headers[TIMESTAMP_HEADER] = timestamp
      headers[SIGNATURE_HEADER] = signRequest(config.signingSecret, timestamp, method, path, sent ?? '')
    }
    try {
      const res = await httpRequest({
        url: baseUrl + path,
        method,
        headers,
        body: sent,
        timeoutMs,
        responseBytesMax: RESPONSE_BYTES_MAX,
        label: `${method} ${path}`,
        refuseRedirects: true,
      })
      return { status: res.status, json: parseObject(res.text) }
    } catch (err) {
      throw renameTransportFailure(err, NO_ANSWER)
    }
  }

  return {
    name: 'bank-http',

    async submitPayout(input) {
      assert(input.requestId.length > 0, 'a payout needs a requestId')
      assert(input.ccy === 'VND', 'the bank rail pays VND only')
      if (input.amountMinor <= 0n)
        throw new RailFailure('invalid_amount', 'a payout must move a positive amount', false)
      const amount = input.amountMinor.toString()
      const { status, json } = await request(
        'POST',
        '/v1/payouts',
        {
          amount,
          currency: 'VND',
          beneficiary: {
            accountNumber: input.bankAcctNum,
            bankBin: input.institutionCode,
            name: input.beneficiary.legalFullName,
            country: input.beneficiary.countryCode,
            type: input.beneficiary.type,
          },
          purposeCode: input.sourceOfFunds.purpose,
          sourceCode: input.sourceOfFunds.source,
          relationshipCode: input.sourceOfFunds.relationship,
        },
        { 'idempotency-key': input.requestId },
      )

      let payout: PartnerPayout | undefined
      if (status === 200 || status === 201) payout = readPayout(json)
      else if (status === 409) {
        // The key was used before: the partner hands back the payout that key created.
        payout = readPayout(json?.payout)
      } else if (status === 400 || status === 422) {
        // Only the partner's error code is kept: its free text may quote the beneficiary's data.
        const code = typeof json?.error === 'string' && REASON_CODE.test(json.error) ? json.error : 'invalid'
        throw new RailFailure('rejected', `the bank partner refused the payout: ${code}`, false)
      } else {
        throw new RailFailure(`bank_http_${status}`, `POST /v1/payouts answered HTTP ${status}`, true)
      }
      if (!payout)
        throw new RailFailure(
          'bank_bad_response',
          `POST /v1/payouts answered ${status} without a payout`,
          true,
        )
      // A payout under our key that moves another amount means a key was reused for a different
      // request: the funds stay held and an operator has to look, so this is retryable, not final.
      if ((payout.amount !== undefined && payout.amount !== amount) || (payout.currency ?? 'VND') !== 'VND')
        throw new RailFailure(
          'bank_request_conflict',
          `payout ${payout.id} does not match request ${input.requestId}`,
          true,
        )
      return { bankRef: payout.id }
    },

    async getPayout(bankRef): Promise<PayoutState> {
      if (!PAYOUT_ID.test(bankRef))
        throw new RailFailure('invalid_bank_ref', 'not a partner payout id', false)
      const path = `/v1/payouts/${encodeURIComponent(bankRef)}`
      const { status, json } = await request('GET', path)
      if (status === 404)
        // The partner gave us this id; forgetting it is the partner's fault, and money may have moved.
        throw new RailFailure('bank_payout_unknown', `the bank partner does not know payout ${bankRef}`, true)
      if (status !== 200)
        throw new RailFailure(`bank_http_${status}`, `GET ${path} answered HTTP ${status}`, true)
      const payout = readPayout(json)
      if (!payout || payout.id !== bankRef)
        throw new RailFailure('bank_bad_response', `GET ${path} answered without that payout`, true)
      return toState(payout)
    },

    async check(): Promise<RailCheckReport> {
      const report: RailCheckReport = { rail: 'bank', adapter: 'bank-http', reachable: false, problems: [] }
      if (!config.signingSecret)
        report.problems.push('BANK_PAYOUT_SIGNING_SECRET is not set: requests to the partner go unsigned')
      if (!config.webhookSecret)
        report.problems.push(
          'BANK_PAYOUT_WEBHOOK_SECRET is not set: partner notifications are refused, so a payout returned after completion goes unnoticed',
        )
      let answer: { status: number; json: Json | undefined }
      try {
        answer = await request('GET', '/v1/balance')
      } catch (err) {
        const code = err instanceof RailFailure ? err.code : 'bank_unreachable'
        report.problems.unshift(`the bank partner did not answer (${code})`)
        return report
      }
      report.reachable = true
      const { status, json } = answer
      const code = typeof json?.error === 'string' && REASON_CODE.test(json.error) ? `: ${json.error}` : ''
      if (status === 401 || status === 403) {
        report.problems.unshift(`the bank partner refused our credentials (HTTP ${status}${code})`)
      } else if (status === 200) {
        const available = json?.available
        if (
          (json?.currency ?? 'VND') === 'VND' &&
          typeof available === 'string' &&
          /^-?\d{1,30}$/.test(available)
        )
          report.balances = { VND: formatMinor(BigInt(available), 'VND') }
        else report.problems.unshift('the bank partner answered GET /v1/balance without a VND balance')
      } else if (status === 404) {
        // The partner authenticates before it routes: a 404 means our key and signature passed and
        // it keeps no balance to show.
      } else {
        report.problems.unshift(`GET /v1/balance answered HTTP ${status}${code}`)
      }
      return report
    },

    async reserves(): Promise<RailReserves> {
      const { status, json } = await request('GET', '/v1/balance')
      if (status === 404)
        throw new RailFailure(
          'bank_no_balance',
          'the bank partner shows no balance (GET /v1/balance is 404)',
          true,
        )
      if (status !== 200)
        throw new RailFailure(`bank_http_${status}`, `GET /v1/balance answered HTTP ${status}`, true)
      const available = json?.available
      if (
        (json?.currency ?? 'VND') !== 'VND' ||
        typeof available !== 'string' ||
        !/^-?\d{1,30}$/.test(available)
      )
        throw new RailFailure('bank_bad_response', 'GET /v1/balance answered without a VND balance', true)
      // A bank transfer is final once the partner accepts it: nothing is on its way in.
      return { balances: { VND: BigInt(available) }, incoming: { VND: 0n } }
    },

    async payments(sinceMs): Promise<RailPayment[]> {
      const out: RailPayment[] = []
      let cursor: string | null = null
      for (let page = 0; page < LIST_PAGES_MAX; page++) {
        const query = new URLSearchParams({
          since: String(Math.max(0, Math.floor(sinceMs))),
          limit: String(LIST_PAGE_SIZE),
        })
        if (cursor !== null) query.set('cursor', cursor)
        const path = `/v1/payouts?${query}`
        const { status, json } = await request('GET', path)
        if (status !== 200 || !Array.isArray(json?.data))
          throw new RailFailure(
            `bank_http_${status}`,
            `GET /v1/payouts answered HTTP ${status} without a list`,
            true,
          )
        for (const item of json.data as unknown[]) {
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
          if (payout.status !== 'completed') continue
          out.push({
            ref: payout.id,
            direction: 'out',
            amountMinor: BigInt(payout.amount),
            at: createdAt as number,
          })
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
    },

    verifyNotification(rawBody, signature) {
      if (!config.webhookSecret || typeof signature !== 'string') return null
      const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody)
      if (body.length > NOTIFICATION_BYTES_MAX || !/^[0-9a-f]{64}$/.test(signature)) return null
      const expected = createHmac('sha256', config.webhookSecret).update(body).digest()
      if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return null
      const payout = readPayout(parseObject(body.toString('utf8')))
      return payout ? { bankRef: payout.id } : null
    },
  }
}

function toState(payout: PartnerPayout): PayoutState {
  switch (payout.status) {
    case 'pending':
    case 'processing':
      return { status: 'pending' }
    case 'completed':
      return { status: 'completed' }
    case 'failed':
      return { status: 'failed', reason: reasonOf(payout, 'bank_failed') }
    case 'rejected':
      return { status: 'rejected', reason: reasonOf(payout, 'bank_rejected') }
    case 'returned':
    case 'reversed':
      return { status: 'reversed', reason: reasonOf(payout, 'returned_by_bank') }
  }
}

/** The reason becomes the transaction's `msg`, shown to the customer: only a short code passes. */
function reasonOf(payout: PartnerPayout, fallback: string): string {
  return payout.reason !== undefined && REASON_CODE.test(payout.reason) ? payout.reason : fallback
}

function readPayout(value: unknown): PartnerPayout | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const item = value as Json
  if (typeof item.id !== 'string' || !PAYOUT_ID.test(item.id)) return undefined
  if (typeof item.status !== 'string' || !STATUSES.has(item.status)) return undefined
  return {
    id: item.id,
    status: item.status as PartnerStatus,
    reason: typeof item.reason === 'string' ? item.reason : undefined,
    amount: typeof item.amount === 'string' ? item.amount : undefined,
    currency: typeof item.currency === 'string' ? item.currency : undefined,
  }
}

function parseObject(text: string): Json | undefined {
  if (text.length === 0) return undefined
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined
  } catch {
    return undefined
  }
}
