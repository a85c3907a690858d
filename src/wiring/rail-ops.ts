import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { Db } from '../db/db.js'
import type { Metrics } from '../http/observability.js'
import type { PayoutRails } from '../payouts/rails.js'
import { checkRails, type RailsCheckResult } from '../rails/check.js'
import type { CheckableRail } from '../rails/rail.js'
import { alertSettings } from '../reconcile/alert.js'
import { createReconciler, type Reconciler } from '../reconcile/service.js'
import type { KindRegistry } from '../transactions/kinds.js'
import type { BitcoinRails } from './bitcoin-rails.js'

type ReconcilerDeps = Parameters<typeof createReconciler>[0]

/** What the rails check and reconciliation are wired from: every configured rail, unobserved. */
export interface RailOpsWiringDeps {
  config: Config
  db: Db
  metrics: Metrics
  log: Logger
  railCurrencies: KindRegistry['railCurrencies']
  bitcoinRails: BitcoinRails
  payoutRails: PayoutRails
  /** The bank rail as the check asks it (with the statement poll's check when it polls). */
  bankChecked: CheckableRail
  /** RECONCILE_WINDOW_S in milliseconds. */
  windowMs: ReconcilerDeps['windowMs']
  /** The brake's settings, handed through unchanged (RECONCILE_HALT_SENDS, RECONCILE_HALT_AFTER). */
  brake: ReconcilerDeps['brake']
}

/**
 * Rail operations: `svcpay rails check` (GET /admin/rails) asks every configured rail how it is,
 * and the reconciler holds the ledger against what each rail reports.
 */
export function wireRailOps(deps: RailOpsWiringDeps): {
  checkRails(): Promise<RailsCheckResult>
  reconcile: Reconciler
} {
  const { config, bitcoinRails, payoutRails } = deps
  return {
    checkRails: () =>
      checkRails(
        [
          { rail: 'lightning', adapter: config.lightning, impl: bitcoinRails.lightning },
          { rail: 'onchain', adapter: config.onchain, impl: bitcoinRails.onchain },
          { rail: 'tron', adapter: config.tron, impl: payoutRails.tron },
          { rail: 'bank', adapter: config.vnd, impl: deps.bankChecked },
          { rail: 'ethereum', adapter: config.eth, impl: payoutRails.eth },
        ],
        config.railsCheckTimeoutMs,
      ),
    reconcile: createReconciler({
      db: deps.db,
      metrics: deps.metrics,
      railCurrencies: deps.railCurrencies,
      rails: [
        { rail: 'lightning', adapter: config.lightning, impl: bitcoinRails.lightning },
        { rail: 'onchain', adapter: config.onchain, impl: bitcoinRails.onchain },
        { rail: 'tron', adapter: config.tron, impl: payoutRails.tron },
        { rail: 'bank', adapter: config.vnd, impl: payoutRails.bank },
        { rail: 'ethereum', adapter: config.eth, impl: payoutRails.eth },
      ],
      timeoutMs: config.railsCheckTimeoutMs,
      windowMs: deps.windowMs,
      brake: deps.brake,
      alert: alertSettings(config.env),
      log: deps.log,
    }),
  }
}
