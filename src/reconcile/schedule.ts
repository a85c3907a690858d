/**
 * Reconciliation on a schedule, in the worker (issue 18): every `RECONCILE_INTERVAL_S` seconds
 * (0, the default, leaves it off), one run at a time across every instance. An instance claims the
 * run by moving `next_run_at` forward in one conditional update; the claim holds a lease, so that a
 * run left unfinished by an instance that died is taken up by another once the lease ends.
 */
import { ConfigError } from '../config/config.js'
import type { Queryable } from '../db/db.js'
import { MATCH_WINDOW_MS, type ReconciliationReport } from './reconcile.js'
import { sql } from '../db/sql.js'

export function reconcileIntervalMs(env: Record<string, string | undefined>): number {
  const text = env.RECONCILE_INTERVAL_S
  if (text === undefined || text === '') return 0
  const seconds = Number(text)
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > 86_400)
    throw new ConfigError('RECONCILE_INTERVAL_S must be a whole number of seconds from 0 (off) to 86400')
  return seconds * 1000
}

/** RECONCILE_WINDOW_S: how far back item matching looks, in milliseconds (default 7 days). */
export function reconcileWindowMs(env: Record<string, string | undefined>): number {
  const text = env.RECONCILE_WINDOW_S
  if (text === undefined || text === '') return MATCH_WINDOW_MS
  const seconds = Number(text)
  if (!Number.isSafeInteger(seconds) || seconds < 60 || seconds > 90 * 86_400)
    throw new ConfigError('RECONCILE_WINDOW_S must be a whole number of seconds from 60 to 7776000 (90 days)')
  return seconds * 1000
}

/** Claim the run when it is due and nobody holds it; true when this caller won it. */
export async function claimRun(
  q: Queryable,
  now: number,
  intervalMs: number,
  leaseMs: number,
): Promise<boolean> {
  const nowParam = sql.param(now)
  const r = await q.query(
    sql`UPDATE reconcile_schedule SET next_run_at = ${nowParam}::int8 + ${intervalMs}::int8, lease_until = ${nowParam}::int8 + ${leaseMs}::int8
      WHERE id = 1 AND next_run_at <= ${nowParam} AND lease_until <= ${nowParam}`,
  )
  return r.rowCount > 0
}

/**
 * One step of the worker's reconciliation loop: run when this instance wins the claim. Returns false
 * (no more work now) either way; the loop sleeps and tries again.
 */
export async function runScheduledReconciliation(deps: {
  db: Queryable
  intervalMs: number
  /** The longest a run may hold the claim: the rails' time limit with room to spare. */
  leaseMs: number
  reconcile(): Promise<ReconciliationReport>
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void }
  now?: () => number
}): Promise<boolean> {
  const now = deps.now ?? Date.now
  if (deps.intervalMs <= 0) return false
  if (!(await claimRun(deps.db, now(), deps.intervalMs, deps.leaseMs))) return false
  let ok: boolean | null = null
  try {
    const report = await deps.reconcile()
    ok = report.ok && report.orphans.length === 0
    const deficits = report.rails
      .filter((e) => e.status === 'deficit')
      .map((e) => `${e.rail} ${e.delta} ${e.ccy}`)
    if (deficits.length)
      deps.log.warn({ deficits, paused: report.pausedRails ?? [] }, 'reconciliation found a deficit')
    const unknown = report.rails.filter((e) => e.status === 'unknown').map((e) => e.rail)
    if (unknown.length) deps.log.warn({ unknown }, 'reconciliation could not read every rail')
  } finally {
    await deps.db.query(
      sql`UPDATE reconcile_schedule SET lease_until = 0, last_run_at = ${now()}, last_ok = ${ok} WHERE id = 1`,
    )
  }
  return false
}
