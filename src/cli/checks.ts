import { formatRailsCheck, type RailsCheckResult } from '../rails/check.js'
import { formatReconciliation, type ReconciliationReport } from '../reconcile/reconcile.js'
import type { Commands } from './args.js'
import { call } from './client.js'

/** The checks an operator runs on the books and the rails; each sets a failing exit code. */
export const checkCommands: Commands = {
  async 'ledger check'({ print }) {
    const r = await call<{ ok: boolean }>('GET', '/admin/ledger/check')
    print(r, r.ok ? 'books balance' : `BOOKS DO NOT BALANCE: ${JSON.stringify(r)}`)
    if (!r.ok) process.exitCode = 1
  },

  async 'rails check'({ print }) {
    const r = await call<RailsCheckResult>('GET', '/admin/rails')
    print(r, formatRailsCheck(r))
    if (!r.ok) process.exitCode = 1
  },

  async reconcile({ flags, print }) {
    // A reading by default; --record makes it a run the brake counts (docs/reconciliation.md).
    const r =
      flags.record === true
        ? await call<ReconciliationReport>('POST', '/admin/reconciliation/run', {})
        : await call<ReconciliationReport>('GET', '/admin/reconciliation')
    print(r, formatReconciliation(r))
    // A deficit or orphan first; a rail that could not be read is never taken for a clean one.
    if (!r.ok || r.orphans.length > 0) process.exitCode = 1
    else if (r.incomplete) process.exitCode = 3
  },
}
