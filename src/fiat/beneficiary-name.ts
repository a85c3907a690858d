/**
 * The beneficiary name check of a VND payout (docs/payouts.md, "Beneficiary name check"): the name
 * a bank gives for an account (NAPAS account inquiry: upper case, no diacritics, sometimes partly
 * masked with `*`) against the name the sender expects. Pure: no I/O, nothing logged. Both names
 * are personal data; nothing here echoes them in an issue text.
 */
import type { ErrorDetail } from '../shared/errors.js'
import { checkLegalName } from './kyc.js'

/** The character a bank writes in place of a letter it does not show. */
const MASK = '*'

/**
 * A name as the comparison sees it: Vietnamese diacritics and every other combining mark removed
 * (NFD, then the marks dropped), đ/Đ as D (a letter of its own, which NFD does not decompose),
 * upper case, and no whitespace at all, so that spacing never decides a match.
 */
export function normalizeName(name: string): string {
  return name.normalize('NFD').replace(/\p{M}/gu, '').replace(/[đĐ]/g, 'D').toUpperCase().replace(/\s+/gu, '')
}

/**
 * Whether `expected` is the holder the bank named. After normalising both, the names must have
 * the same length and agree character by character, where a `*` of the bank's name stands for
 * exactly one character of any kind. A bank name that shows no character at all (only `*`)
 * matches nothing: there is nothing to compare, and a payout is never sent on an unchecked name.
 */
export function nameMatches(expected: string, bankName: string): boolean {
  const want = [...normalizeName(expected)]
  const given = [...normalizeName(bankName)]
  if (want.length === 0 || want.length !== given.length) return false
  if (given.every((ch) => ch === MASK)) return false
  return given.every((ch, i) => ch === MASK || ch === want[i])
}

export const EXPECTED_NAME_FIELD = 'destReq.reqDetails.expectedName'

/**
 * Checks a payout's optional `reqDetails.expectedName`: absent is fine; present, it follows the
 * rules of a KYC legal name (1-140 characters after trimming, no control characters or
 * bidirectional overrides) and is kept trimmed and in NFC.
 */
export function checkExpectedName(
  raw: unknown,
): { ok: true; value: string | undefined } | { ok: false; details: ErrorDetail[] } {
  if (raw === undefined) return { ok: true, value: undefined }
  const name = checkLegalName(raw)
  if (name === 'missing')
    return { ok: false, details: [{ field: EXPECTED_NAME_FIELD, issue: 'must not be blank when given' }] }
  if (!name.ok) return { ok: false, details: [{ field: EXPECTED_NAME_FIELD, issue: name.issue }] }
  return { ok: true, value: name.value }
}
