import { describe, expect, it } from 'vitest'
import { ApiError } from '../shared/errors.js'
import type { CreateInput, Quote } from './flow.js'
import type { Txn } from './txn.js'
import { quotedRow, sameRequestOr409 } from './quote.js'
import { legacyRequestHash, requestHash } from './request-hash.js'
import { asAccountId, asTxnId } from '../shared/ids.js'

const input: CreateInput = {
  accountId: asAccountId('acc_1'),
  extRefId: 'order-7',
  note: 'lunch',
  deductNetworkFeesFromDest: false,
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001', reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
}
const quote: Quote = {
  srcAmount: 100_000n,
  srcFee: 100n,
  srcNetworkFee: 0n,
  destAmount: 6_000n,
  fxRate: { num: 6n, scale: 2 },
  srcDetails: { a: 1 },
  destDetails: { b: 2 },
  fromWallet: true,
}

describe('quotedRow', () => {
  it('stores the quote as given, stamped at its time, due at its deadline', () => {
    const r = quotedRow({
      id: asTxnId('txn_1'),
      input,
      kind: 'swap',
      quote,
      hash: 'h',
      at: 1_000,
      expiresAt: 61_000,
    })
    expect(r).toMatchObject({
      id: 'txn_1',
      accountId: asAccountId('acc_1'),
      extRefId: 'order-7',
      requestHash: 'h',
      kind: 'swap',
      state: 'quoted',
      note: 'lunch',
      deductFeesFromDest: false,
      srcCcy: 'BTC',
      srcMethod: 'svcpay',
      srcAmountMinor: 100_000n,
      srcFeeMinor: 100n,
      srcNetworkFeeMinor: 0n,
      srcDetails: { a: 1 },
      destCcy: 'USD',
      destMethod: 'svcpay',
      destAmountMinor: 6_000n,
      destDetails: { b: 2 },
      fxRate: '0.06',
      expiresAtMs: 61_000,
      nextCheckAtMs: 61_000,
      kyc: null,
      sourceOfFunds: null,
    })
    for (const at of [r.createdAtMs, r.updatedAtMs, r.srcCreatedAtMs, r.srcUpdatedAtMs, r.destCreatedAtMs])
      expect(at).toBe(1_000)
  })

  it('leaves extRefId and note null when the request has none', () => {
    const bare = { ...input, extRefId: undefined, note: undefined }
    const r = quotedRow({
      id: asTxnId('txn_2'),
      input: bare,
      kind: 'swap',
      quote,
      hash: 'h',
      at: 1,
      expiresAt: 2,
    })
    expect([r.extRefId, r.note]).toEqual([null, null])
  })
})

describe('sameRequestOr409', () => {
  // Hashed apart by the two: the legacy hash keeps the false flag the current one drops.
  const body = { sourceReq: { amtRequested: '0.001' }, deductNetworkFeesFromDest: false }
  const existing = { requestHash: requestHash(body) } as Txn

  it('answers the transaction for the same request, also under its legacy hash', () => {
    expect(sameRequestOr409(existing, requestHash(body), body)).toBe(existing)
    expect(legacyRequestHash(body)).not.toBe(requestHash(body))
    const legacy = { requestHash: legacyRequestHash(body) } as Txn
    expect(sameRequestOr409(legacy, requestHash(body), body)).toBe(legacy)
  })

  it('refuses another request with 409 duplicate_ext_ref_id', () => {
    const other = { sourceReq: { amtRequested: '0.002' } }
    expect(() => sameRequestOr409(existing, requestHash(other), other)).toThrow(ApiError)
    expect(() => sameRequestOr409(existing, requestHash(other), other)).toThrow(/different transaction/)
  })
})
