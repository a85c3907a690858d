import { describe, expect, it } from 'vitest'
import { ANNOUNCED_METHODS, KIND_DECLARATIONS, serviceKinds } from '../wiring/kinds.js'
import { createKindRegistry, type KindDeclaration } from './kinds.js'
import { canTransition } from './repository.js'
import { asAccountId } from '../shared/ids.js'

/**
 * The kind registry: an incomplete or clashing declaration is refused, and a new kind is served from
 * its declaration alone. What this service declares is pinned in test/kinds.test.ts, so that a new
 * kind changes no test here.
 */

const kinds = serviceKinds()
const fixture: KindDeclaration = {
  kind: 'fixture_payout',
  pairs: [
    {
      source: { method: 'svcpay', ccys: ['USD'], wallet: true },
      dest: { method: 'fixture', ccys: ['USD'], wallet: false },
    },
  ],
  transitions: { quoted: ['completed', 'expired', 'usercanceled', 'failed'] },
  rail: 'bank',
  direction: 'out',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: false,
  confirmationWaits: [],
  stuckWatch: true,
  payerWaits: [],
  reconcile: null,
}

describe('the kind registry', () => {
  it('refuses a declaration with a missing fact', () => {
    for (const fact of Object.keys(fixture) as Array<keyof KindDeclaration>) {
      const { [fact]: _left, ...rest } = fixture
      expect(() => createKindRegistry([...KIND_DECLARATIONS, rest as KindDeclaration]), fact).toThrow(
        fact === 'kind' ? /kind/ : new RegExp(`does not declare its ${fact}`),
      )
    }
  })

  it('refuses a duplicate kind, a duplicate method pair and contradictory facts', () => {
    const swap = kinds.declaration('swap')
    expect(() => createKindRegistry([...KIND_DECLARATIONS, { ...fixture, kind: 'swap' }])).toThrow(
      /swap is declared twice/,
    )
    expect(() => createKindRegistry([...KIND_DECLARATIONS, { ...fixture, pairs: swap.pairs }])).toThrow(
      /method pair svcpay>svcpay is declared by both swap and fixture_payout/,
    )
    expect(() => createKindRegistry([{ ...fixture, approval: true }])).toThrow(/processing/)
    expect(() => createKindRegistry([{ ...fixture, payerWaits: ['srccreated'] }])).toThrow(/never waits/)
    expect(() => createKindRegistry([{ ...fixture, transitions: { quoted: ['sent' as never] } }])).toThrow(
      /no state sent/,
    )
    expect(() =>
      createKindRegistry([
        ...KIND_DECLARATIONS,
        { ...fixture, reconcile: { ccy: 'VND', leaves: 'destination' } },
      ]),
    ).toThrow(/rail bank is reconciled by both vnd_payout and fixture_payout/)
    expect(() => createKindRegistry([{ ...fixture, rail: null }])).toThrow(
      /watched when stuck but has no rail/,
    )
  })

  it('serves a new kind from its declaration alone: its pair, transitions and rail', () => {
    const more = createKindRegistry([...KIND_DECLARATIONS, fixture], ANNOUNCED_METHODS)
    const input = {
      accountId: asAccountId('acc_x'),
      deductNetworkFeesFromDest: false,
      sourceReq: { method: 'svcpay', ccy: 'USD' },
      destReq: { method: 'fixture', ccy: 'USD' },
    }
    expect(more.kindFor(input, ['BTC', 'USD'])).toBe('fixture_payout')
    expect(canTransition(more.transitions, 'fixture_payout', 'quoted', 'completed')).toBe(true)
    expect(more.railOfSend('fixture_payout')).toBe('bank')
    expect(more.railOfDestination('fixture')).toBe('bank')
  })
})
