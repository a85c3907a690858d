import { describe, expect, it } from 'vitest'
import { destinationOf, normaliseDestination } from './destinations.js'

const A = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'

describe('destinations, as the velocity rules and allow-lists key them', () => {
  it('writes one destination one way whatever its spelling', () => {
    expect(destinationOf({ destMethod: 'eth', destDetails: { address: A } })).toBe(`eth:${A.toLowerCase()}`)
    expect(destinationOf({ destMethod: 'eth', destDetails: { address: A.toLowerCase() } })).toBe(
      `eth:${A.toLowerCase()}`,
    )
    expect(destinationOf({ destMethod: 'on-chain', destDetails: { address: 'BCRT1QXYZ' } })).toBe(
      'btc:bcrt1qxyz',
    )
    expect(destinationOf({ destMethod: 'tron', destDetails: { address: 'TAbc' } })).toBe('tron:TAbc')
    expect(
      destinationOf({
        destMethod: 'vnd-instant',
        destDetails: { institutionCode: 'vcb', bankAcctNum: '12-34 5' },
      }),
    ).toBe('bank:VCB:12345')
    expect(destinationOf({ destMethod: 'svcpay', destDetails: {} })).toBeUndefined()
  })

  it("reads an operator's allow-list entry as a send's destination would be written", () => {
    expect(normaliseDestination(`eth:${A}`)).toBe(`eth:${A.toLowerCase()}`)
    expect(normaliseDestination('eth:0x123')).toBeUndefined()
    expect(normaliseDestination('bank:vcb:0123')).toBe('bank:VCB:0123')
    expect(normaliseDestination('nonsense')).toBeUndefined()
  })
})
