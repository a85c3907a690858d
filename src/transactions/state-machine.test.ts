import { describe, expect, it } from 'vitest'
import { FINAL_STATES, TXN_STATES, type TxnKind, type TxnState } from './state-machine.js'
import { reqStatuses } from './txn.js'
import { canTransition as canTransitionIn } from './repository.js'
import { serviceKinds } from '../wiring/kinds.js'
import { initialState } from '../../test/helpers/invariants.js'

/** The state-machine table itself: every path ends, nothing leaves a final state, statuses match. */

const registry = serviceKinds()
const canTransition = (kind: TxnKind, from: TxnState, to: TxnState) =>
  canTransitionIn(registry.transitions, kind, from, to)
const KINDS = registry.kinds
const TRANSITIONS = (kind: TxnKind) => registry.declaration(kind).transitions
const STATES = TXN_STATES

/** Every state reachable from `from` in the kind's table. */
function reachable(kind: TxnKind, from: TxnState): Set<TxnState> {
  const seen = new Set<TxnState>([from])
  const queue = [from]
  while (queue.length > 0) {
    for (const next of TRANSITIONS(kind)[queue.shift()!] ?? []) {
      if (!seen.has(next)) queue.push(next)
      seen.add(next)
    }
  }
  return seen
}

describe('the transaction state machine', () => {
  it('lets nothing leave a final state, in any kind', () => {
    for (const kind of KINDS)
      for (const from of FINAL_STATES)
        for (const to of STATES)
          expect(canTransition(kind, from, to), `${kind}: ${from} -> ${to}`).toBe(false)
  })

  it('refuses what the table does not list: no going back, no skipping a rail step', () => {
    expect(canTransition('swap', 'quoted', 'srccreated')).toBe(false)
    expect(canTransition('onchain_send', 'srccreated', 'completed')).toBe(false)
    expect(canTransition('onchain_send', 'destsent', 'srccreated')).toBe(false)
    expect(canTransition('ln_receive', 'srccreated', 'failed')).toBe(false)
    expect(canTransition('tron_payout', 'quoted', 'destsent')).toBe(false)
    expect(canTransition('deposit', 'srccreated', 'failed')).toBe(false)
  })

  it('lets every quoted kind be confirmed, cancelled, expire or fail for want of funds', () => {
    for (const kind of KINDS) {
      if (initialState(kind) !== 'quoted') continue
      for (const exit of ['expired', 'usercanceled', 'failed'] as const)
        expect(canTransition(kind, 'quoted', exit), `${kind}: quoted -> ${exit}`).toBe(true)
    }
  })

  it('gives every kind a way to completion, and from every state it can reach a way to a final state', () => {
    for (const kind of KINDS) {
      const start = initialState(kind)
      const all = reachable(kind, start)
      expect(all.has('completed'), `${kind} can complete`).toBe(true)
      for (const state of all) {
        const ends = [...reachable(kind, state)].some((s) => FINAL_STATES.has(s))
        expect(ends, `${kind}: ${state} can end`).toBe(true)
      }
      // Every state the table names is reachable from the kind's start: no dead rows.
      for (const from of Object.keys(TRANSITIONS(kind)) as TxnState[])
        expect(all.has(from), `${kind}: ${from} is reachable`).toBe(true)
    }
  })

  it("maps each state to the contract's reqStatus of both sides", () => {
    const table = Object.fromEntries(STATES.map((s) => [s, reqStatuses(s)]))
    expect(table).toEqual({
      quoted: { src: '0', dest: '0' },
      srcintent: { src: '0', dest: '0' },
      srccreated: { src: '1', dest: '0' },
      processing: { src: '1', dest: '0' },
      destsent: { src: '2', dest: '1' },
      completed: { src: '2', dest: '2' },
      expired: { src: '3', dest: '3' },
      failed: { src: '3', dest: '3' },
      usercanceled: { src: '3', dest: '3' },
      rejected: { src: '3', dest: '3' },
      error: { src: '3', dest: '3' },
    })
  })
})
