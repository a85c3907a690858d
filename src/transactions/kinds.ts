/**
 * The kind registry: what a kind of transaction is, declared once by the flow that serves it (each
 * flow's `kinds.ts`, listed for the service in src/wiring/kinds.ts) and assembled here into the lookups the
 * engine and its neighbours need (`kindFor`, `transitions`, `railOf`, `kindsWith`, ...). The
 * engine defines the shape of a declaration and never names a kind itself, so adding a kind touches
 * its flow's folder, src/wiring/kinds.ts and the container, and nothing in src/transactions.
 *
 * `TxnKind` is therefore an open string here, not a closed union: a closed union in the engine would
 * have to be edited for every new kind. What a union used to guarantee is checked instead when the
 * registry is made: every declaration has every fact (the compiler refuses a literal that lacks one,
 * `checkKinds` refuses one that lacks one at run time, at start and in a test), no two declare the
 * same method pair, and every state named is a state of the machine.
 */
import { RAIL_KINDS } from '../config/rail-ops.js'
import type { RailKind } from '../rails/rail.js'
import { assert } from '../shared/assert.js'
import type { CreateInput } from './flow.js'
import { kindForPairs, type AnnouncedMethod, type MethodPair } from './kind-for.js'
import { TXN_STATES, type TxnKind, type TxnState } from './state-machine.js'

export type { AnnouncedMethod, MethodPair, PairSide } from './kind-for.js'

/** The transitions a kind allows, from each state it can be in; any other is refused. */
export type TransitionTable = Partial<Record<TxnState, readonly TxnState[]>>

/** Everything about one kind of transaction. Every field is required, so none can be forgotten. */
export interface KindDeclaration {
  kind: TxnKind
  /**
   * The method pairs a create request names to make this kind, each served by this kind alone;
   * none for a kind the service creates itself (a deposit, a payout's return).
   */
  pairs: readonly MethodPair[]
  transitions: TransitionTable
  /** The rail the kind's money moves by; null for one that moves none outside the ledger (a swap). */
  rail: RailKind | null
  /** Money into the service, out of it, or between two wallets of an account. */
  direction: 'in' | 'out' | 'internal'
  /** The amount caps beyond the per-side one that a quote of this kind is held to. */
  caps: {
    /** The operator's largest receive (RECEIVE_MAX_BTC). */
    receiveMax: boolean
    /** Bitcoin's money supply, for a payment on a Bitcoin network. */
    bitcoinSupply: boolean
  }
  /**
   * The request field an over-cap destination amount is named by when neither side gave an amount
   * (the amount then came from the destination's own request, a Lightning invoice); null when a
   * destination amount is always `destReq.amtRequested`.
   */
  destAmountFrom: 'destReq.reqDetails.paymentRequest' | null
  /** Whether a confirm above the approval threshold waits for a second operator in `processing`. */
  approval: boolean
  /** The states in which it waits for on-chain confirmations (the sandbox's mined block looks again). */
  confirmationWaits: readonly TxnState[]
  /**
   * Whether the stuck listing (src/transactions/stuck.ts, GET /admin/transactions/stuck and the
   * gauge) watches it on its rail.
   */
  stuckWatch: boolean
  /** The states in which it waits for a payer rather than for its rail (src/transactions/stuck.ts). */
  payerWaits: readonly TxnState[]
  /**
   * For the one kind that sends by its rail: the currency the ledger keeps for that rail, which the
   * reconciliation compares with the rail's balance and whose sends it matches by reference; null
   * for every other kind.
   */
  reconcile: {
    ccy: string
    /**
     * What a send in flight will take out of the rail's account: its hold less the service fee
     * (which stays as revenue), or its destination amount (a payout, whose network fee is not paid
     * from the ledger's currency: TRX on TRON, the bank's own on a transfer). A send between two
     * currencies always leaves as its destination amount.
     */
    leaves: 'hold-less-fee' | 'destination'
  } | null
}

/** The registry's lookups, built once by the container from every flow's declarations. */
export interface KindRegistry {
  /** Every declared kind, in the order declared. */
  readonly kinds: readonly TxnKind[]
  /** The declaration of `kind`; asserts that it is declared. */
  declaration(kind: TxnKind): KindDeclaration
  /** Which kind serves a create request's method pair; throws the contract's refusal otherwise. */
  kindFor(input: CreateInput, walletCurrencies: readonly string[]): TxnKind
  /**
   * Each kind's transitions (the repository refuses any other: `canTransition` in repository.ts,
   * where every transition is written).
   */
  readonly transitions: ReadonlyMap<TxnKind, TransitionTable>
  /** The rail a kind's money moves by; undefined for a swap and for an unknown kind. */
  railOf(kind: TxnKind): RailKind | undefined
  /** The rail a kind that sends money out (direction 'out') sends by; undefined for any other kind. */
  railOfSend(kind: TxnKind): RailKind | undefined
  /** The rail money leaves by when a create request names this destination method; undefined for none. */
  railOfDestination(method: string): RailKind | undefined
  /** The kinds whose declaration satisfies `test`, in the order declared. */
  kindsWith(test: (d: KindDeclaration) => boolean): TxnKind[]
  /** Each (kind, state) waiting for on-chain confirmations. */
  readonly confirmationWaits: ReadonlyArray<{ kind: TxnKind; state: TxnState }>
  /** Each (kind, state) waiting for a payer. */
  readonly payerWaits: ReadonlyArray<{ kind: TxnKind; state: TxnState }>
  /** Each rail the ledger keeps a currency for, that currency, and the kind that sends by the rail. */
  readonly railCurrencies: ReadonlyArray<{
    rail: RailKind
    ccy: string
    kind: TxnKind
    leaves: 'hold-less-fee' | 'destination'
  }>
}

const FACTS: ReadonlyArray<keyof KindDeclaration> = [
  'kind',
  'pairs',
  'transitions',
  'rail',
  'direction',
  'caps',
  'destAmountFrom',
  'approval',
  'confirmationWaits',
  'stuckWatch',
  'payerWaits',
  'reconcile',
]

/**
 * Refuse an incomplete or contradictory set of declarations: a missing fact, a duplicate kind or
 * method pair, a state or rail that does not exist, an approval flag without its `processing` state
 * (or the other way round), a wait in a state the kind is never in, two kinds reconciled for one rail.
 */
export function checkKinds(declarations: readonly KindDeclaration[]): void {
  const kinds = new Set<string>()
  const pairs = new Map<string, string>()
  const reconciled = new Map<string, string>()
  for (const d of declarations) {
    for (const fact of FACTS)
      assert(d[fact] !== undefined, `kind ${String(d.kind)} does not declare its ${fact}`)
    assert(typeof d.kind === 'string' && d.kind !== '', 'a kind has a name')
    assert(!kinds.has(d.kind), `kind ${d.kind} is declared twice`)
    kinds.add(d.kind)
    assert(d.rail === null || RAIL_KINDS.includes(d.rail), `kind ${d.kind}: no rail ${d.rail}`)
    assert(['in', 'out', 'internal'].includes(d.direction), `kind ${d.kind}: no direction ${d.direction}`)
    assert(
      typeof d.caps.receiveMax === 'boolean' && typeof d.caps.bitcoinSupply === 'boolean',
      `kind ${d.kind} declares both of its caps`,
    )
    for (const [from, tos] of Object.entries(d.transitions)) {
      for (const state of [from, ...(tos ?? [])])
        assert(TXN_STATES.includes(state as TxnState), `kind ${d.kind}: no state ${state}`)
    }
    const inStates = new Set([...Object.keys(d.transitions), ...Object.values(d.transitions).flat()])
    assert(
      d.approval === inStates.has('processing'),
      `kind ${d.kind}: approval goes with the processing state`,
    )
    assert(!d.stuckWatch || d.rail !== null, `kind ${d.kind} is watched when stuck but has no rail`)
    for (const state of [...d.confirmationWaits, ...d.payerWaits])
      assert(d.transitions[state] !== undefined, `kind ${d.kind} never waits in ${state}`)
    for (const pair of d.pairs) {
      const key = `${pair.source.method}>${pair.dest.method}`
      const other = pairs.get(key)
      assert(other === undefined, `method pair ${key} is declared by both ${other} and ${d.kind}`)
      pairs.set(key, d.kind)
    }
    if (d.reconcile) {
      assert(d.rail !== null, `kind ${d.kind} is reconciled but has no rail`)
      assert(
        d.reconcile.leaves === 'hold-less-fee' || d.reconcile.leaves === 'destination',
        `kind ${d.kind}: reconcile.leaves is hold-less-fee or destination`,
      )
      const other = reconciled.get(d.rail)
      assert(other === undefined, `rail ${d.rail} is reconciled by both ${other} and ${d.kind}`)
      reconciled.set(d.rail, d.kind)
    }
  }
}

/**
 * The registry of `declarations` (checked first), with the methods a request may name that have no
 * kind yet (`announced`: refused as coming soon before anything else is looked at).
 */
export function createKindRegistry(
  declarations: readonly KindDeclaration[],
  announced: readonly AnnouncedMethod[] = [],
): KindRegistry {
  checkKinds(declarations)
  const byKind = new Map(declarations.map((d) => [d.kind, d]))
  const pairs = declarations.flatMap((d) => d.pairs.map((pair) => ({ kind: d.kind, pair })))
  const waits = (of: (d: KindDeclaration) => readonly TxnState[]) =>
    declarations.flatMap((d) => of(d).map((state) => ({ kind: d.kind, state })))
  const railOfDestination = new Map<string, RailKind>()
  for (const d of declarations) {
    if (d.direction !== 'out' || d.rail === null) continue
    for (const pair of d.pairs) railOfDestination.set(pair.dest.method, d.rail)
  }
  const declaration = (kind: TxnKind) => {
    const d = byKind.get(kind)
    assert(d, `kind ${kind} is not declared`)
    return d
  }
  return {
    kinds: declarations.map((d) => d.kind),
    declaration,
    kindFor: (input, walletCurrencies) => kindForPairs(pairs, announced, input, walletCurrencies),
    transitions: new Map(declarations.map((d) => [d.kind, d.transitions])),
    railOf: (kind) => byKind.get(kind)?.rail ?? undefined,
    railOfSend: (kind) => {
      const d = byKind.get(kind)
      return d?.direction === 'out' ? (d.rail ?? undefined) : undefined
    },
    railOfDestination: (method) => railOfDestination.get(method),
    kindsWith: (test) => declarations.filter(test).map((d) => d.kind),
    confirmationWaits: waits((d) => d.confirmationWaits),
    payerWaits: waits((d) => d.payerWaits),
    railCurrencies: declarations.flatMap((d) =>
      d.reconcile && d.rail
        ? [{ rail: d.rail, ccy: d.reconcile.ccy, kind: d.kind, leaves: d.reconcile.leaves }]
        : [],
    ),
  }
}
