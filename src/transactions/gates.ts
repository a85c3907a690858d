import type { Queryable } from '../db/db.js'
import type { ApiError } from '../shared/errors.js'
import type { TxnKind } from './state-machine.js'
import type { NewTxn, Txn } from './txn.js'
import type { RateSnapshot } from '../rates/service.js'
import type { Mover } from './service.js'

/**
 * Confirm gates: checks that other modules put in front of a confirm (four-eyes approval, the
 * reconciliation brake, and the limits a later issue adds), handed to the engine by the container
 * so that the engine imports none of them. Each gate says once, when the engine is built, which
 * kinds it concerns; a kind no gate concerns (a swap, usually) runs no gate code at all, and keeps
 * its one-statement confirm.
 *
 * A gate runs inside the confirm's database transaction, with the transaction's row locked and
 * still `quoted`, before its funds are held. It passes, refuses (the whole confirm rolls back, so a
 * refused confirm changes nothing), or holds: the funds are held as for any confirm, the gate
 * records what it needs, and the transaction waits in `processing` until `until`, when the worker
 * hands it back to the gate (`heldDue`).
 */
export type GateVerdict =
  | { verdict: 'pass' }
  | { verdict: 'refuse'; error: ApiError }
  | { verdict: 'hold'; until: number; record(q: Queryable): Promise<void> }

export const PASS: GateVerdict = { verdict: 'pass' }

export interface ConfirmGate {
  name: string
  /** Whether this gate has anything to say about a kind; asked once per kind. */
  concerns(kind: TxnKind): boolean
  /** At create, before anything is read or quoted: an error refuses the request. */
  atCreate?(q: Queryable, kind: TxnKind): Promise<ApiError | undefined>
  /**
   * At create, once the flow has quoted and before the quote is written (no database transaction
   * is open; the row does not exist yet): the quote-to-be with its amounts and destination, and
   * the rates it was quoted at. An error refuses the request and nothing is written.
   */
  atQuote?(q: Queryable, quote: NewTxn, rates: RateSnapshot): Promise<ApiError | undefined>
  /** At confirm, inside its transaction (see above). */
  atConfirm(q: Queryable, txn: Txn, at: number): Promise<GateVerdict>
  /**
   * The worker's call for a held transaction of a kind this gate concerns whose check came due,
   * under the transaction's row lock; a gate that did not hold it leaves it alone.
   */
  heldDue?(q: Queryable, txn: Txn, move: Mover, at: number): Promise<void>
}

/** The gates of each kind, in the order given. */
export type GatesByKind = ReadonlyMap<TxnKind, readonly ConfirmGate[]>

export function gatesByKind(kinds: readonly TxnKind[], gates: readonly ConfirmGate[]): GatesByKind {
  return new Map(kinds.map((kind) => [kind, gates.filter((g) => g.concerns(kind))]))
}

/** The gates of a kind; none for a kind the registry does not know (its flow refuses it anyway). */
export function gatesOf(gates: GatesByKind, kind: TxnKind): readonly ConfirmGate[] {
  return gates.get(kind) ?? []
}

/**
 * The gates' verdict on a confirm: the first refusal is thrown; the holds are returned for the
 * caller to apply once the funds are held. Gates run in order, so an earlier gate's refusal wins.
 */
export async function runConfirmGates(
  gates: readonly ConfirmGate[],
  q: Queryable,
  txn: Txn,
  at: number,
): Promise<Array<Extract<GateVerdict, { verdict: 'hold' }>>> {
  const holds: Array<Extract<GateVerdict, { verdict: 'hold' }>> = []
  for (const gate of gates) {
    const v = await gate.atConfirm(q, txn, at)
    if (v.verdict === 'refuse') throw v.error
    if (v.verdict === 'hold') holds.push(v)
  }
  return holds
}

/** The gates' say at create: the first refusal is thrown. */
export async function runCreateGates(
  gates: readonly ConfirmGate[],
  q: Queryable,
  kind: TxnKind,
): Promise<void> {
  for (const gate of gates) {
    const error = await gate.atCreate?.(q, kind)
    if (error) throw error
  }
}

/** The gates' say on a quote before it is written: the first refusal is thrown. */
export async function runQuoteGates(
  gates: readonly ConfirmGate[],
  q: Queryable,
  quote: NewTxn,
  rates: RateSnapshot,
): Promise<void> {
  for (const gate of gates) {
    const error = await gate.atQuote?.(q, quote, rates)
    if (error) throw error
  }
}
