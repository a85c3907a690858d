import { describe, expect, it } from 'vitest'
import { sendAddress } from './send-quote.js'

/** The address check of an on-chain send's quote, alone. */

const P2WPKH = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'

describe('sendAddress', () => {
  it('takes an address for the network, in its canonical spelling, with its output type', () => {
    expect(sendAddress(` ${P2WPKH.toUpperCase()} `, 'mainnet')).toEqual({ address: P2WPKH, type: 'p2wpkh' })
  })

  it('refuses a missing address, a bad one and one of another network, each as invalid_address', () => {
    expect(sendAddress(undefined, 'mainnet')).toEqual({
      kind: 'flow_refusal',
      code: 'address_missing',
      error: 'invalid_address',
      details: [{ field: 'destReq.reqDetails.address', issue: 'is required' }],
    })
    expect(sendAddress('  ', 'mainnet')).toMatchObject({ code: 'address_missing' })
    expect(sendAddress(P2WPKH.slice(0, -1) + '5', 'mainnet')).toMatchObject({
      code: 'address_invalid',
      error: 'invalid_address',
      details: [{ field: 'destReq.reqDetails.address', issue: 'bad checksum' }],
    })
    const foreign = sendAddress(P2WPKH, 'regtest')
    expect(foreign).toMatchObject({ code: 'address_invalid' })
    expect('details' in foreign && foreign.details[0]?.issue).toMatch(/^wrong network/)
  })
})
