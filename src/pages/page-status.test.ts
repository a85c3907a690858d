import { describe, expect, it } from 'vitest'
import { isFinalPageState, pageStatusEvent, publicPageStatus, type PageStatus } from './page-status.js'

describe('publicPageStatus', () => {
  it('passes on only the state and confirmations', () => {
    const row = {
      state: 'seen',
      confirmations: { have: 1, need: 3, txid: 'ab'.repeat(32) },
      txnId: 'txn_1',
      accountId: 'acc_1',
      amount: 0.0025,
    } as unknown as PageStatus
    expect(publicPageStatus(row)).toEqual({ state: 'seen', confirmations: { have: 1, need: 3 } })
  })

  it('refuses unknown states and impossible counts', () => {
    expect(() => publicPageStatus({ state: 'completed' as 'paid' })).toThrow()
    expect(() => publicPageStatus({ state: 'seen', confirmations: { have: 1.5, need: 3 } })).toThrow()
    expect(() => publicPageStatus({ state: 'seen', confirmations: { have: 0, need: 0 } })).toThrow()
  })
})

describe('pageStatusEvent', () => {
  it('writes one server-sent event named status', () => {
    expect(pageStatusEvent({ state: 'paid' })).toBe('event: status\ndata: {"state":"paid"}\n\n')
    expect(pageStatusEvent({ state: 'seen', confirmations: { have: 0, need: 2 } })).toBe(
      'event: status\ndata: {"state":"seen","confirmations":{"have":0,"need":2}}\n\n',
    )
  })
})

describe('isFinalPageState', () => {
  it('treats paid and expired as final', () => {
    expect(['awaiting_payment', 'seen', 'paid', 'expired'].map((s) => isFinalPageState(s as 'paid'))).toEqual(
      [false, false, true, true],
    )
  })
})
