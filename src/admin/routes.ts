import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AccountsService } from '../accounts/service.js'
import type { AuthService } from '../auth/service.js'
import type { Db } from '../db/db.js'
import { ApiError } from '../shared/errors.js'
import { checkBooks } from '../ledger/ledger.js'
import { adminAuth } from '../operators/admin-auth.js'
import type { Config } from '../config/config.js'
import type { RailsCheckResult } from '../rails/check.js'
import { listStuck, type StuckKinds } from '../transactions/stuck.js'

/**
 * The operator API behind the `svcpay` command line. It is authenticated by ADMIN_TOKEN and kept
 * out of the public API reference.
 */
export function adminRoutes(
  fastify: FastifyInstance,
  deps: {
    accounts: AccountsService
    auth: AuthService
    db: Db
    adminToken: string
    config: Pick<Config, 'railOps'>
    kinds: StuckKinds
    checkRails(): Promise<RailsCheckResult>
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = adminAuth(deps.adminToken)
  const schema = { hide: true, tags: ['Admin'] }
  const TierSchema = Type.Union([Type.Literal('standard'), Type.Literal('premium')])

  app.post(
    '/admin/accounts',
    {
      onRequest,
      schema: {
        ...schema,
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 140 }),
          parentId: Type.Optional(Type.String({ maxLength: 64 })),
          tier: Type.Optional(TierSchema),
          withKey: Type.Optional(Type.Boolean()),
        }),
      },
    },
    async (request) => {
      const body = request.body
      const account = await deps.accounts.create({
        displayName: body.name,
        parentId: body.parentId ?? null,
        tier: body.tier,
      })
      const key = body.withKey === false ? undefined : await deps.auth.createKey(account.id)
      return { accountId: account.id, ...(key ?? {}), account }
    },
  )

  app.get('/admin/accounts', { onRequest, schema }, async () => ({ data: await deps.accounts.list(1000) }))

  app.put(
    '/admin/accounts/:accountId/tier',
    {
      onRequest,
      schema: {
        ...schema,
        params: Type.Object({ accountId: Type.String() }),
        body: Type.Object({ tier: TierSchema }),
      },
    },
    async (request) => {
      const { accountId } = request.params
      const { tier } = request.body
      if (!(await deps.accounts.setTier(accountId, tier)))
        throw new ApiError('not_found', 'Account not found')
      return { accountId, tier }
    },
  )

  app.post(
    '/admin/keys',
    { onRequest, schema: { ...schema, body: Type.Object({ accountId: Type.String({ maxLength: 64 }) }) } },
    async (request) => {
      const { accountId } = request.body
      if (!(await deps.accounts.get(accountId))) throw new ApiError('not_found', 'Account not found')
      return { accountId, ...(await deps.auth.createKey(accountId)) }
    },
  )

  app.post(
    '/admin/keys/:apiKey/revoke',
    { onRequest, schema: { ...schema, params: Type.Object({ apiKey: Type.String() }) } },
    async (request) => {
      const { apiKey } = request.params
      if (!(await deps.auth.revokeKey(apiKey))) throw new ApiError('not_found', 'No such active key')
      return { apiKey, revoked: true }
    },
  )

  app.get('/admin/ledger/check', { onRequest, schema }, async () => checkBooks(deps.db))

  // Rail operations (docs/operations.md): transactions whose rail has not brought them to an
  // outcome within its bound, and the check of every configured rail.
  app.get(
    '/admin/transactions/stuck',
    {
      onRequest,
      schema: {
        ...schema,
        querystring: Type.Object({
          page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })),
          limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
        }),
      },
    },
    async (request) => {
      const { query } = request
      const limit = Number(query.limit ?? 20)
      if (limit > 100) throw new ApiError('invalid_request', 'limit: at most 100')
      return listStuck(deps.db, deps.kinds, deps.config.railOps, Date.now(), {
        page: Number(query.page ?? 1),
        limit,
      })
    },
  )

  app.get('/admin/rails', { onRequest, schema }, async () => deps.checkRails())
}
