/**
 * The real VND rail: bank payouts through a payout partner over HTTP. There is no public standard
 * for this, so we define the partner API ourselves (docs/payouts.md, "Bank payout partner API") and
 * a partner, or a small bridge in front of one, implements it:
 *
 * - `POST /v1/payouts` with `Idempotency-Key: <requestId>` creates a payout; a repeated key answers
 *   409 with the payout that key created, so a retry never pays twice.
 * - `GET /v1/payouts/{id}` reads one.
 * - Optionally the partner notifies us of changes, signed with HMAC-SHA256 under a shared secret.
 *
 * The request carries the beneficiary's personal data (name, account number). It goes to the
 * partner and nowhere else: no failure message built here quotes it, and nothing here logs.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { assert } from '../../shared/assert.js'
import { RailFailure, type BankPayoutRail, type PayoutState } from '../rail.js'

export interface BankHttpConfig {
  /** The partner's base URL, e.g. `https://payouts.partner.example`. */
  url: string
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string
  /** The shared secret the partner signs notifications with; without it notifications are refused. */
  webhookSecret?: string
  /** Per HTTP request, body included. Default 15 s. */
  timeoutMs?: number
}

export interface BankHttpRail extends BankPayoutRail {
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
/** Partner ids go into a URL path; anything outside this alphabet is refused rather than escaped blindly. */
const PAYOUT_ID = /^[A-Za-z0-9._:-]{1,128}$/
const REASON_CODE = /^[a-z0-9_]{1,64}$/

type PartnerStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'rejected'
const STATUSES: ReadonlySet<string> = new Set<PartnerStatus>([
  'pending',
  'processing',
  'completed',
  'failed',
  'rejected',
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

  async function request(
    method: 'GET' | 'POST',
    path: string,
    body?: Json,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: number; json: Json | undefined }> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Bearer ${config.apiKey}`,
      ...extraHeaders,
    }
    if (body) headers['content-type'] = 'application/json'
    try {
      const res = await fetch(baseUrl + path, {
        method,
        headers,
        body: body ? JSON.stringify(body) : undefined,
        redirect: 'error',
        signal: AbortSignal.timeout(timeoutMs),
      })
      const text = await readCapped(res, RESPONSE_BYTES_MAX)
      return { status: res.status, json: parseObject(text) }
    } catch (err) {
      if (err instanceof RailFailure) throw err
      if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
        throw new RailFailure('bank_timeout', `${method} ${path} did not answer within ${timeoutMs} ms`, true)
      throw new RailFailure('bank_unreachable', `${method} ${path}: ${(err as Error).message}`, true)
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

async function readCapped(res: Response, bytesMax: number): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.length
    if (total > bytesMax) {
      await reader.cancel()
      throw new RailFailure('bank_bad_response', `answer larger than ${bytesMax} bytes`, true)
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}
