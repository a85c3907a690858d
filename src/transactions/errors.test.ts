import { describe, expect, it } from 'vitest'
import { isMoneyError, moneyApiError, moneyError, type MoneyErrorCode } from './errors.js'

/** The one place a refusal of the amount arithmetic becomes the contract's error body. */

describe('moneyApiError', () => {
  it('answers a field refusal as a 400 whose message reads "field: reason"', () => {
    const error = moneyApiError(
      moneyError('amount_below_fees', 'amtRequested', 'is too small to cover the fees'),
    )
    expect(error.status).toBe(400)
    expect(error.toBody()).toEqual({
      error: 'invalid_amount',
      message: 'amtRequested: is too small to cover the fees',
      details: [{ field: 'amtRequested', issue: 'is too small to cover the fees' }],
    })
  })

  it('answers amtRequested on both sides with its own message, the detail naming the field', () => {
    const both = moneyError(
      'amount_on_both_sides',
      'destReq.amtRequested',
      'must be left out when sourceReq.amtRequested is set',
    )
    expect(moneyApiError(both).toBody()).toEqual({
      error: 'invalid_request',
      message: 'Set amtRequested on one side only',
      details: [
        { field: 'destReq.amtRequested', issue: 'must be left out when sourceReq.amtRequested is set' },
      ],
    })
  })

  it('gives every code the contract error it had when it was thrown', () => {
    const expected: Record<MoneyErrorCode, string> = {
      amount_on_both_sides: 'invalid_request',
      amount_missing: 'invalid_request',
      amount_malformed: 'invalid_amount',
      amount_below_fees: 'invalid_amount',
      converts_to_nothing: 'invalid_amount',
      amount_over_limit: 'invalid_amount',
    }
    for (const [code, error] of Object.entries(expected)) {
      const mapped = moneyApiError(moneyError(code as MoneyErrorCode, 'sourceReq.amtRequested', 'x'))
      expect([mapped.code, mapped.status], code).toEqual([error, 400])
    }
  })
})

describe('isMoneyError', () => {
  it('tells a refusal from a result or nothing', () => {
    expect(isMoneyError(moneyError('amount_missing', 'destReq.amtRequested', 'x'))).toBe(true)
    expect(isMoneyError({ side: 'src', minor: 1n })).toBe(false)
    expect(isMoneyError(undefined)).toBe(false)
  })
})
