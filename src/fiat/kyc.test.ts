import { describe, expect, it } from 'vitest'
import { ApiError } from '../shared/errors.js'
import { checkBankAccount, checkKyc, ISO_3166_ALPHA2, LEGAL_NAME_CHARS_MAX } from './kyc.js'

const person = { type: 'individual', details: { legalFullName: 'Nguyễn Văn An', countryCode: 'VN' } }

describe('ISO 3166-1 alpha-2 list', () => {
  it('holds every assigned code and nothing else', () => {
    expect(ISO_3166_ALPHA2.size).toBe(249)
    for (const code of ['VN', 'US', 'GB', 'DE', 'JP', 'SS', 'SX', 'CW', 'BQ', 'AX', 'AQ', 'TW', 'PS']) {
      expect(ISO_3166_ALPHA2.has(code)).toBe(true)
    }
    // UK is reserved, XK user-assigned, AN withdrawn in 2010, EU and ZZ not countries.
    for (const code of ['UK', 'XK', 'AN', 'EU', 'ZZ', 'EL']) expect(ISO_3166_ALPHA2.has(code)).toBe(false)
    for (const code of ISO_3166_ALPHA2) expect(code).toMatch(/^[A-Z]{2}$/)
  })
})

describe('checkKyc', () => {
  it('accepts an individual and a business', () => {
    expect(checkKyc(person)).toEqual({ ok: true, value: person })
    const business = { type: 'business', details: { legalFullName: 'Công ty TNHH ABC', countryCode: 'SG' } }
    expect(checkKyc(business)).toEqual({ ok: true, value: business })
  })

  it('trims the name, normalises it to NFC and upper-cases the country', () => {
    // "e" followed by a combining circumflex and a combining tilde is one character in NFC.
    const decomposed = '  Nguye\u0302\u0303n  '
    const result = checkKyc({ type: 'individual', details: { legalFullName: decomposed, countryCode: 'vn' } })
    expect(result).toEqual({
      ok: true,
      value: { type: 'individual', details: { legalFullName: 'Nguyễn'.normalize('NFC'), countryCode: 'VN' } },
    })
  })

  it('answers kyc_required when the block or a field is missing', () => {
    expect(checkKyc(undefined)).toEqual({
      ok: false,
      code: 'kyc_required',
      details: [{ field: 'destReq.kyc', issue: 'required for fiat payouts' }],
    })
    const result = checkKyc({ details: { countryCode: 'VN' } })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.code).toBe('kyc_required')
    expect(result.details.map((detail) => detail.field)).toEqual([
      'destReq.kyc.type',
      'destReq.kyc.details.legalFullName',
    ])
    const noDetails = checkKyc({ type: 'individual' })
    expect(noDetails.ok || noDetails.details).toEqual([
      { field: 'destReq.kyc.details', issue: 'required for fiat payouts' },
    ])
  })

  it('treats a blank name as missing', () => {
    const result = checkKyc({ type: 'individual', details: { legalFullName: ' \t ', countryCode: 'VN' } })
    expect(result.ok || [result.code, result.details[0]?.field]).toEqual([
      'kyc_required',
      'destReq.kyc.details.legalFullName',
    ])
  })

  it('answers invalid_request for fields present but wrong, listing each', () => {
    const result = checkKyc({ type: 'robot', details: { legalFullName: 42, countryCode: 'XK' } })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.code).toBe('invalid_request')
    expect(result.details.map((detail) => detail.field)).toEqual([
      'destReq.kyc.type',
      'destReq.kyc.details.legalFullName',
      'destReq.kyc.details.countryCode',
    ])
  })

  it('bounds the name at 140 characters, counted as characters not UTF-16 units', () => {
    const at = (name: string) =>
      checkKyc({ type: 'individual', details: { legalFullName: name, countryCode: 'VN' } })
    expect(at('a'.repeat(LEGAL_NAME_CHARS_MAX)).ok).toBe(true)
    expect(at('a'.repeat(LEGAL_NAME_CHARS_MAX + 1)).ok).toBe(false)
    // 140 characters outside the Basic Multilingual Plane are 280 UTF-16 units, and still fit.
    expect(at('𠀀'.repeat(LEGAL_NAME_CHARS_MAX)).ok).toBe(true)
  })

  it('refuses control characters and direction overrides in the name', () => {
    for (const name of ['Ann\u0000a', 'Ann\na', 'Ann\u007fa', 'Ann\u202ea', 'Ann\u2066a', 'Ann\u2028a']) {
      const result = checkKyc({ type: 'individual', details: { legalFullName: name, countryCode: 'VN' } })
      expect(result.ok || result.details).toEqual([
        { field: 'destReq.kyc.details.legalFullName', issue: 'must not contain control characters' },
      ])
    }
  })

  it('uses the prefix it is given and never echoes the submitted value', () => {
    const secret = 'Very Private Name'
    const result = checkKyc(
      { type: 'individual', details: { legalFullName: secret, countryCode: 'QQ' } },
      'kyc',
    )
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.details[0]?.field).toBe('kyc.details.countryCode')
    expect(JSON.stringify(result)).not.toContain(secret)
    expect(JSON.stringify(result)).not.toContain('QQ')
  })

  it('refuses shapes that are not objects', () => {
    expect(checkKyc('individual')).toMatchObject({ ok: false, code: 'invalid_request' })
    expect(checkKyc([person])).toMatchObject({ ok: false, code: 'invalid_request' })
    expect(checkKyc({ type: 'individual', details: 'x' })).toMatchObject({
      ok: false,
      code: 'invalid_request',
    })
  })
})

describe('checkBankAccount', () => {
  it('accepts 6 to 19 digits at a known bank', () => {
    expect(checkBankAccount('0011004567890', '970436')).toEqual({
      ok: true,
      value: { bankAcctNum: '0011004567890', institutionCode: '970436' },
    })
    expect(checkBankAccount('123456', '970415').ok).toBe(true)
    expect(checkBankAccount('1'.repeat(19), '970415').ok).toBe(true)
  })

  it('refuses account numbers that are not 6 to 19 digits', () => {
    for (const bad of ['12345', '1'.repeat(20), '12345 678', '1234-5678', '１２３４５６', 12345678]) {
      const result = checkBankAccount(bad, '970436')
      expect(result.ok).toBe(false)
      if (result.ok) continue
      expect(result.code).toBe('invalid_request')
      expect(result.details.map((detail) => detail.field)).toEqual(['destReq.reqDetails.bankAcctNum'])
    }
  })

  it('answers invalid_institution for a well-formed request to an unknown bank', () => {
    const result = checkBankAccount('0011004567890', '999999')
    expect(result.ok).toBe(false)
    if (result.ok) return
    const error = new ApiError(result.code, 'unknown institution', result.details)
    expect(error.status).toBe(400)
    expect(error.toBody()).toEqual({
      error: 'invalid_institution',
      message: 'unknown institution',
      details: [
        {
          field: 'destReq.reqDetails.institutionCode',
          issue: 'unknown institution; see GET /api/v2/fiat/institutions?ccy=VND',
        },
      ],
    })
  })

  it('answers invalid_request, with every issue, when a field is malformed or missing', () => {
    const result = checkBankAccount(undefined, 970436)
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.code).toBe('invalid_request')
    expect(result.details.map((detail) => detail.field)).toEqual([
      'destReq.reqDetails.bankAcctNum',
      'destReq.reqDetails.institutionCode',
    ])
    const both = checkBankAccount('12', '999999')
    expect(both.ok || [both.code, both.details.length]).toEqual(['invalid_request', 2])
  })
})
