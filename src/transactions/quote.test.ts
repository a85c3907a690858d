import { describe, expect, it } from 'vitest'
import { ApiError } from '../shared/errors.js'
import type { CreateInput, Quote } from './flow.js'
import type { Txn } from './repository.js'
import { quotedRow, sameRequestOr409 } from './quote.js'
import { legacyRequestHash, requestHash } from './request-hash.js'

const input: CreateInput = {
  accountId: 'acc_1',
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
    const r = quotedRow({ id: 'txn_1', input, kind: 'swap', quote, hash: 'h', at: 1_000, expiresAt: 61_000 })
    expect(r).toMatchObject({
      id: 'txn_1',
      account_id: 'acc_1',
      ext_ref_id: 'order-7',
      request_hash: 'h',
      kind: 'swap',
      state: 'quoted',
      note: 'lunch',
      deduct_fees_from_dest: false,
      src_ccy: 'BTC',
      src_method: 'svcpay',
      src_amount: 100_000n,
      src_fee: 100n,
      src_network_fee: 0n,
      src_details: { a: 1 },
      dest_ccy: 'USD',
      dest_method: 'svcpay',
      dest_amount: 6_000n,
      dest_details: { b: 2 },
      fx_rate: '0.06',
      expires_at: 61_000n,
      next_check_at: 61_000,
      kyc: null,
      source_of_funds: null,
    })
    for (const at of [r.createdAtMs, r.updatedAtMs, r.srcCreatedAtMs, r.srcUpdatedAtMs, r.destCreatedAtMs])
      expect(at).toBe(1_000n)
  })

  it('leaves extRefId and note null when the request has none', () => {
    const bare = { ...input, extRefId: undefined, note: undefined }
    const r = quotedRow({ id: 'txn_2', input: bare, kind: 'swap', quote, hash: 'h', at: 1, expiresAt: 2 })
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
