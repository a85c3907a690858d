/**
 * Item matching by amount (issue 18): a payment both the rail and the ledger know, by its reference,
 * must have moved the same money. A payout the rail executed for more or less than the ledger
 * posted (a partner that paid another amount, a transfer fee taken out of the amount, a bug posting
 * the wrong figure) is reported with both amounts, as reason `amount_mismatch`.
 */
import type { Queryable } from '../db/db.js'
import type { RailKind, RailPayment } from '../rails/rail.js'
import { formatMinor } from '../shared/amount.js'
import type { Orphan } from './reconcile.js'
import { postedByRef, type RefSql } from '../ledger/rail-entries.js'

export async function amountMismatches(
  q: Queryable,
  input: {
    rail: RailKind
    ccy: string
    /** The rail's system account. */
    account: string
    payments: RailPayment[]
    /** References of the payments that some transaction with an entry on the account carries. */
    known: ReadonlySet<string>
    /** entryRef of the rail: how an entry's reference is read, and its joins. */
    ref: RefSql
  },
): Promise<Orphan[]> {
  // What the rail moved per reference, signed as money into the rail (in +, out -).
  const railByRef = new Map<string, { minor: bigint; at: number }>()
  for (const p of input.payments) {
    if (!input.known.has(p.ref)) continue
    const signed = p.direction === 'in' ? p.amountMinor : -p.amountMinor
    const seen = railByRef.get(p.ref)
    railByRef.set(p.ref, { minor: (seen?.minor ?? 0n) + signed, at: Math.min(seen?.at ?? p.at, p.at) })
  }
  if (railByRef.size === 0) return []
  // What the ledger posted on the account for those references, over every time: the rail's
  // account is credited (negative) by money coming in, so the ledger's figure is the negated sum.
  const rows = await postedByRef(q, { account: input.account, refs: [...railByRef.keys()], ref: input.ref })
  const out: Orphan[] = []
  for (const row of rows) {
    const rail = railByRef.get(row.rail_ref)!
    const ledgerMinor = -BigInt(row.total as bigint)
    if (ledgerMinor === rail.minor) continue
    out.push({
      rail: input.rail,
      side: 'both',
      reason: 'amount_mismatch',
      ref: row.rail_ref,
      txnId: row.txn_id,
      ccy: input.ccy,
      amount: formatMinor(rail.minor - ledgerMinor, input.ccy),
      railAmount: formatMinor(rail.minor, input.ccy),
      ledgerAmount: formatMinor(ledgerMinor, input.ccy),
      at: rail.at,
    })
  }
  return out
}
