import { describe, expect, it } from 'vitest'
import { systemAccountId, type Posting } from '../ledger/ledger.js'
import { sendPostings } from './send.js'

/** The journal entry of a completed Lightning send, alone: only the routing fee used is charged. */

const sum = (postings: Posting[]) => postings.reduce((total, p) => total + p.amount, 0n)

describe('sendPostings', () => {
  it('charges amount, service fee and the routing fee used; the unused limit stays in the wallet', () => {
    const txn = {
      srcAmountMinor: 100_000n,
      srcFeeMinor: 1_000n,
      srcNetworkFeeMinor: 500n,
      deductFeesFromDest: false,
    }
    const postings = sendPostings(txn, 'wal_x', 120n)
    expect(postings).toEqual<Posting[]>([
      { accountId: 'wal_x', ccy: 'BTC', amount: -101_120n },
      { accountId: systemAccountId('fees', 'BTC'), ccy: 'BTC', amount: 1_000n },
      { accountId: systemAccountId('lightning', 'BTC'), ccy: 'BTC', amount: 100_120n },
    ])
    expect(sum(postings)).toBe(0n)
    // A route that used the whole limit, and an internal settlement that used none.
    expect(sendPostings(txn, 'wal_x', 500n)[0]?.amount).toBe(-101_500n)
    expect(sendPostings(txn, 'wal_x', 0n)[2]?.amount).toBe(100_000n)
  })

  it('with the fees taken from the amount, returns the unused limit out of that amount', () => {
    const txn = {
      srcAmountMinor: 100_000n,
      srcFeeMinor: 1_000n,
      srcNetworkFeeMinor: 500n,
      deductFeesFromDest: true,
    }
    const postings = sendPostings(txn, 'wal_x', 200n)
    expect(postings.map((p) => p.amount)).toEqual([-99_700n, 1_000n, 98_700n])
    expect(sum(postings)).toBe(0n)
  })
})
