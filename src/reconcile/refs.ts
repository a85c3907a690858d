import { sql, type Sql } from '../db/sql.js'
import type { RefSql } from '../ledger/rail-entries.js'
import { assert } from '../shared/assert.js'
import type { RailKind } from '../rails/rail.js'
import type { KindRegistry } from '../transactions/kinds.js'

/**
 * Each rail, the currency the ledger keeps for it, and the kind of transaction that sends by it: the
 * kind registry's `railCurrencies`, from the declarations' `reconcile` facts, handed to the
 * reconciliation, the capital bookings and the drift routes by the container.
 */
export type RailCurrencies = KindRegistry['railCurrencies']

/** The currency the ledger keeps for `rail`; asserts that the rail is reconciled. */
export function railCcy(railCurrencies: RailCurrencies, rail: RailKind): string {
  const found = railCurrencies.find((r) => r.rail === rail)
  assert(found !== undefined, `rail ${rail} is reconciled`)
  return found.ccy
}

/**
 * How the reference a rail knows a transaction by is read in SQL, over `transactions t` joined with
 * RAIL_REF_JOIN. On-chain the rail names payments by txid, which a transaction keeps apart from its
 * `rail_ref` (the address): a deposit's in `onchain_deposits`, a send's in `dest_details.txid` (the
 * latest after a fee bump). Elsewhere it is the `rail_ref`, except that a payout's return (whose
 * `rail_ref` names the payout) counts under the payout's own reference, so that a payout sent and
 * given back nets to zero, as it does at the partner.
 */
function railRef(rail: RailKind): Sql {
  if (rail === 'onchain')
    return sql`COALESCE((SELECT d.txid FROM onchain_deposits d WHERE d.txn_id = t.id ORDER BY d.created_at, d.vout LIMIT 1),
                     t.dest_details->>'txid')`
  return sql`COALESCE(o.rail_ref, t.rail_ref)`
}

/** The join railRef needs after `transactions t`. */
const RAIL_REF_JOIN = sql`LEFT JOIN transactions o ON t.kind = 'payout_return' AND o.id = t.rail_ref`

/**
 * The join and expression that give every journal entry its reference, over `journal_entries e`
 * left-joined with `transactions t` and RAIL_REF_JOIN: its transaction's (railRef), or, for the
 * entry that put a bank credit in suspense (which names no transaction), that credit's bank
 * reference, so that the transfer on the statement and the suspense entry match.
 */
const ENTRY_REF_JOINS = sql`${RAIL_REF_JOIN} LEFT JOIN bank_credits sc ON sc.suspense_entry_id = e.id`

/** How an entry's reference is read on `rail`, and the joins it needs (src/ledger/rail-entries.ts runs it). */
export function entryRef(rail: RailKind): RefSql {
  return { expr: sql`COALESCE(${railRef(rail)}, sc.bank_ref)`, joins: ENTRY_REF_JOINS }
}

/**
 * How long a credited bank transfer may be missing from the partner's statement before it is an
 * orphan of its own (`credit_not_on_statement`): the statement may list a transfer a little after
 * its notification came.
 */
export const CREDIT_STATEMENT_GRACE_MS = 3_600_000
