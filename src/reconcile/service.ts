import type { RailCurrencies } from './refs.js'
import type { Db, Queryable } from '../db/db.js'
import type { Metrics } from '../http/observability.js'
import { RAIL_KINDS } from '../config/rail-ops.js'
import type { RailKind } from '../rails/rail.js'
import { precisionOf } from '../shared/currency.js'
import { reconcile, type ReconcilableRail, type ReconciliationReport } from './reconcile.js'
import { pausedRails, recordReadings, type BrakeSettings } from './brake.js'
import { sendAlert, type AlertSettings } from './alert.js'

/**
 * How a run is counted. A run reads every rail and updates the gauges; only a run with `record`
 * (the worker's schedule, or an operator's audited POST /admin/reconciliation/run) counts towards the
 * brake and sends alerts: a reading that can pause sends is a state change, so a plain read (GET
 * /admin/reconciliation, `svcpay reconcile`, the console's Run now) never does.
 */
export interface RunOptions {
  record?: {
    /** Written in the same database transaction as the readings (the operator's audit row). */
    inTx?: (q: Queryable, report: ReconciliationReport) => Promise<void>
  }
}

export type Reconciler = (opts?: RunOptions) => Promise<ReconciliationReport>

/**
 * Runs a reconciliation and publishes it as Prometheus gauges:
 * - `svcpay_reserve_delta{rail,ccy}`: the delta in minor units (satoshis, USDT's micro-units,
 *   dong); NaN while the rail is unknown, so that a rail that did not answer never reads as 0;
 * - `svcpay_reconciliation_orphans{rail}`: orphans found by item matching (0 until it is built).
 */
export function createReconciler(deps: {
  db: Db
  metrics: Metrics
  rails: ReconcilableRail[]
  /** The currency each rail holds and the kind that sends by it (the kind registry's `railCurrencies`). */
  railCurrencies: RailCurrencies
  timeoutMs: number
  /** RECONCILE_WINDOW_S in milliseconds: how far back item matching looks (default 7 days). */
  windowMs?: number
  /** Where set, every run counts its deficit readings for the brake (src/reconcile/brake.ts). */
  brake?: BrakeSettings
  /** ALERT_WEBHOOK_URL: told when a deficit appears or clears (needs `brake`, which keeps the readings). */
  alert?: AlertSettings
  log?: { warn(obj: object, msg: string): void }
}): Reconciler {
  const delta = deps.metrics.gauge(
    'svcpay_reserve_delta',
    'What the rail reports it holds less what the ledger says it holds, in minor units, at the last reconciliation (NaN: the rail did not answer)',
    ['rail', 'ccy'],
  )
  const orphans = deps.metrics.gauge(
    'svcpay_reconciliation_orphans',
    'Payments the rail and the ledger do not both know, at the last reconciliation',
    ['rail'],
  )
  return async (opts = {}) => {
    const report = await reconcile(deps.db, deps.rails, {
      timeoutMs: deps.timeoutMs,
      railCurrencies: deps.railCurrencies,
      ...(deps.windowMs === undefined ? {} : { windowMs: deps.windowMs }),
    })
    for (const e of report.rails) {
      // A gauge holds a float: the delta of one rail stays far below 2^53 minor units.
      delta.set({ rail: e.rail, ccy: e.ccy }, e.delta === null ? NaN : Number(minorOf(e.delta, e.ccy)))
    }
    for (const rail of RAIL_KINDS) {
      const unmatched = report.unmatched.some((u) => u.rail === rail)
      orphans.set({ rail }, unmatched ? NaN : report.orphans.filter((o) => o.rail === rail).length)
    }
    if (!deps.brake) return report
    if (!opts.record) {
      // A reading only: the brake's state is shown as it stands, never moved.
      report.pausedRails = await pausedRails(deps.db)
      return report
    }
    const brake = deps.brake
    const inTx = opts.record.inTx
    const counts = new Map<RailKind, number>()
    for (const rail of RAIL_KINDS)
      if (report.rails.some((e) => e.rail === rail) && !report.unmatched.some((u) => u.rail === rail))
        counts.set(rail, report.orphans.filter((o) => o.rail === rail).length)
    // The readings and the operator's audit row commit together, or neither does.
    const readings = await deps.db.tx(async (q) => {
      const r = await recordReadings(q, brake, report.rails, report.checkedAt, counts)
      report.pausedRails = r.paused
      if (inTx) await inTx(q, report)
      return r
    })
    const findings = [
      ...readings.appeared.map((rail) => ({ event: 'reconciliation.deficit' as const, rail })),
      ...readings.cleared.map((rail) => ({ event: 'reconciliation.cleared' as const, rail })),
      ...readings.orphansAppeared.map((rail) => ({ event: 'reconciliation.orphans' as const, rail })),
      ...readings.orphansCleared.map((rail) => ({
        event: 'reconciliation.orphans_cleared' as const,
        rail,
      })),
    ].map(({ event, rail }) => ({
      event,
      entry: report.rails.find((e) => e.rail === rail)!,
      orphans: counts.get(rail) ?? 0,
    }))
    if (deps.alert && findings.length)
      await sendAlert(deps.alert, findings, report.checkedAt, {
        timeoutMs: deps.timeoutMs,
        log: deps.log ?? { warn: () => {} },
      })
    return report
  }
}

/** Exact decimal text back to minor units without a float: digits after the point are kept as written. */
export function minorOf(text: string, ccy: string): bigint {
  const negative = text.startsWith('-')
  const [whole, frac = ''] = (negative ? text.slice(1) : text).split('.')
  const minor = BigInt(`${whole}${frac.padEnd(precisionOf(ccy), '0')}`)
  return negative ? -minor : minor
}
