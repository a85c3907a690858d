import { describe, expect, it } from 'vitest'
import { sandboxAccountName, SANDBOX_ACCOUNT_RULES } from './sandbox-accounts.js'

describe('the sandbox bank’s account names', () => {
  it('are fixed per account, upper case without diacritics, with the documented not-found and mask rules', () => {
    expect(sandboxAccountName('970436', '0011223342')).toEqual({ found: true, name: 'VO THANH BINH' })
    expect(sandboxAccountName('970436', '0011223343')).toEqual({ found: true, name: 'DO HUU AN' })
    expect(sandboxAccountName('970436', '0011223347')).toEqual({ found: true, name: 'BUI T** HAI' })
    expect(sandboxAccountName('970436', `0011223${SANDBOX_ACCOUNT_RULES.notFoundSuffix}`)).toEqual({
      found: false,
    })
    for (let i = 100000; i < 100200; i++) {
      const answer = sandboxAccountName('970415', String(i))
      if (!answer.found) continue
      expect(answer.name).toMatch(/^[A-Z]+ [A-Z*]+ [A-Z]+$/)
      expect(answer.name.includes('*')).toBe(String(i).endsWith(SANDBOX_ACCOUNT_RULES.maskedSuffix))
    }
  })
})
