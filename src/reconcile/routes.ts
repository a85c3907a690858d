import type { FastifyInstance, FastifyRequest } from 'fastify'
import { writeAudit } from '../operators/audit.js'
import type { Reconciler } from './service.js'

/**
 * The reconciliation of the operator API (docs/reconciliation.md):
 * - `GET /admin/reconciliation` (permission `ledger.read`, src/operators/permissions.ts): a fresh
 *   reconciliation of every rail, the report `svcpay reconcile` prints. A reading only: it moves no
 *   money and never counts towards the brake (the report shows the rails paused as they stand).
 * - `POST /admin/reconciliation/run` (permission `transactions.write`): the same run, counted as
 *   the schedule's are (the brake's readings, the alerts), with its audit row
 *   (`reconciliation.record`) written in the same database transaction as the readings. It waits
 *   on the rails before that transaction begins, so it writes its own row (`audit: 'self'`).
 */
export function reconciliationRoutes(
  app: FastifyInstance,
  deps: {
    reconcile: Reconciler
    adminPreHandler: (request: FastifyRequest) => Promise<void>
  },
): void {
  app.get(
    '/admin/reconciliation',
    { onRequest: deps.adminPreHandler, schema: { hide: true, tags: ['Admin'] } },
    async () => deps.reconcile(),
  )
  app.post(
    '/admin/reconciliation/run',
    { onRequest: deps.adminPreHandler, schema: { hide: true, tags: ['Admin'] } },
    async (request) => {
      const actor = request.operator
      if (!actor) throw new Error('POST /admin/reconciliation/run ran without the admin guard')
      return deps.reconcile({
        record: {
          inTx: (q, report) =>
            writeAudit(q, {
              operatorId: actor.operatorId,
              operatorEmail: actor.email,
              action: 'reconciliation.record',
              target: 'reconciliation',
              before: null,
              after: {
                ok: report.ok,
                incomplete: report.incomplete,
                orphans: report.orphans.length,
                pausedRails: report.pausedRails ?? [],
                rails: report.rails.map((r) => ({ rail: r.rail, status: r.status, delta: r.delta })),
              },
              clientIp: request.ip,
              requestId: request.id,
            }),
        },
      })
    },
  )
}
