import { describe, expect, it } from 'vitest'
import { checkSourceOfFunds, sourceOfFundsCodes } from './source-of-funds.js'

describe('source-of-funds codes', () => {
  it('publishes three tables of unique integer codes with labels', () => {
    const tables = sourceOfFundsCodes()
    expect(Object.keys(tables).sort()).toEqual(['purpose', 'relationship', 'source'])
    for (const table of [tables.purpose, tables.source, tables.relationship]) {
      expect(table.length).toBeGreaterThan(0)
      const codes = table.map((entry) => entry.code)
      expect(new Set(codes).size).toBe(codes.length)
      for (const entry of table) {
        expect(Number.isInteger(entry.code)).toBe(true)
        expect(entry.label.length).toBeGreaterThan(0)
      }
    }
    expect(tables.purpose.find((entry) => entry.code === 1)?.label).toBe('Family support')
    expect(tables.source.find((entry) => entry.code === 3)?.label).toBe('Savings')
    expect(tables.relationship.find((entry) => entry.code === 1)?.label).toBe('Self')
  })
})

describe('checkSourceOfFunds', () => {
  it('accepts known codes', () => {
    expect(checkSourceOfFunds({ purpose: 1, source: 3, relationship: 2 })).toEqual({
      ok: true,
      value: { purpose: 1, source: 3, relationship: 2 },
    })
  })

  it('keeps only the three codes', () => {
    const result = checkSourceOfFunds({ purpose: 9, source: 8, relationship: 7, extra: 'x' })
    expect(result).toEqual({ ok: true, value: { purpose: 9, source: 8, relationship: 7 } })
  })

  it('asks for the block when it is missing', () => {
    for (const input of [undefined, null]) {
      expect(checkSourceOfFunds(input)).toEqual({
        ok: false,
        code: 'kyc_required',
        details: [{ field: 'sourceOfFunds', issue: 'required for fiat payouts' }],
      })
    }
  })

  it('reports every missing field as kyc_required', () => {
    const result = checkSourceOfFunds({ purpose: 1 })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.code).toBe('kyc_required')
    expect(result.details.map((detail) => detail.field)).toEqual([
      'sourceOfFunds.source',
      'sourceOfFunds.relationship',
    ])
  })

  it('refuses unknown codes, strings and fractions as invalid_request', () => {
    const result = checkSourceOfFunds({ purpose: 10, source: '1', relationship: 1.5 })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.code).toBe('invalid_request')
    expect(result.details.map((detail) => detail.field)).toEqual([
      'sourceOfFunds.purpose',
      'sourceOfFunds.source',
      'sourceOfFunds.relationship',
    ])
    expect(checkSourceOfFunds({ purpose: 0, source: 1, relationship: 1 }).ok).toBe(false)
    expect(checkSourceOfFunds({ purpose: -1, source: 1, relationship: 1 }).ok).toBe(false)
  })

  it('never echoes the submitted code in its issue', () => {
    const result = checkSourceOfFunds({ purpose: 987654321, source: 1, relationship: 1 })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.details).toEqual([
      {
        field: 'sourceOfFunds.purpose',
        issue: 'is not a known code; see GET /api/v2/fiat/source-of-funds-codes',
      },
    ])
    expect(JSON.stringify(result)).not.toContain('987654321')
  })

  it('refuses a block that is not an object', () => {
    for (const input of [1, 'purpose', [1, 2, 3], true]) {
      const result = checkSourceOfFunds(input)
      expect(result).toEqual({
        ok: false,
        code: 'invalid_request',
        details: [{ field: 'sourceOfFunds', issue: 'must be an object' }],
      })
    }
  })
})
