/**
 * Checks of the personal data a fiat payout carries: the beneficiary's KYC block (contract section
 * 6) and the bank account it goes to. These values are personal data: callers keep them on the
 * transaction only, never log them, and return them only to the owning account. The checks
 * therefore never echo a submitted value back in an issue text either.
 */
import { assert } from '../shared/assert.js'
import type { ErrorCode, ErrorDetail } from '../shared/errors.js'
import { findInstitution } from './institutions.js'

/**
 * Every ISO 3166-1 alpha-2 code assigned as of the 2024 list (249 codes). User-assigned codes
 * such as XK are not in the standard and are refused.
 */
export const ISO_3166_ALPHA2: ReadonlySet<string> = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS ' +
    'BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE ' +
    'EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM ' +
    'HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC ' +
    'LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA ' +
    'NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW ' +
    'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO ' +
    'TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
)

export const KYC_TYPES = ['individual', 'business'] as const
export type KycType = (typeof KYC_TYPES)[number]

/** The contract's bound on a legal name, counted in characters (code points) after trimming. */
export const LEGAL_NAME_CHARS_MAX = 140

export interface Kyc {
  type: KycType
  details: { legalFullName: string; countryCode: string }
}

/** A failed check: the error code for `new ApiError(code, message, details)`, and every issue. */
export interface CheckFailure {
  ok: false
  code: ErrorCode
  details: ErrorDetail[]
}

export type KycCheck = { ok: true; value: Kyc } | CheckFailure

/**
 * Control characters never belong in a name, and the bidirectional overrides and isolates
 * (U+202A-U+202E, U+2066-U+2069) and line and paragraph separators can make a name display as
 * something other than what it is, which matters to whoever screens it.
 */
const FORBIDDEN_IN_NAME = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u

const REQUIRED = 'required for fiat payouts'

/**
 * Checks a payout's `kyc` block. A missing block or missing field answers `kyc_required`; fields
 * that are present but wrong answer `invalid_request`. The accepted value is normalised: the name
 * trimmed and in Unicode NFC, the country code upper case.
 */
export function checkKyc(input: unknown, fieldPrefix = 'destReq.kyc'): KycCheck {
  if (input === undefined || input === null) {
    return { ok: false, code: 'kyc_required', details: [{ field: fieldPrefix, issue: REQUIRED }] }
  }
  if (typeof input !== 'object' || Array.isArray(input)) {
    return {
      ok: false,
      code: 'invalid_request',
      details: [{ field: fieldPrefix, issue: 'must be an object' }],
    }
  }
  const kyc = input as Record<string, unknown>
  const details: ErrorDetail[] = []
  let missing = false
  const need = (field: string): void => {
    missing = true
    details.push({ field, issue: REQUIRED })
  }

  let type: KycType | undefined
  if (kyc.type === undefined || kyc.type === null) need(`${fieldPrefix}.type`)
  else if (typeof kyc.type === 'string' && (KYC_TYPES as readonly string[]).includes(kyc.type))
    type = kyc.type as KycType
  else details.push({ field: `${fieldPrefix}.type`, issue: `must be one of ${KYC_TYPES.join(', ')}` })

  let legalFullName: string | undefined
  let countryCode: string | undefined
  const detailsPrefix = `${fieldPrefix}.details`
  if (kyc.details === undefined || kyc.details === null) {
    need(detailsPrefix)
  } else if (typeof kyc.details !== 'object' || Array.isArray(kyc.details)) {
    details.push({ field: detailsPrefix, issue: 'must be an object' })
  } else {
    const person = kyc.details as Record<string, unknown>
    const name = checkLegalName(person.legalFullName)
    if (name === 'missing') need(`${detailsPrefix}.legalFullName`)
    else if (name.ok) legalFullName = name.value
    else details.push({ field: `${detailsPrefix}.legalFullName`, issue: name.issue })

    const country = checkCountryCode(person.countryCode)
    if (country === 'missing') need(`${detailsPrefix}.countryCode`)
    else if (country.ok) countryCode = country.value
    else details.push({ field: `${detailsPrefix}.countryCode`, issue: country.issue })
  }

  if (details.length > 0) return { ok: false, code: missing ? 'kyc_required' : 'invalid_request', details }
  // Every branch that leaves one of these unset also records an issue, so they are all set here.
  assert(
    type !== undefined && legalFullName !== undefined && countryCode !== undefined,
    'kyc check fell through',
  )
  return { ok: true, value: { type, details: { legalFullName, countryCode } } }
}

export type FieldCheck = { ok: true; value: string } | { ok: false; issue: string } | 'missing'

export function checkLegalName(raw: unknown): FieldCheck {
  if (raw === undefined || raw === null) return 'missing'
  if (typeof raw !== 'string') return { ok: false, issue: 'must be a string' }
  const name = raw.normalize('NFC').trim()
  // A name of only spaces is as good as no name: the caller has to supply one.
  if (name.length === 0) return 'missing'
  if (FORBIDDEN_IN_NAME.test(name)) return { ok: false, issue: 'must not contain control characters' }
  if ([...name].length > LEGAL_NAME_CHARS_MAX)
    return { ok: false, issue: `must be at most ${LEGAL_NAME_CHARS_MAX} characters` }
  return { ok: true, value: name }
}

function checkCountryCode(raw: unknown): FieldCheck {
  if (raw === undefined || raw === null || raw === '') return 'missing'
  if (typeof raw !== 'string') return { ok: false, issue: 'must be a string' }
  const code = raw.toUpperCase()
  if (!ISO_3166_ALPHA2.has(code)) return { ok: false, issue: 'must be an ISO 3166-1 alpha-2 country code' }
  return { ok: true, value: code }
}

/** Bank account numbers in Vietnam run from 6 to 19 digits (card-linked accounts are the longest). */
const ACCOUNT_NUMBER_PATTERN = /^\d{6,19}$/

export type BankAccountCheck =
  { ok: true; value: { bankAcctNum: string; institutionCode: string } } | CheckFailure

/**
 * Checks a `vnd-instant` destination's `reqDetails` (or, with `fieldPrefix` `query`, the account
 * name inquiry's query). The code is `invalid_institution` when the institution is the only thing
 * wrong (a well-formed request naming a bank we cannot pay); any malformed field makes it
 * `invalid_request`, with every issue listed.
 */
export function checkBankAccount(
  bankAcctNum: unknown,
  institutionCode: unknown,
  fieldPrefix = 'destReq.reqDetails',
): BankAccountCheck {
  const details: ErrorDetail[] = []
  let malformed = false
  const acctField = `${fieldPrefix}.bankAcctNum`
  const institutionField = `${fieldPrefix}.institutionCode`

  if (bankAcctNum === undefined || bankAcctNum === null || bankAcctNum === '') {
    malformed = true
    details.push({ field: acctField, issue: 'required' })
  } else if (typeof bankAcctNum !== 'string') {
    malformed = true
    details.push({ field: acctField, issue: 'must be a string of digits' })
  } else if (!ACCOUNT_NUMBER_PATTERN.test(bankAcctNum)) {
    malformed = true
    details.push({ field: acctField, issue: 'must be 6 to 19 digits, with no spaces or other characters' })
  }

  if (institutionCode === undefined || institutionCode === null || institutionCode === '') {
    malformed = true
    details.push({ field: institutionField, issue: 'required' })
  } else if (typeof institutionCode !== 'string') {
    malformed = true
    details.push({ field: institutionField, issue: 'must be a string' })
  } else if (findInstitution(institutionCode) === undefined) {
    details.push({
      field: institutionField,
      issue: 'unknown institution; see GET /api/v2/fiat/institutions?ccy=VND',
    })
  }

  if (details.length > 0)
    return { ok: false, code: malformed ? 'invalid_request' : 'invalid_institution', details }
  return {
    ok: true,
    value: { bankAcctNum: bankAcctNum as string, institutionCode: institutionCode as string },
  }
}
