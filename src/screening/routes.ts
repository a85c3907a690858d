import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Queryable } from '../db/db.js'
import { auditNote } from '../operators/guard.js'
import { ApiError } from '../shared/errors.js'
import { DEST_TYPES, LIST_BYTES_MAX, type DestType } from './normalise.js'
import { HITS_PAGE_MAX } from './repository.js'
import type { ScreeningService } from './service.js'

/**
 * Screening in the operator API (docs/screening.md): load, list and remove deny lists, list hits,
 * mark one reviewed or release a held deposit. Access and each change's audit row come from the
 * admin guard and ADMIN_ROUTES (a list load is audited with its name and sizes, not its entries).
 */
export function screeningRoutes(
  fastify: FastifyInstance,
  deps: { db: Queryable; screening: ScreeningService },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const schema = { hide: true, tags: ['Admin'] }
  const source = Type.Object({ source: Type.String({ minLength: 1, maxLength: 64 }) })
  const who = (request: FastifyRequest) => request.operator?.email ?? request.operator?.operatorId ?? 'system'

  app.get('/admin/screening/lists', { schema }, async () => ({ data: await deps.screening.lists(deps.db) }))

  app.put(
    '/admin/screening/lists/:source',
    {
      bodyLimit: LIST_BYTES_MAX + 1024,
      schema: {
        ...schema,
        params: source,
        body: Type.Object({
          list: Type.String({ maxLength: LIST_BYTES_MAX }),
          type: Type.Optional(Type.Union(DEST_TYPES.map((t) => Type.Literal(t)))),
        }),
      },
    },
    async (request) => {
      const { source: name } = request.params
      const loaded = await deps.screening.loadList(deps.db, {
        source: name,
        text: request.body.list,
        defaultType: request.body.type as DestType | undefined,
        by: who(request),
      })
      auditNote(request, {
        target: `screening_list=${name}`,
        before: { entries: loaded.before },
        after: { entries: loaded.after },
      })
      return loaded
    },
  )

  app.delete('/admin/screening/lists/:source', { schema: { ...schema, params: source } }, async (request) => {
    const { source: name } = request.params
    const removed = await deps.screening.clearList(deps.db, name)
    if (removed === null) throw new ApiError('not_found', 'Screening list not found')
    auditNote(request, {
      target: `screening_list=${name}`,
      before: { entries: removed },
      after: { entries: 0 },
    })
    return { source: name, removed }
  })

  app.get(
    '/admin/screening/hits',
    {
      schema: {
        ...schema,
        querystring: Type.Object({
          unreviewed: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
          txnId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
        }),
      },
    },
    async (request) => {
      const limit = Number(request.query.limit ?? 100)
      if (limit > HITS_PAGE_MAX)
        throw new ApiError('invalid_request', `limit: at most ${HITS_PAGE_MAX}`, [
          { field: 'limit', issue: `at most ${HITS_PAGE_MAX}` },
        ])
      const data = await deps.screening.hits(
        {
          unreviewed: request.query.unreviewed === 'true',
          ...(request.query.txnId ? { txnId: request.query.txnId } : {}),
          limit,
        },
        deps.db,
      )
      return { data }
    },
  )

  const hitParams = Type.Object({ hitId: Type.String({ pattern: '^[0-9]{1,18}$' }) })
  for (const [verb, release] of [
    ['review', false],
    ['release', true],
  ] as const) {
    app.post(
      `/admin/screening/hits/:hitId/${verb}`,
      { schema: { ...schema, params: hitParams } },
      async (request) => {
        const { hitId } = request.params
        const done = await deps.screening.reviewHit(deps.db, hitId, who(request), release)
        if (done === 'not_found') throw new ApiError('not_found', 'Screening hit not found')
        if (done === 'not_held') throw new ApiError('invalid_state', 'Only a held deposit can be released')
        auditNote(request, { target: `screening_hit=${hitId}`, before: done.before, after: done.after })
        return done.after
      },
    )
  }
}
