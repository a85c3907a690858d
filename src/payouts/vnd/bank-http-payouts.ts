/**
 * Payouts on the bank rail: one created under our request id as its idempotency key, one read
 * by the partner's id, a partner notification checked, and what the partner's payout says.
 */
import { assert } from '../../shared/assert.js'
import { RailFailure, type BankPayoutRail, type PayoutState } from '../../rails/rail.js'
import type { BankHttpDeps } from './bank-http-deps.js'
import { parseObject, partnerSignedBody, type Json } from './bank-http-request.js'

type PayoutInput = Parameters<BankPayoutRail['submitPayout']>[0]

/** Partner ids go into a URL path; anything outside this alphabet is refused rather than escaped blindly. */
export const PAYOUT_ID = /^[A-Za-z0-9._:-]{1,128}$/
const REASON_CODE = /^[a-z0-9_]{1,64}$/

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

export interface PartnerPayout {
  id: string
  status: PartnerStatus
  reason?: string
  amount?: string
  currency?: string
}

/** `BankPayoutRail.submitPayout`. */
export async function submitPayout(deps: BankHttpDeps, input: PayoutInput): Promise<{ bankRef: string }> {
  assert(input.requestId.length > 0, 'a payout needs a requestId')
  assert(input.ccy === 'VND', 'the bank rail pays VND only')
  if (input.amountMinor <= 0n)
    throw new RailFailure('invalid_amount', 'a payout must move a positive amount', false)
  const amount = input.amountMinor.toString()
  const { status, json } = await deps.request('POST', '/v1/payouts', payoutRequestBody(input), {
    'idempotency-key': input.requestId,
  })
  let payout: PartnerPayout | undefined
  if (status === 200 || status === 201) payout = readPayout(json)
  else if (status === 409) {
    // The key was used before: the partner hands back the payout that key created.
    payout = readPayout(json?.payout)
  } else if (status === 400 || status === 422) {
    // Only the partner's error code is kept: its free text may quote the beneficiary's data.
    throw new RailFailure(
      'rejected',
      `the bank partner refused the payout: ${partnerErrorCode(json) ?? 'invalid'}`,
      false,
    )
  } else {
    throw new RailFailure(`bank_http_${status}`, `POST /v1/payouts answered HTTP ${status}`, true)
  }
  if (!payout)
    throw new RailFailure('bank_bad_response', `POST /v1/payouts answered ${status} without a payout`, true)
  // A payout under our key that moves another amount means a key was reused for a different
  // request: the funds stay held and an operator has to look, so this is retryable, not final.
  if ((payout.amount !== undefined && payout.amount !== amount) || (payout.currency ?? 'VND') !== 'VND')
    throw new RailFailure(
      'bank_request_conflict',
      `payout ${payout.id} does not match request ${input.requestId}`,
      true,
    )
  return { bankRef: payout.id }
}

/** The body of `POST /v1/payouts` (docs/payouts.md, "Bank payout partner API"). */
export function payoutRequestBody(input: PayoutInput): Json {
  return {
    amount: input.amountMinor.toString(),
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
  }
}

/** `BankPayoutRail.getPayout`. */
export async function getPayout(deps: BankHttpDeps, bankRef: string): Promise<PayoutState> {
  if (!PAYOUT_ID.test(bankRef)) throw new RailFailure('invalid_bank_ref', 'not a partner payout id', false)
  const path = `/v1/payouts/${encodeURIComponent(bankRef)}`
  const { status, json } = await deps.request('GET', path)
  if (status === 404)
    // The partner gave us this id; forgetting it is the partner's fault, and money may have moved.
    throw new RailFailure('bank_payout_unknown', `the bank partner does not know payout ${bankRef}`, true)
  if (status !== 200)
    throw new RailFailure(`bank_http_${status}`, `GET ${path} answered HTTP ${status}`, true)
  const payout = readPayout(json)
  if (!payout || payout.id !== bankRef)
    throw new RailFailure('bank_bad_response', `GET ${path} answered without that payout`, true)
  return toState(payout)
}

/** `BankHttpRail.verifyNotification`. */
export function verifyNotification(
  deps: BankHttpDeps,
  rawBody: string | Uint8Array,
  signature: string | undefined,
): { bankRef: string } | null {
  const body = partnerSignedBody(deps.config.webhookSecret, rawBody, signature)
  if (!body) return null
  const payout = readPayout(parseObject(body.toString('utf8')))
  return payout ? { bankRef: payout.id } : null
}

export function toState(payout: PartnerPayout): PayoutState {
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

/** The partner's error code of an answer, when it is a short code (never its free text). */
export function partnerErrorCode(json: Json | undefined): string | undefined {
  return typeof json?.error === 'string' && REASON_CODE.test(json.error) ? json.error : undefined
}

export function readPayout(value: unknown): PartnerPayout | undefined {
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
