import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { auditNote } from '../operators/guard.js'
import { ApiError } from '../shared/errors.js'
import type { Actor } from '../operators/service.js'
import { APPROVALS_PAGE_MAX, APPROVAL_STATUSES } from './repository.js'
import { NOTE_LENGTH_MAX, type ApprovalsService } from './service.js'

/**
 * The approvals queue of the operator API (docs/operators.md, "Approvals"). Access and the audit row
 * of each decision come from the admin guard and ADMIN_ROUTES; the handlers name what they did.
 */
export function approvalRoutes(fastify: FastifyInstance, deps: { approvals: ApprovalsService }): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const schema = { hide: true, tags: ['Admin'] }
  const txnParams = Type.Object({ txnId: Type.String({ minLength: 1, maxLength: 64 }) })
  const note = Type.Optional(Type.String({ minLength: 1, maxLength: NOTE_LENGTH_MAX }))

  app.get(
    '/admin/approvals',
    {
      schema: {
        ...schema,
        querystring: Type.Object({
          status: Type.Optional(Type.Union(APPROVAL_STATUSES.map((s) => Type.Literal(s)))),
          limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
        }),
      },
    },
    async (request) => {
      const query = request.query
      const limit = Number(query.limit ?? 50)
      if (limit > APPROVALS_PAGE_MAX)
        throw new ApiError('invalid_request', `limit: at most ${APPROVALS_PAGE_MAX}`, [
          { field: 'limit', issue: `at most ${APPROVALS_PAGE_MAX}` },
        ])
      return deps.approvals.list({
        status: query.status ?? 'waiting',
        limit,
        ...(query.cursor ? { cursor: query.cursor } : {}),
      })
    },
  )

  const actorOf = (request: FastifyRequest): Actor => {
    const actor = request.operator
    if (!actor) throw new Error('an approvals route ran without the admin guard')
    return actor
  }
  const target = (txnId: string) => `txnId=${txnId}`

  app.post(
    '/admin/approvals/:txnId/review',
    { schema: { ...schema, params: txnParams, body: Type.Object({ note }) } },
    async (request) => {
      const { txnId } = request.params
      const view = await deps.approvals.review(txnId, actorOf(request), request.body.note ?? null)
      auditNote(request, { target: target(txnId), before: { status: 'waiting', review: null } })
      return view
    },
  )

  app.post(
    '/admin/approvals/:txnId/approve',
    { schema: { ...schema, params: txnParams, body: Type.Object({ note }) } },
    async (request) => {
      const { txnId } = request.params
      const view = await deps.approvals.approve(txnId, actorOf(request), request.body.note ?? null)
      auditNote(request, { target: target(txnId), before: { status: 'waiting', txnState: 'processing' } })
      return view
    },
  )

  app.post(
    '/admin/approvals/:txnId/reject',
    {
      schema: {
        ...schema,
        params: txnParams,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: NOTE_LENGTH_MAX }) }),
      },
    },
    async (request) => {
      const { txnId } = request.params
      const { reason } = request.body
      if (!reason.trim()) throw new ApiError('invalid_request', 'reason: say why the transaction is rejected')
      const view = await deps.approvals.reject(txnId, actorOf(request), reason.trim())
      auditNote(request, { target: target(txnId), before: { status: 'waiting', txnState: 'processing' } })
      return view
    },
  )
}
