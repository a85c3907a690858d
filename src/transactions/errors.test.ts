import { describe, expect, it } from 'vitest'
import {
  isMoneyError,
  isRefusal,
  moneyApiError,
  moneyError,
  refusalApiError,
  type MoneyErrorCode,
} from './errors.js'
import { lnSendError } from '../lightning/errors.js'
import { onchainSendError } from '../onchain/errors.js'
import { payoutError } from '../payouts/errors.js'

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
  it('answers a refusal of the amount arithmetic as moneyApiError does', () => {
    const refusal = moneyError('converts_to_nothing', 'amtRequested', 'converts to nothing at this rate')
    expect(refusalApiError(refusal).toBody()).toEqual(moneyApiError(refusal).toBody())
  })

  it('answers a destination check with its module contract code, the message "field: issue"', () => {
    const invoice = refusalApiError(
      lnSendError('invoice_expired', 'destReq.reqDetails.paymentRequest', 'the invoice has expired'),
    )
    expect(invoice.status).toBe(400)
    expect(invoice.toBody()).toEqual({
      error: 'invalid_payment_request',
      message: 'destReq.reqDetails.paymentRequest: the invoice has expired',
      details: [{ field: 'destReq.reqDetails.paymentRequest', issue: 'the invoice has expired' }],
    })
    const deduct = lnSendError('deduct_from_fixed_amount', 'deductNetworkFeesFromDest', 'cannot apply')
    expect(refusalApiError(deduct).code).toBe('invalid_request')
    const dust = onchainSendError('amount_below_minimum', 'destReq.amtRequested', 'too small')
    expect(refusalApiError(dust).toBody()).toMatchObject({
      error: 'amount_below_minimum',
      message: 'destReq.amtRequested: too small',
    })
    expect(
      refusalApiError(onchainSendError('address_invalid', 'destReq.reqDetails.address', 'bad checksum')).code,
    ).toBe('invalid_address')
  })

  it('lists every field a payout refusal names, the message joining them with "; "', () => {
    const details = [
      { field: 'destReq.reqDetails.bankAcctNum', issue: 'required' },
      { field: 'destReq.reqDetails.institutionCode', issue: 'required' },
    ]
    expect(refusalApiError(payoutError('bank_account_invalid', details)).toBody()).toEqual({
      error: 'invalid_request',
      message: 'destReq.reqDetails.bankAcctNum: required; destReq.reqDetails.institutionCode: required',
      details,
    })
    expect(refusalApiError(payoutError('institution_unknown', details.slice(1))).code).toBe(
      'invalid_institution',
    )
    expect(refusalApiError(payoutError('kyc_missing', details)).code).toBe('kyc_required')
    expect(refusalApiError(payoutError('source_of_funds_missing', details)).code).toBe('kyc_required')
  })

  it('tells a refusal from a quote', () => {
    expect(isRefusal(payoutError('kyc_invalid', []))).toBe(true)
    expect(isRefusal(moneyError('amount_missing', 'amtRequested', 'is required'))).toBe(true)
    expect(isRefusal({ srcAmount: 1n, destAmount: 1n, fromWallet: true })).toBe(false)
  })
})
