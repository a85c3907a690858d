import { describe, expect, it } from 'vitest'
import type { CreateInput } from '../transactions/flow.js'
import { tronAddressFromPrivateKey } from './tron/address.js'
import { tronAddress } from './tron-payout.js'
import { bankDestination } from './vnd-payout.js'
import { asAccountId } from '../shared/ids.js'

/** The destination checks of the payout quotes, alone: each refusal names what was wrong. */

const KYC = { type: 'individual', details: { legalFullName: 'Nguyễn Thị Minh Khai', countryCode: 'VN' } }
const SOURCE_OF_FUNDS = { purpose: 1, source: 1, relationship: 2 }

const vnd = (reqDetails: Record<string, unknown>, extra: Partial<CreateInput> = {}): CreateInput => ({
  accountId: asAccountId('acc_x'),
  deductNetworkFeesFromDest: false,
  sourceReq: { ccy: 'VND', method: 'svcpay' },
  destReq: { ccy: 'VND', method: 'vnd-instant', reqDetails, kyc: KYC },
  sourceOfFunds: SOURCE_OF_FUNDS,
  ...extra,
})

describe('tronAddress', () => {
  it('takes a TRON address as given', () => {
    const address = tronAddressFromPrivateKey(new Uint8Array(32).fill(7))
    expect(tronAddress(address)).toBe(address)
  })

  it('refuses a missing and a malformed address', () => {
    expect(tronAddress(undefined)).toEqual({
      kind: 'flow_refusal',
      code: 'tron_address_missing',
      error: 'invalid_address',
      details: [{ field: 'destReq.reqDetails.address', issue: 'a TRON address (T...) is required' }],
    })
    expect(tronAddress('')).toMatchObject({
      code: 'tron_address_invalid',
      details: [{ issue: 'address is empty' }],
    })
  })
})

describe('bankDestination', () => {
  const account = { bankAcctNum: '0123456789', institutionCode: '970425' }

  it('takes the account, the KYC and the source of funds', () => {
    expect(bankDestination(vnd(account))).toMatchObject({ account, sourceOfFunds: SOURCE_OF_FUNDS })
  })

  it('checks the account first, listing every field at fault', () => {
    const refused = bankDestination(vnd({}, { sourceOfFunds: undefined }))
    expect(refused).toMatchObject({ code: 'bank_account_invalid', error: 'invalid_request' })
    expect('details' in refused && refused.details.map((d) => d.field)).toEqual([
      'destReq.reqDetails.bankAcctNum',
      'destReq.reqDetails.institutionCode',
    ])
    expect(bankDestination(vnd({ ...account, institutionCode: '000000' }))).toMatchObject({
      code: 'institution_unknown',
      error: 'invalid_institution',
    })
  })

  it('then the KYC, then the source of funds, each missing or malformed', () => {
    const noKyc = vnd(account)
    noKyc.destReq = { ...noKyc.destReq, kyc: undefined }
    expect(bankDestination(noKyc)).toMatchObject({ code: 'kyc_missing', error: 'kyc_required' })
    expect(bankDestination({ ...noKyc, sourceOfFunds: undefined })).toMatchObject({ code: 'kyc_missing' })
    const badKyc = vnd(account)
    badKyc.destReq = { ...badKyc.destReq, kyc: 'me' as unknown as CreateInput['destReq']['kyc'] }
    expect(bankDestination(badKyc)).toMatchObject({ code: 'kyc_invalid', error: 'invalid_request' })
    expect(bankDestination(vnd(account, { sourceOfFunds: undefined }))).toMatchObject({
      code: 'source_of_funds_missing',
      error: 'kyc_required',
    })
    expect(
      bankDestination(vnd(account, { sourceOfFunds: 'savings' as unknown as CreateInput['sourceOfFunds'] })),
    ).toMatchObject({
      code: 'source_of_funds_invalid',
      error: 'invalid_request',
    })
  })
})
