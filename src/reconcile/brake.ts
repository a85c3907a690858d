/**
 * The brake (issue 18): with `RECONCILE_HALT_SENDS=true`, sends on a rail are refused with 503
 * `sends_paused` once `RECONCILE_HALT_AFTER` reconciliations in a row (default 3) found a deficit on
 * it, and accepted again at the first reconciliation that finds none. A rail that could not be read
 * (`unknown`) changes nothing: it neither counts towards a pause nor lifts one, so a node that
 * times out never stops the service (a time-out is not a zero balance).
 *
 * What is refused: creating and confirming a send whose money leaves by that rail (Lightning send,
 * on-chain send, TRON payout, VND payout: the engine's confirm gate, `brakeGate`), and an operator's
 * approval or fee bump of one (`createSendsBrake`, handed to approvals and the flows). A send
 * confirmed before the pause waits in srccreated: the worker's send step asks the same and hands
 * nothing to the rail while it lasts. What is already on the rail is still followed.
 */
import { ConfigError } from '../config/config.js'
import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import type { RailKind, SendsBrake } from '../rails/rail.js'
import { ApiError } from '../shared/errors.js'
import { PASS, type ConfirmGate } from '../transactions/gates.js'
import type { KindRegistry } from '../transactions/kinds.js'
import type { RailStatus } from './reconcile.js'

export interface BrakeSettings {
  haltSends: boolean
  haltAfter: number
}

export function brakeSettings(env: Record<string, string | undefined>): BrakeSettings {
  const halt = env.RECONCILE_HALT_SENDS ?? ''
  if (!['', 'true', 'false', '1', '0'].includes(halt))
    throw new ConfigError('RECONCILE_HALT_SENDS must be true or false')
  const after = env.RECONCILE_HALT_AFTER ? Number(env.RECONCILE_HALT_AFTER) : 3
  if (!Number.isSafeInteger(after) || after < 1 || after > 1_000)
    throw new ConfigError('RECONCILE_HALT_AFTER must be a whole number from 1 to 1000')
  return { haltSends: halt === 'true' || halt === '1', haltAfter: after }
}

/**
 * Record one reconciliation's verdict per rail. Returns the rails paused after it, and the rails on
 * which a deficit appeared (none at the reading before) or cleared (one at the reading before).
 */
export async function recordReadings(
  q: Queryable,
  settings: BrakeSettings,
  readings: Array<{ rail: RailKind; status: RailStatus }>,
  now: number,
  /** Orphans per rail that item matching could read; a rail left out keeps its last count. */
  orphanCounts: Map<RailKind, number> = new Map(),
): Promise<{
  paused: RailKind[]
  appeared: RailKind[]
  cleared: RailKind[]
  orphansAppeared: RailKind[]
  orphansCleared: RailKind[]
}> {
  const before = await q.query<{ rail: RailKind; deficit_readings: number; orphans: number }>(
    sql`SELECT rail, deficit_readings, orphans FROM reconcile_brake`,
  )
  const hadDeficit = new Set(before.rows.filter((r) => Number(r.deficit_readings) > 0).map((r) => r.rail))
  const hadOrphans = new Set(before.rows.filter((r) => Number(r.orphans) > 0).map((r) => r.rail))
  const appeared: RailKind[] = []
  const cleared: RailKind[] = []
  const orphansAppeared: RailKind[] = []
  const orphansCleared: RailKind[] = []
  for (const [rail, count] of orphanCounts) {
    if (count > 0 && !hadOrphans.has(rail)) orphansAppeared.push(rail)
    if (count === 0 && hadOrphans.has(rail)) orphansCleared.push(rail)
    const [orphans, at] = [sql.param(count), sql.param(now)]
    await q.query(
      sql`INSERT INTO reconcile_brake (rail, orphans, updated_at) VALUES (${rail}, ${orphans}, ${at})
       ON CONFLICT (rail) DO UPDATE SET orphans = ${orphans}, updated_at = ${at}`,
    )
  }
  for (const { rail, status } of readings) {
    if (status === 'unknown') continue
    if (status === 'deficit' && !hadDeficit.has(rail)) appeared.push(rail)
    if (status !== 'deficit' && hadDeficit.has(rail)) cleared.push(rail)
    const at = sql.param(now)
    if (status === 'deficit') {
      const [halt, after] = [sql.param(settings.haltSends), sql.param(settings.haltAfter)]
      await q.query(
        sql`INSERT INTO reconcile_brake (rail, deficit_readings, paused_at, updated_at)
         VALUES (${rail}, 1, CASE WHEN ${halt}::boolean AND 1 >= ${after}::int THEN ${at}::int8 END, ${at})
         ON CONFLICT (rail) DO UPDATE SET
           deficit_readings = reconcile_brake.deficit_readings + 1,
           paused_at = COALESCE(reconcile_brake.paused_at,
             CASE WHEN ${halt}::boolean AND reconcile_brake.deficit_readings + 1 >= ${after}::int THEN ${at}::int8 END),
           updated_at = ${at}`,
      )
    } else {
      await q.query(
        sql`INSERT INTO reconcile_brake (rail, deficit_readings, paused_at, updated_at) VALUES (${rail}, 0, NULL, ${at})
         ON CONFLICT (rail) DO UPDATE SET deficit_readings = 0, paused_at = NULL, updated_at = ${at}`,
      )
    }
  }
  return { paused: await pausedRails(q), appeared, cleared, orphansAppeared, orphansCleared }
}

/** The rails whose sends the brake holds now, as recorded by the last counted readings. */
export async function pausedRails(q: Queryable): Promise<RailKind[]> {
  const { rows } = await q.query<{ rail: RailKind }>(
    sql`SELECT rail FROM reconcile_brake WHERE paused_at IS NOT NULL ORDER BY rail`,
  )
  return rows.map((r) => r.rail)
}

async function pausedRail(q: Queryable, rail: RailKind | null | undefined): Promise<RailKind | undefined> {
  if (!rail) return undefined
  const { rows } = await q.query(
    sql`SELECT 1 FROM reconcile_brake WHERE rail = ${rail} AND paused_at IS NOT NULL`,
  )
  return rows.length > 0 ? rail : undefined
}

function sendsPaused(rail: RailKind): ApiError {
  return new ApiError(
    'sends_paused',
    `Sends on the ${rail} rail are paused: reconciliation found a deficit on it. Try again later.`,
  )
}

/**
 * The brake the container hands the flows and approvals (src/rails/rail.ts SendsBrake). With
 * RECONCILE_HALT_SENDS off it never reads anything: readings are still counted, for the report, but
 * nothing is held.
 */
export function createSendsBrake(settings: BrakeSettings): SendsBrake {
  const pausedFor: SendsBrake['pausedFor'] = async (q, rail) =>
    settings.haltSends ? pausedRail(q, rail) : undefined
  return {
    pausedFor,
    async refuseIfPaused(q, rail) {
      const paused = await pausedFor(q, rail)
      if (paused) throw sendsPaused(paused)
    },
  }
}

/**
 * The brake as a confirm gate of the engine (src/transactions/gates.ts): a create or a confirm of a
 * send whose money would leave by a paused rail is refused with 503 `sends_paused`, and changes
 * nothing. It concerns only kinds that send by a rail, and none at all with the brake off, so a swap
 * (and every confirm while the brake is off) runs no brake code.
 */
export function brakeGate(settings: BrakeSettings, kinds: Pick<KindRegistry, 'railOfSend'>): ConfirmGate {
  const refusal = async (q: Queryable, kind: string): Promise<ApiError | undefined> => {
    const paused = await pausedRail(q, kinds.railOfSend(kind))
    return paused && sendsPaused(paused)
  }
  return {
    name: 'reconciliation brake',
    concerns: (kind) => settings.haltSends && kinds.railOfSend(kind) !== undefined,
    atCreate: refusal,
    async atConfirm(q, txn) {
      const error = await refusal(q, txn.kind)
      return error ? { verdict: 'refuse', error } : PASS
    },
  }
}
