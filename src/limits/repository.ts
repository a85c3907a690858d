import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import { stillCounts } from '../transactions/reads.js'

/**
 * The limits' statements (tables of migration 040, owned by this module). What a window has used is
 * summed from `limit_usage` over the rows whose transaction still counts (`stillCounts`, read
 * through the transactions module), so a transaction that ends without moving its money gives its
 * amount back in the very database transaction that changes its state.
 */

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS
export const MONTH_MS = 30 * DAY_MS

/** Lock classes of pg_advisory_xact_lock(int, int): an account's confirms, a rail's hot wallet. */
const ACCOUNT_LOCK = 31_001
const RAIL_LOCK = 31_002

/** Serialise the limit checks of one account's confirms until the caller's transaction ends. */
export async function lockAccountLimits(q: Queryable, accountId: string): Promise<void> {
  await q.query(sql`SELECT pg_advisory_xact_lock(${ACCOUNT_LOCK}::int, hashtext(${accountId}))`)
}

/** Serialise the hot-wallet checks of one rail until the caller's transaction ends. */
export async function lockRailCap(q: Queryable, rail: string): Promise<void> {
  await q.query(sql`SELECT pg_advisory_xact_lock(${RAIL_LOCK}::int, hashtext(${rail}))`)
}

export interface UsageRow {
  txnId: string
  accountId: string
  direction: 'in' | 'out'
  method: string
  rail: string | null
  refCcy: string
  refMinor: bigint
  railMinor: bigint
  destination: string | null
  quotedAt: number
}

/** What a quote will count, written when it is quoted (counted_at stays null until its confirm). */
export async function writeQuoted(q: Queryable, row: UsageRow): Promise<void> {
  await q.query(
    sql`INSERT INTO limit_usage (txn_id, account_id, direction, method, rail, ref_ccy, ref_minor, rail_minor, destination, quoted_at)
        VALUES (${row.txnId}, ${row.accountId}, ${row.direction}, ${row.method}, ${row.rail}, ${row.refCcy},
                ${row.refMinor}, ${row.railMinor}, ${row.destination}, ${row.quotedAt})
        ON CONFLICT (txn_id) DO UPDATE SET ref_ccy = EXCLUDED.ref_ccy, ref_minor = EXCLUDED.ref_minor,
          rail_minor = EXCLUDED.rail_minor, destination = EXCLUDED.destination`,
  )
}

export async function quotedUsage(q: Queryable, txnId: string): Promise<UsageRow | undefined> {
  const { rows } = await q.query<Record<string, unknown>>(
    sql`SELECT txn_id, account_id, direction, method, rail, ref_ccy, ref_minor, rail_minor, destination, quoted_at
        FROM limit_usage WHERE txn_id = ${txnId}`,
  )
  const r = rows[0]
  if (!r) return undefined
  return {
    txnId: r.txn_id as string,
    accountId: r.account_id as string,
    direction: r.direction as 'in' | 'out',
    method: r.method as string,
    rail: (r.rail as string | null) ?? null,
    refCcy: r.ref_ccy as string,
    refMinor: BigInt(r.ref_minor as string),
    railMinor: BigInt(r.rail_minor as string),
    destination: (r.destination as string | null) ?? null,
    quotedAt: Number(r.quoted_at),
  }
}

/** Count a confirmed transaction from `at` on. */
export async function markCounted(q: Queryable, txnId: string, at: number): Promise<void> {
  await q.query(sql`UPDATE limit_usage SET counted_at = ${at} WHERE txn_id = ${txnId}`)
}

/** One method's use of an account's windows, in one direction. */
export interface MethodUse {
  method: string
  day: bigint
  month: bigint
  hourCount: number
  /** When the oldest counted amount of each window was counted; null when the window is empty. */
  dayOldest: number | null
  monthOldest: number | null
  hourOldest: number | null
}

/**
 * What an account's transactions in `direction` still count in the rolling windows ending at `at`
 * (24 hours, 30 days, and the sends of the last hour), per method; `except` is left out (the
 * transaction being checked). Amounts in minor units of `refCcy`: a row counted in another currency
 * (LIMITS_CCY changed since) is left out.
 */
export async function windowUse(
  q: Queryable,
  opts: { accountId: string; direction: 'in' | 'out'; refCcy: string; at: number; except?: string },
): Promise<MethodUse[]> {
  const day = sql.param(opts.at - DAY_MS)
  const hour = sql.param(opts.at - HOUR_MS)
  const { rows } = await q.query<Record<string, unknown>>(
    sql`SELECT u.method,
          COALESCE(SUM(u.ref_minor) FILTER (WHERE u.counted_at > ${day}), 0)::text AS day,
          COALESCE(SUM(u.ref_minor), 0)::text AS month,
          COUNT(*) FILTER (WHERE u.counted_at > ${hour})::int AS hour_count,
          MIN(u.counted_at) FILTER (WHERE u.counted_at > ${day}) AS day_oldest,
          MIN(u.counted_at) AS month_oldest,
          MIN(u.counted_at) FILTER (WHERE u.counted_at > ${hour}) AS hour_oldest
        FROM limit_usage u
        WHERE u.account_id = ${opts.accountId} AND u.direction = ${opts.direction}
          -- No upper bound: a confirm's time is read before it waits for the account's lock, so one
          -- that took the lock first may have counted itself at a later instant; it counts all the same.
          AND u.counted_at > ${opts.at - MONTH_MS}
          AND u.ref_ccy = ${opts.refCcy} AND u.txn_id <> ${opts.except ?? ''}
          AND ${stillCounts(sql`u.txn_id`, { held: true })}
        GROUP BY u.method`,
  )
  const time = (v: unknown) => (v === null || v === undefined ? null : Number(v))
  return rows.map((r) => ({
    method: r.method as string,
    day: BigInt(r.day as string),
    month: BigInt(r.month as string),
    hourCount: Number(r.hour_count),
    dayOldest: time(r.day_oldest),
    monthOldest: time(r.month_oldest),
    hourOldest: time(r.hour_oldest),
  }))
}

/**
 * When the account first quoted a send to `destination` (the start of its cool-down), and whether
 * the account has paid it before (a counted send to it that still counts).
 */
export async function destinationHistory(
  q: Queryable,
  accountId: string,
  destination: string,
): Promise<{ firstQuotedAt: number | null }> {
  const { rows } = await q.query<{ first: unknown }>(
    sql`SELECT MIN(quoted_at) AS first FROM limit_usage
        WHERE account_id = ${accountId} AND destination = ${destination} AND direction = 'out'`,
  )
  const first = rows[0]?.first
  return { firstQuotedAt: first === null || first === undefined ? null : Number(first) }
}

/** What left a rail's hot wallet in the hour ending at `at` (held sends not yet), and its oldest time. */
export async function railHourUse(
  q: Queryable,
  rail: string,
  at: number,
  except: string,
): Promise<{ sum: bigint; oldest: number | null }> {
  const { rows } = await q.query<{ sum: string; oldest: unknown }>(
    sql`SELECT COALESCE(SUM(u.rail_minor), 0)::text AS sum, MIN(u.counted_at) AS oldest
        FROM limit_usage u
        WHERE u.rail = ${rail} AND u.direction = 'out' AND u.counted_at > ${at - HOUR_MS}
          AND u.txn_id <> ${except} AND ${stillCounts(sql`u.txn_id`, { held: false })}`,
  )
  const oldest = rows[0]?.oldest
  return {
    sum: BigInt(rows[0]?.sum ?? '0'),
    oldest: oldest === null || oldest === undefined ? null : Number(oldest),
  }
}

export interface Override {
  name: string
  method: string
  amount: bigint
  refCcy: string
  reason: string
  setBy: string
  setAt: number
  expiresAt: number | null
}

export interface AccountLimitSettings {
  tier: string | null
  allowListOnly: boolean
  overrides: Override[]
  /** Whether `destination` (when asked) is on the account's allow-list. */
  allowed: boolean
}

/** An account's operator settings, its unexpired overrides, and whether `destination` is allowed. */
export async function accountSettings(
  q: Queryable,
  accountId: string,
  at: number,
  destination?: string,
): Promise<AccountLimitSettings> {
  const { rows } = await q.query<Record<string, unknown>>(
    sql`SELECT a.tier, COALESCE(a.allow_list_only, false) AS allow_list_only,
          EXISTS (SELECT 1 FROM limit_allow_list l WHERE l.account_id = ${accountId} AND l.destination = ${destination ?? ''}) AS allowed,
          o.name, o.method, o.amount::text AS amount, o.ref_ccy, o.reason, o.set_by, o.set_at, o.expires_at
        FROM (SELECT 1) one
        LEFT JOIN limit_accounts a ON a.account_id = ${accountId}
        LEFT JOIN limit_overrides o ON o.account_id = ${accountId} AND (o.expires_at IS NULL OR o.expires_at > ${at})
        ORDER BY o.name, o.method`,
  )
  const first = rows[0]
  return {
    tier: (first?.tier as string | null) ?? null,
    allowListOnly: first?.allow_list_only === true,
    allowed: first?.allowed === true,
    overrides: rows
      .filter((r) => r.name !== null && r.name !== undefined)
      .map((r) => ({
        name: r.name as string,
        method: r.method as string,
        amount: BigInt(r.amount as string),
        refCcy: r.ref_ccy as string,
        reason: r.reason as string,
        setBy: r.set_by as string,
        setAt: Number(r.set_at),
        expiresAt: r.expires_at === null ? null : Number(r.expires_at),
      })),
  }
}

/** Set (or clear, with tier null) an account's limits tier and its allow-list mode. */
export async function writeAccountSettings(
  q: Queryable,
  accountId: string,
  patch: { tier?: string | null; allowListOnly?: boolean },
  at: number,
): Promise<void> {
  await q.query(
    sql`INSERT INTO limit_accounts (account_id, tier, allow_list_only, updated_at)
        VALUES (${accountId}, ${patch.tier ?? null}, ${patch.allowListOnly ?? false}, ${at})
        ON CONFLICT (account_id) DO UPDATE SET
          tier = ${patch.tier === undefined ? sql`limit_accounts.tier` : sql`EXCLUDED.tier`},
          allow_list_only = ${patch.allowListOnly === undefined ? sql`limit_accounts.allow_list_only` : sql`EXCLUDED.allow_list_only`},
          updated_at = EXCLUDED.updated_at`,
  )
}

export async function writeOverride(q: Queryable, accountId: string, o: Override): Promise<void> {
  await q.query(
    sql`INSERT INTO limit_overrides (account_id, name, method, amount, ref_ccy, reason, set_by, set_at, expires_at)
        VALUES (${accountId}, ${o.name}, ${o.method}, ${o.amount}, ${o.refCcy}, ${o.reason}, ${o.setBy}, ${o.setAt}, ${o.expiresAt})
        ON CONFLICT (account_id, name, method) DO UPDATE SET amount = EXCLUDED.amount, ref_ccy = EXCLUDED.ref_ccy,
          reason = EXCLUDED.reason, set_by = EXCLUDED.set_by, set_at = EXCLUDED.set_at, expires_at = EXCLUDED.expires_at`,
  )
}

/** Remove an override; whether there was one. */
export async function deleteOverride(
  q: Queryable,
  accountId: string,
  name: string,
  method: string,
): Promise<boolean> {
  const r = await q.query(
    sql`DELETE FROM limit_overrides WHERE account_id = ${accountId} AND name = ${name} AND method = ${method}`,
  )
  return r.rowCount > 0
}

export async function addAllowed(
  q: Queryable,
  accountId: string,
  entry: { destination: string; reason: string; addedBy: string; addedAt: number },
): Promise<void> {
  await q.query(
    sql`INSERT INTO limit_allow_list (account_id, destination, reason, added_by, added_at)
        VALUES (${accountId}, ${entry.destination}, ${entry.reason}, ${entry.addedBy}, ${entry.addedAt})
        ON CONFLICT (account_id, destination) DO UPDATE SET reason = EXCLUDED.reason, added_by = EXCLUDED.added_by, added_at = EXCLUDED.added_at`,
  )
}

export async function removeAllowed(q: Queryable, accountId: string, destination: string): Promise<boolean> {
  const r = await q.query(
    sql`DELETE FROM limit_allow_list WHERE account_id = ${accountId} AND destination = ${destination}`,
  )
  return r.rowCount > 0
}

/** An account's allow-list, newest first; at most `limit`. */
export async function allowList(
  q: Queryable,
  accountId: string,
  limit: number,
): Promise<Array<{ destination: string; reason: string; addedBy: string; addedAt: number }>> {
  const { rows } = await q.query<Record<string, unknown>>(
    sql`SELECT destination, reason, added_by, added_at FROM limit_allow_list WHERE account_id = ${accountId}
        ORDER BY added_at DESC, destination LIMIT ${sql.int(limit)}`,
  )
  return rows.map((r) => ({
    destination: r.destination as string,
    reason: r.reason as string,
    addedBy: r.added_by as string,
    addedAt: Number(r.added_at),
  }))
}
