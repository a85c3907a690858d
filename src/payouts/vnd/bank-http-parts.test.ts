/** The bank rail's pure parts, called alone: headers signed, bodies built, answers read. */
import { describe, expect, it } from 'vitest'

import { RailFailure } from '../../rails/rail.js'
import { listedPayment, vndBalance } from './bank-http-holdings.js'
import { partnerErrorCode, payoutRequestBody, readPayout, toState } from './bank-http-payouts.js'
import { parseObject, requestHeaders, signRequest } from './bank-http-request.js'

describe('requestHeaders', () => {
  const endpoint = { apiKey: 'key', now: () => 1_700_000_000_000 }
  const body = Buffer.from('{"a":1}', 'utf8')

  it('signs timestamp, method, path and the exact body with the signing secret', () => {
    const headers = requestHeaders({ ...endpoint, signingSecret: 's3cret' }, 'POST', '/v1/payouts', body, {
      'idempotency-key': 'req-1',
    })
    expect(headers).toEqual({
      authorization: 'Bearer key',
      'idempotency-key': 'req-1',
      'content-type': 'application/json',
      'x-svcpay-timestamp': '1700000000000',
      'x-svcpay-signature': signRequest('s3cret', '1700000000000', 'POST', '/v1/payouts', body),
    })
  })

  it('signs a GET over an empty body, and sends nothing to sign without a secret', () => {
    const signed = requestHeaders({ ...endpoint, signingSecret: 's3cret' }, 'GET', '/v1/balance', undefined)
    expect(signed['x-svcpay-signature']).toBe(
      signRequest('s3cret', '1700000000000', 'GET', '/v1/balance', ''),
    )
    expect(signed).not.toHaveProperty('content-type')
    expect(requestHeaders(endpoint, 'GET', '/v1/balance', undefined)).toEqual({ authorization: 'Bearer key' })
  })
})

describe('parseObject', () => {
  it('takes only a JSON object', () => {
    expect(parseObject('{"a":1}')).toEqual({ a: 1 })
    for (const text of ['', 'not json', '[1]', 'null', '"x"']) expect(parseObject(text)).toBeUndefined()
  })
})

describe('payoutRequestBody', () => {
  it('writes the amount as exact text, beyond what a float holds', () => {
    const body = payoutRequestBody({
      requestId: 'r',
      ccy: 'VND',
      amountMinor: 9_007_199_254_740_993n,
      bankAcctNum: '0123456789',
      institutionCode: '970436',
      beneficiary: { type: 'business', legalFullName: 'Công ty An', countryCode: 'VN' },
      sourceOfFunds: { purpose: 4, source: 5, relationship: 6 },
    })
    expect(body.amount).toBe('9007199254740993')
    expect(body.beneficiary).toMatchObject({ accountNumber: '0123456789', type: 'business' })
    expect([body.purposeCode, body.sourceCode, body.relationshipCode]).toEqual([4, 5, 6])
  })
})

describe('payouts read', () => {
  it('takes a payout with a safe id and a known status, nothing else', () => {
    expect(readPayout({ id: 'po_1', status: 'completed', amount: '100', extra: 1 })).toEqual({
      id: 'po_1',
      status: 'completed',
      reason: undefined,
      amount: '100',
      currency: undefined,
    })
    expect(readPayout({ id: '../x', status: 'completed' })).toBeUndefined()
    expect(readPayout({ id: 'po_1', status: 'paid' })).toBeUndefined()
    expect(readPayout(['po_1'])).toBeUndefined()
  })

  it('maps each status, passing only short reason codes to the customer', () => {
    expect(toState({ id: 'p', status: 'processing' })).toEqual({ status: 'pending' })
    expect(toState({ id: 'p', status: 'completed' })).toEqual({ status: 'completed' })
    expect(toState({ id: 'p', status: 'failed', reason: 'account_closed' })).toEqual({
      status: 'failed',
      reason: 'account_closed',
    })
    expect(toState({ id: 'p', status: 'rejected', reason: 'Nguyễn Văn An: no such account' })).toEqual({
      status: 'rejected',
      reason: 'bank_rejected',
    })
    expect(toState({ id: 'p', status: 'returned' })).toEqual({
      status: 'reversed',
      reason: 'returned_by_bank',
    })
  })

  it("keeps the partner's error code, never its free text", () => {
    expect(partnerErrorCode({ error: 'invalid_account' })).toBe('invalid_account')
    expect(partnerErrorCode({ error: 'Account 0123 of Nguyễn Văn An is closed' })).toBeUndefined()
    expect(partnerErrorCode(undefined)).toBeUndefined()
  })
})

describe('holdings read', () => {
  it('reads a VND balance as exact minor units', () => {
    expect(vndBalance({ available: '123456789012345678901' })).toBe(123_456_789_012_345_678_901n)
    expect(vndBalance({ available: '-5', currency: 'VND' })).toBe(-5n)
    expect(vndBalance({ available: '5', currency: 'USD' })).toBeNull()
    expect(vndBalance({ available: 5 })).toBeNull()
    expect(vndBalance(undefined)).toBeNull()
  })

  it('lists only completed payouts, and refuses one without amount or time', () => {
    expect(listedPayment({ id: 'po_1', status: 'completed', amount: '2500000', createdAt: 1000 })).toEqual({
      ref: 'po_1',
      direction: 'out',
      amountMinor: 2_500_000n,
      at: 1000,
    })
    expect(listedPayment({ id: 'po_2', status: 'returned', amount: '1', createdAt: 1000 })).toBeNull()
    expect(() => listedPayment({ id: 'po_3', status: 'completed', createdAt: 1000 })).toThrow(RailFailure)
    expect(() => listedPayment({ id: 'po_4', status: 'completed', amount: '1' })).toThrow(
      /without id, amount or time/,
    )
  })
})
