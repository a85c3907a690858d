import { describe, expect, it } from 'vitest'
import {
  flowRefusal,
  isFlowRefusal,
  isMoneyError,
  isRefusal,
  moneyApiError,
  moneyError,
  refusalApiError,
  type MoneyErrorCode,
} from './errors.js'

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

describe('refusalApiError', () => {
  /** A flow's codes and the contract's error for each, as a flow module defines them. */
  const CONTRACT = { address_bad: 'invalid_address', account_incomplete: 'invalid_request' } as const

  it('answers a refusal of the amount arithmetic as moneyApiError does', () => {
    const refusal = moneyError('converts_to_nothing', 'amtRequested', 'converts to nothing at this rate')
    expect(refusalApiError(refusal).toBody()).toEqual(moneyApiError(refusal).toBody())
  })

  it('answers a flow\'s refusal with the contract error of its code, the message "field: issue"', () => {
    const details = [{ field: 'destReq.reqDetails.address', issue: 'bad checksum' }]
    const refusal = flowRefusal(CONTRACT, 'address_bad', details)
    expect(refusal).toEqual({ kind: 'flow_refusal', code: 'address_bad', error: 'invalid_address', details })
    const error = refusalApiError(refusal)
    expect(error.status).toBe(400)
    expect(error.toBody()).toEqual({
      error: 'invalid_address',
      message: 'destReq.reqDetails.address: bad checksum',
      details,
    })
  })

  it('lists every field a refusal names, the message joining them with "; "', () => {
    const details = [
      { field: 'destReq.reqDetails.bankAcctNum', issue: 'required' },
      { field: 'destReq.reqDetails.institutionCode', issue: 'required' },
    ]
    expect(refusalApiError(flowRefusal(CONTRACT, 'account_incomplete', details)).toBody()).toEqual({
      error: 'invalid_request',
      message: 'destReq.reqDetails.bankAcctNum: required; destReq.reqDetails.institutionCode: required',
      details,
    })
  })

  it('tells a refusal from a quote, and a flow refusal from a money one', () => {
    const flow = flowRefusal(CONTRACT, 'address_bad', [])
    const money = moneyError('amount_missing', 'amtRequested', 'is required')
    expect(isRefusal(flow) && isRefusal(money)).toBe(true)
    expect(isFlowRefusal(flow)).toBe(true)
    expect(isFlowRefusal(money)).toBe(false)
    expect(isRefusal({ srcAmount: 1n, destAmount: 1n, fromWallet: true })).toBe(false)
  })
})
