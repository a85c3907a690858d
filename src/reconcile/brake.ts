/**
 * The brake (issue 18): with `RECONCILE_HALT_SENDS=true`, sends on a rail are refused with 503
 * `sends_paused` once `RECONCILE_HALT_AFTER` reconciliations in a row (default 3) found a deficit on
 * it, and accepted again at the first reconciliation that finds none. A rail that could not be read
 * (`unknown`) changes nothing: it neither counts towards a pause nor lifts one, so a node that
 * times out never stops the service (a time-out is not a zero balance).
 *
 * What is refused: creating and confirming a send whose money leaves by that rail (Lightning send,
 * on-chain send, TRON payout, VND payout), and an operator's approval of one (sendsPausedFor).
 * A send confirmed before the pause waits in srccreated: the worker's send step asks the same and
 * hands nothing to the rail while it lasts. What is already on the rail is still followed.
 */
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { ConfigError } from '../config/config.js'
import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import { fieldOf, paramsOf } from '../http/request-fields.js'
import type { RailKind } from '../rails/rail.js'
import { ApiError } from '../shared/errors.js'
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

async function pausedRail(q: Queryable, rail: RailKind | undefined): Promise<RailKind | undefined> {
  if (!rail) return undefined
  const { rows } = await q.query(
    sql`SELECT 1 FROM reconcile_brake WHERE rail = ${rail} AND paused_at IS NOT NULL`,
  )
  return rows.length > 0 ? rail : undefined
}

function refuse(rail: RailKind): never {
  throw new ApiError(
    'sends_paused',
    `Sends on the ${rail} rail are paused: reconciliation found a deficit on it. Try again later.`,
  )
}

/** How long a send held by the brake waits before the worker looks at it again. */
export const PAUSED_RECHECK_MS = 60_000

const settingsOfEnv = new WeakMap<object, BrakeSettings>()

/** The brake settings of a configuration's environment (parsed once per environment object). */
export function brakeSettingsOf(config: { env: Record<string, string | undefined> }): BrakeSettings {
  let settings = settingsOfEnv.get(config.env)
  if (!settings) {
    settings = brakeSettings(config.env)
    settingsOfEnv.set(config.env, settings)
  }
  return settings
}

/**
 * The rail, when its brake holds a send by it now (RECONCILE_HALT_SENDS on and the rail paused), or
 * undefined. Every step that hands money to a rail asks first, naming the rail its kind declares:
 * the worker's send of a Lightning payment, an on-chain broadcast, a TRON or bank payout's
 * submission, and an operator's approval. A kind without a rail (undefined) is never held.
 */
export async function sendsPausedFor(
  q: Queryable,
  settings: BrakeSettings,
  rail: RailKind | undefined,
): Promise<RailKind | undefined> {
  if (!settings.haltSends) return undefined
  return pausedRail(q, rail)
}

/** Refuse a step (an approval) that would let money leave by a paused rail: 503 `sends_paused`. */
export async function refuseIfPaused(
  q: Queryable,
  settings: BrakeSettings,
  rail: RailKind | undefined,
): Promise<void> {
  const paused = await sendsPausedFor(q, settings, rail)
  if (paused) refuse(paused)
}

/**
 * Refuse send requests on a paused rail. Installed before the transaction routes, and only with
 * RECONCILE_HALT_SENDS=true (otherwise readings are still counted, for the report, but nothing is refused).
 */
export function installSendsBrake(
  app: FastifyInstance,
  deps: {
    db: Queryable
    settings: BrakeSettings
    kinds: Pick<KindRegistry, 'railOfSend' | 'railOfDestination'>
  },
): void {
  if (!deps.settings.haltSends) return
  app.addHook('preHandler', async (request) => {
    const route = request.routeOptions.url
    if (request.method === 'POST' && route === '/api/v2/transaction') {
      // A hook of many routes reads the body it was given (validated by then) by field.
      const method = fieldOf(fieldOf(request.body, 'destReq'), 'method')
      // Money leaving a wallet by a rail; a receive (svcpay destination) is never paused.
      const rail = typeof method === 'string' ? deps.kinds.railOfDestination(method) : undefined
      const paused = await pausedRail(deps.db, rail)
      if (paused) refuse(paused)
    } else if (request.method === 'PUT' && route === '/api/v2/transaction/:txnId/confirm') {
      const { txnId } = paramsOf(request, Type.Object({ txnId: Type.String() }))
      const { rows } = await deps.db.query<{ kind: string; state: string }>(
        sql`SELECT kind, state FROM transactions WHERE id = ${txnId}`,
      )
      // Only a quote is refused: confirming again a transaction already confirmed returns it unchanged.
      if (rows[0]?.state !== 'quoted') return
      const paused = await pausedRail(deps.db, deps.kinds.railOfSend(rows[0].kind))
      if (paused) refuse(paused)
    }
  })
}
