import { describe, expect, it } from 'vitest'
import type { Queryable } from '../db/db.js'
import type { Txn } from '../transactions/txn.js'
import { serviceKinds } from '../wiring/kinds.js'
import { approvalGate } from './gate.js'
import type { ReviewCheck } from './review.js'

const kinds = serviceKinds()
const settings = { approvalThresholds: {}, approvalTtlS: 60 }
// The checks below never touch the Queryable the gate hands them.
const q = {} as Queryable
const payout = { id: 'txn_1', kind: 'tron_payout', srcCcy: 'USDT', destCcy: 'USDT' } as Txn

function check(name: string, kindsConcerned: string[], text?: string): ReviewCheck {
  return {
    name,
    concerns: (kind) => kindsConcerned.includes(kind),
    reasons: async () => (text ? [{ rule: name, text }] : []),
  }
}

describe('review checks in the approval gate', () => {
  it("holds a send a check gives a reason for, with the check's words, until the approval expires", async () => {
    const gate = approvalGate(settings, kinds, [check('hot_wallet_cap', ['tron_payout'], 'over 1000 USDT/h')])
    const v = await gate.atConfirm(q, { ...payout, srcAmountMinor: 1n, destAmountMinor: 1n }, 1_000)
    expect(v).toMatchObject({ verdict: 'hold', until: 61_000 })
  })

  it('passes a send no check has a reason against and no threshold catches', async () => {
    const gate = approvalGate(settings, kinds, [check('hot_wallet_cap', ['tron_payout'])])
    const v = await gate.atConfirm(q, { ...payout, srcAmountMinor: 1n, destAmountMinor: 1n }, 1_000)
    expect(v).toEqual({ verdict: 'pass' })
  })

  it('refuses at start a check on a kind that cannot wait in processing (a swap)', () => {
    const gate = approvalGate(settings, kinds, [check('screening', ['swap'])])
    expect(() => gate.concerns('swap')).toThrow(/screening concerns swap, which cannot wait in processing/)
  })
})
