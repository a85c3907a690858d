import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ReconciliationReport } from './reconcile.js'

/**
 * `GET /admin/reconciliation` (permission `ledger.read`, src/admin/permissions.ts): a fresh
 * reconciliation of every rail, the report `svcpay reconcile` prints. Reading it moves no money.
 */
export function reconciliationRoutes(
  app: FastifyInstance,
  deps: {
    reconcile(): Promise<ReconciliationReport>
    adminPreHandler: (request: FastifyRequest) => Promise<void>
  },
): void {
  app.get(
    '/admin/reconciliation',
    { onRequest: deps.adminPreHandler, schema: { hide: true, tags: ['Admin'] } },
    async () => deps.reconcile(),
  )
}
