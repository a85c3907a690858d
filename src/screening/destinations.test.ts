import { describe, expect, it } from 'vitest'
import type { Db } from '../db/db.js'
import { TRON_PAYOUT } from '../payouts/kinds.js'
import { createKindRegistry } from '../transactions/kinds.js'
import { KIND_DECLARATIONS } from '../wiring/kinds.js'
import { destinationsOf } from './destinations.js'
import { createScreeningService } from './service.js'

const settings = { onHit: 'refuse', onError: 'refuse' } as const
// Nothing is read at construction: the service only checks the kinds it is given.
const db = {} as Db

describe('screening: where each kind pays', () => {
  it('knows every kind of this service that sends money out', () => {
    expect(() =>
      createScreeningService({ db, kinds: createKindRegistry(KIND_DECLARATIONS), settings }),
    ).not.toThrow()
  })

  it('refuses to start beside a kind that sends out and that it cannot screen', () => {
    const mystery = {
      ...TRON_PAYOUT,
      kind: 'mystery_payout',
      pairs: [{ ...TRON_PAYOUT.pairs[0], dest: { ...TRON_PAYOUT.pairs[0].dest, method: 'mystery' } }],
      reconcile: null,
    }
    const kinds = createKindRegistry([...KIND_DECLARATIONS, mystery])
    expect(() => createScreeningService({ db, kinds, settings })).toThrow(
      /screening does not know where mystery_payout pays/,
    )
  })

  it('reads a VND payout as its bank account and an on-chain send as its address in one spelling', () => {
    expect(destinationsOf('vnd_payout', { institutionCode: '970436', bankAcctNum: '0123 456-789' })).toEqual([
      { type: 'bank', value: '970436:0123456789' },
    ])
    expect(
      destinationsOf('onchain_send', { address: 'BCRT1QG975H6GDX5MRYEAC72H6LJ2NZYGUGXHY5N57Q2' }),
    ).toEqual([{ type: 'bitcoin', value: 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2' }])
    expect(destinationsOf('swap', {})).toEqual([])
  })
})
