/**
 * Payout institutions: the banks a fiat payout can be sent to, served by
 * `GET /api/v2/fiat/institutions?ccy=VND` (contract section 6). Vietnamese banks are identified by
 * their NAPAS BIN, the six-digit code that interbank transfers and VietQR use to route to a bank.
 */
import { assert } from '../shared/assert.js'
import vnInstitutionsData from './vn-institutions.json' with { type: 'json' }

export interface Institution {
  /** The NAPAS BIN (six digits). */
  code: string
  /** The bank's full name. */
  name: string
  /** The name people know the bank by. */
  shortName: string
}

/** A NAPAS BIN is six digits; the data file is checked against it when this module loads. */
const BIN_PATTERN = /^\d{6}$/

function loadInstitutions(data: unknown): readonly Institution[] {
  assert(Array.isArray(data), 'vn-institutions.json must be an array')
  const seen = new Set<string>()
  const list = data.map((entry: unknown): Institution => {
    const item = entry as Partial<Record<keyof Institution, unknown>>
    assert(typeof item.code === 'string' && BIN_PATTERN.test(item.code), `bad institution code ${item.code}`)
    assert(typeof item.name === 'string' && item.name.length > 0, `institution ${item.code} has no name`)
    assert(
      typeof item.shortName === 'string' && item.shortName.length > 0,
      `institution ${item.code} has no short name`,
    )
    assert(!seen.has(item.code), `institution ${item.code} is listed twice`)
    seen.add(item.code)
    return Object.freeze({ code: item.code, name: item.name, shortName: item.shortName })
  })
  return Object.freeze(list)
}

const VN_INSTITUTIONS = loadInstitutions(vnInstitutionsData)
const BY_CODE = new Map(VN_INSTITUTIONS.map((institution) => [institution.code, institution]))

/**
 * The institutions a payout in `ccy` can go to. Only VND payouts go to banks today; any other
 * currency has none, which the route answers with an empty list rather than an error.
 */
export function listInstitutions(ccy: string): readonly Institution[] {
  return ccy.toUpperCase() === 'VND' ? VN_INSTITUTIONS : []
}

/** The institution with this code, or undefined when the code is not one we can pay to. */
export function findInstitution(code: string): Institution | undefined {
  return BY_CODE.get(code)
}
