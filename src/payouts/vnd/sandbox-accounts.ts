/**
 * The sandbox bank's account inquiry (docs/payouts.md, "Sandbox"): a deterministic holder's name
 * for every account number, as a NAPAS inquiry answers it (upper case, no diacritics), so that a
 * tester can ask for a name and then pay out with it, or with another one to see the refusal.
 */
import { createHash } from 'node:crypto'
import type { BankAccountName } from '../../rails/rail.js'

/** The sandbox's rules for an inquiry, by the account number's last digits. */
export const SANDBOX_ACCOUNT_RULES = {
  /** An account number ending 404: the bank has no such account. */
  notFoundSuffix: '404',
  /** An account number ending 7: the bank masks the middle name (`NGUYEN V** AN`). */
  maskedSuffix: '7',
} as const

const FAMILY = ['NGUYEN', 'TRAN', 'LE', 'PHAM', 'HOANG', 'HUYNH', 'PHAN', 'VU', 'VO', 'DANG', 'BUI', 'DO']
const MIDDLE = ['VAN', 'THI', 'HUU', 'DUC', 'MINH', 'NGOC', 'THANH', 'QUANG']
const GIVEN = ['AN', 'BINH', 'CUONG', 'DUNG', 'GIANG', 'HA', 'HAI', 'HOA', 'HUNG', 'KHANH', 'LAN', 'LINH']

/** The holder of `bankAcctNum` at `institutionCode`: the same answer every time. */
export function sandboxAccountName(institutionCode: string, bankAcctNum: string): BankAccountName {
  if (bankAcctNum.endsWith(SANDBOX_ACCOUNT_RULES.notFoundSuffix)) return { found: false }
  const digest = createHash('sha256').update(`sandbox-account:${institutionCode}:${bankAcctNum}`).digest()
  const family = FAMILY[digest[0]! % FAMILY.length]!
  const middle = MIDDLE[digest[1]! % MIDDLE.length]!
  const given = GIVEN[digest[2]! % GIVEN.length]!
  const shown = bankAcctNum.endsWith(SANDBOX_ACCOUNT_RULES.maskedSuffix)
    ? middle[0] + '*'.repeat(middle.length - 1)
    : middle
  return { found: true, name: `${family} ${shown} ${given}` }
}
