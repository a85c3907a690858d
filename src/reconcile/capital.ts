/**
 * Operator capital (issue 18). A real service funds its rails with its own money: USDT and TRX in
 * the TRON hot wallet, a float with the bank partner, a Lightning node's channels. No customer's
 * transaction explains that money, so until it is booked the books say the rail holds less than it
 * does, and reconciliation can never come to zero. Booking it is one balanced journal entry between
 * the rail's system account and the equity account `sys:capital:<ccy>`:
 * - `in` (the operator put money on the rail): the rail's account is credited like a deposit
 *   (its posting is negative, so the ledger's figure for the rail rises), equity the other way;
 * - `out` (the operator took money off it): the reverse.
 * The entry carries no transaction (kind `operator_capital`); the row in operator_capital says who
 * booked it, why, and under which reference, which makes a repeated request book nothing twice.
 */
import type { Queryable } from '../db/db.js'
import { entryCtes, systemAccountId, type SystemPurpose } from '../ledger/ledger.js'
import { sql } from '../db/sql.js'
import type { RailKind } from '../rails/rail.js'
import { formatMinor } from '../shared/amount.js'
import { assert } from '../shared/assert.js'
import { ApiError } from '../shared/errors.js'
import { railCcy, type RailCurrencies } from './refs.js'

export const CAPITAL_ENTRY_KIND = 'operator_capital'
export const CAPITAL_PAGE_SIZE_MAX = 200

export interface CapitalInput {
  rail: RailKind
  ccy: string
  direction: 'in' | 'out'
  amountMinor: bigint
  note: string
  reference: string
  operatorId: string
  now: number
}

export interface CapitalMovement {
  id: string
  reference: string
  rail: RailKind
  ccy: string
  direction: 'in' | 'out'
  /** Exact decimal text. */
  amount: string
  note: string
  operatorId: string
  at: number
  /** True when this answer is the booking an earlier request with the same reference made. */
  replayed: boolean
}

interface Row {
  id: unknown
  reference: string
  rail: RailKind
  ccy: string
  direction: 'in' | 'out'
  amount_minor: unknown
  note: string
  operator_id: string
  created_at: unknown
}

function present(row: Row, replayed: boolean): CapitalMovement {
  return {
    id: String(row.id),
    reference: row.reference,
    rail: row.rail,
    ccy: row.ccy,
    direction: row.direction,
    amount: formatMinor(BigInt(row.amount_minor as bigint), row.ccy),
    note: row.note,
    operatorId: row.operator_id,
    at: Number(row.created_at),
    replayed,
  }
}

/**
 * Books a capital movement, once per reference: the row and its journal entry are written by one
 * statement, so that two requests racing with one reference book it once. A reference used before
 * for the same movement answers that booking; for another movement it is refused.
 */
export async function bookCapital(
  q: Queryable,
  input: CapitalInput,
  railCurrencies: RailCurrencies,
): Promise<CapitalMovement> {
  const expected = railCcy(railCurrencies, input.rail)
  if (input.ccy !== expected)
    throw new ApiError('invalid_request', `The ${input.rail} rail holds ${expected}, not ${input.ccy}`, [
      { field: 'ccy', issue: `must be ${expected} for the ${input.rail} rail` },
    ])
  assert(input.amountMinor > 0n, 'a capital movement moves a positive amount')
  const signed = input.direction === 'in' ? input.amountMinor : -input.amountMinor
  const insert = sql`booked AS (
     INSERT INTO operator_capital (reference, rail, ccy, direction, amount_minor, note, operator_id, created_at)
     VALUES (${input.reference}, ${input.rail}, ${input.ccy}, ${input.direction}, ${input.amountMinor},
             ${input.note}, ${input.operatorId}, ${input.now})
     ON CONFLICT (reference) DO NOTHING RETURNING *)`
  const entry = entryCtes(
    {
      txnId: null,
      kind: CAPITAL_ENTRY_KIND,
      now: input.now,
      postings: [
        {
          accountId: systemAccountId(input.rail as SystemPurpose, input.ccy),
          ccy: input.ccy,
          amount: -signed,
        },
        { accountId: systemAccountId('capital', input.ccy), ccy: input.ccy, amount: signed },
      ],
    },
    sql`EXISTS (SELECT 1 FROM booked)`,
  )
  assert(entry !== undefined, 'a capital entry has postings')
  const { rows } = await q.query<Row & { ok: boolean }>(
    sql`WITH ${insert}, ${entry.ctes} SELECT booked.*, ${entry.check} AS ok FROM (SELECT 1) one LEFT JOIN booked ON true`,
  )
  if (rows[0]?.id !== null && rows[0]?.id !== undefined) return present(rows[0], false)
  const { rows: earlier } = await q.query<Row>(
    sql`SELECT * FROM operator_capital WHERE reference = ${input.reference}`,
  )
  const first = earlier[0]
  assert(first !== undefined, 'a reference that conflicted has its row')
  const same =
    first.rail === input.rail &&
    first.ccy === input.ccy &&
    first.direction === input.direction &&
    BigInt(first.amount_minor as bigint) === input.amountMinor
  if (!same)
    throw new ApiError('duplicate_ext_ref_id', 'This reference was used for another capital movement', [
      { field: 'reference', issue: 'already books a different movement' },
    ])
  return present(first, true)
}

/** Capital movements, newest first. */
export async function listCapital(q: Queryable, limit: number): Promise<CapitalMovement[]> {
  const { rows } = await q.query<Row>(
    sql`SELECT * FROM operator_capital ORDER BY id DESC LIMIT ${Math.min(Math.max(1, limit), CAPITAL_PAGE_SIZE_MAX)}`,
  )
  return rows.map((r) => present(r, false))
}

/** Net capital booked on each rail's account, in minor units (in less out). */
export async function capitalByRail(q: Queryable): Promise<Map<RailKind, bigint>> {
  const { rows } = await q.query<{ rail: RailKind; total: unknown }>(
    sql`SELECT rail, SUM(CASE WHEN direction = 'in' THEN amount_minor ELSE -amount_minor END)::int8 AS total
       FROM operator_capital GROUP BY rail`,
  )
  return new Map(rows.map((r) => [r.rail, BigInt(r.total as bigint)]))
}
