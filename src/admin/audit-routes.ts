import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/db.js'
import { isRealIsoTime } from '../shared/calendar.js'
import { ApiError } from '../shared/errors.js'
import { csvStream } from '../shared/csv.js'
import {
  AUDIT_CSV_COLUMNS,
  AUDIT_PAGE_SIZE_MAX,
  auditCsvBatches,
  listAudit,
  type AuditFilter,
} from '../operators/audit.js'

/** The audit trail, read with filters and cursor paging, or exported as CSV (streamed). */
export function auditRoutes(fastify: FastifyInstance, deps: { db: Db }): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const schema = { hide: true, tags: ['Admin'] }
  const filterProperties = {
    operator: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    from: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'ISO 8601 time or epoch milliseconds, inclusive',
      }),
    ),
    to: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'ISO 8601 time or epoch milliseconds, exclusive',
      }),
    ),
  }

  app.get(
    '/admin/audit',
    {
      schema: {
        ...schema,
        querystring: Type.Object({
          ...filterProperties,
          limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
          cursor: Type.Optional(Type.String({ maxLength: 64 })),
        }),
      },
    },
    async (request) => {
      const query = request.query
      const limit = Math.min(Number(query.limit ?? 50), AUDIT_PAGE_SIZE_MAX)
      try {
        return await listAudit(deps.db, toFilter(query), {
          limit,
          ...(query.cursor ? { cursor: query.cursor } : {}),
        })
      } catch (err) {
        if (err instanceof RangeError)
          throw new ApiError('invalid_request', 'The cursor is not one this API gave', [
            { field: 'cursor', issue: 'invalid' },
          ])
        throw err
      }
    },
  )

  app.get(
    '/admin/audit.csv',
    { schema: { ...schema, querystring: Type.Object(filterProperties) } },
    async (request, reply) => {
      const filter = toFilter(request.query)
      reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="svcpay-audit.csv"')
        .header('cache-control', 'no-store')
      return reply.send(csvStream(AUDIT_CSV_COLUMNS, auditCsvBatches(deps.db, filter)))
    },
  )
}

function toFilter(query: Record<string, string | undefined>): AuditFilter {
  return {
    // Emails are kept in lower case; ids are lower case already.
    ...(query.operator ? { operator: query.operator.toLowerCase() } : {}),
    ...(query.action ? { action: query.action } : {}),
    ...(query.target ? { target: query.target } : {}),
    ...(query.from ? { fromMs: toMs(query.from, 'from') } : {}),
    ...(query.to ? { toMs: toMs(query.to, 'to') } : {}),
  }
}

/** A time of a query string (ISO 8601 or epoch milliseconds) as epoch milliseconds, or a 400. */
export function toMs(value: string, field: string): number {
  const ms = /^[0-9]{1,15}$/.test(value) ? Number(value) : Date.parse(value)
  if (!Number.isFinite(ms) || !(/^[0-9]{1,15}$/.test(value) || isRealIsoTime(value)))
    throw new ApiError('invalid_request', `${field} must be an ISO 8601 time or epoch milliseconds`, [
      { field, issue: 'invalid' },
    ])
  return ms
}
