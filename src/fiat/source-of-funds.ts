/**
 * The source-of-funds declaration a fiat payout carries: three integer codes whose meaning the
 * specification leaves open and the contract (section 6) asks us to publish. They are served by
 * `GET /api/v2/fiat/source-of-funds-codes` and forwarded to the bank partner unchanged, so a code's
 * meaning never changes once published: new meanings get new codes.
 */
import type { ErrorCode, ErrorDetail } from '../shared/errors.js'

export interface SourceOfFundsCode {
  code: number
  label: string
}

/** Why the money is being sent. */
export const PURPOSE_CODES: readonly SourceOfFundsCode[] = Object.freeze([
  { code: 1, label: 'Family support' },
  { code: 2, label: 'Salary or payroll' },
  { code: 3, label: 'Payment for goods and services' },
  { code: 4, label: 'Education' },
  { code: 5, label: 'Medical expenses' },
  { code: 6, label: 'Investment' },
  { code: 7, label: 'Loan repayment' },
  { code: 8, label: 'Gift' },
  { code: 9, label: 'Other' },
])

/** Where the sender's money came from. */
export const SOURCE_CODES: readonly SourceOfFundsCode[] = Object.freeze([
  { code: 1, label: 'Salary' },
  { code: 2, label: 'Business income' },
  { code: 3, label: 'Savings' },
  { code: 4, label: 'Investment returns' },
  { code: 5, label: 'Sale of property' },
  { code: 6, label: 'Inheritance or gift' },
  { code: 7, label: 'Loan' },
  { code: 8, label: 'Other' },
])

/** How the sender is related to the beneficiary. */
export const RELATIONSHIP_CODES: readonly SourceOfFundsCode[] = Object.freeze([
  { code: 1, label: 'Self' },
  { code: 2, label: 'Family member' },
  { code: 3, label: 'Friend' },
  { code: 4, label: 'Employee' },
  { code: 5, label: 'Employer' },
  { code: 6, label: 'Business partner, customer or supplier' },
  { code: 7, label: 'Other' },
])

export interface SourceOfFundsTables {
  purpose: readonly SourceOfFundsCode[]
  source: readonly SourceOfFundsCode[]
  relationship: readonly SourceOfFundsCode[]
}

/** The three tables, as `GET /api/v2/fiat/source-of-funds-codes` serves them under `data`. */
export function sourceOfFundsCodes(): SourceOfFundsTables {
  return { purpose: PURPOSE_CODES, source: SOURCE_CODES, relationship: RELATIONSHIP_CODES }
}

export interface SourceOfFunds {
  purpose: number
  source: number
  relationship: number
}

export type SourceOfFundsCheck =
  | { ok: true; value: SourceOfFunds }
  /** `kyc_required` when something is missing, `invalid_request` when something present is wrong. */
  | { ok: false; code: ErrorCode; details: ErrorDetail[] }

const FIELDS = ['purpose', 'source', 'relationship'] as const
const TABLES: Record<(typeof FIELDS)[number], readonly SourceOfFundsCode[]> = {
  purpose: PURPOSE_CODES,
  source: SOURCE_CODES,
  relationship: RELATIONSHIP_CODES,
}

/**
 * Checks the request body's `sourceOfFunds`. Every field is reported, not just the first, so a
 * caller can fix the request in one go. Codes must be JSON integers: a string such as `"1"` is
 * refused, because the contract validates known fields strictly.
 */
export function checkSourceOfFunds(input: unknown): SourceOfFundsCheck {
  if (input === undefined || input === null) {
    return {
      ok: false,
      code: 'kyc_required',
      details: [{ field: 'sourceOfFunds', issue: 'required for fiat payouts' }],
    }
  }
  if (typeof input !== 'object' || Array.isArray(input)) {
    return {
      ok: false,
      code: 'invalid_request',
      details: [{ field: 'sourceOfFunds', issue: 'must be an object' }],
    }
  }
  const record = input as Record<string, unknown>
  const details: ErrorDetail[] = []
  let missing = false
  const value: Partial<SourceOfFunds> = {}
  for (const name of FIELDS) {
    const field = `sourceOfFunds.${name}`
    const raw = record[name]
    if (raw === undefined || raw === null) {
      missing = true
      details.push({ field, issue: 'required for fiat payouts' })
    } else if (typeof raw !== 'number' || !Number.isInteger(raw)) {
      details.push({ field, issue: 'must be an integer code' })
    } else if (!TABLES[name].some((entry) => entry.code === raw)) {
      details.push({ field, issue: 'is not a known code; see GET /api/v2/fiat/source-of-funds-codes' })
    } else {
      value[name] = raw
    }
  }
  if (details.length > 0) return { ok: false, code: missing ? 'kyc_required' : 'invalid_request', details }
  return { ok: true, value: value as SourceOfFunds }
}
