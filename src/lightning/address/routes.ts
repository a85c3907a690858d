import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AccountsService } from '../../accounts/service.js'
import type { AuthService } from '../../auth/service.js'
import type { Config } from '../../config/config.js'
import type { Db } from '../../db/db.js'
import { bearerAuth, principalOf } from '../../auth/hook.js'
import { BEARER, errors } from '../../http/schemas.js'
import { ApiError } from '../../shared/errors.js'
import { encodeLnurl } from './lnurl-encoding.js'
import { lightningAddressOf, wellKnownUrl } from './lnurl.js'
import { LightningAddressBody, LightningAddressSchema } from './schemas.js'
import { addressOf, claimAddress, releaseAddress, type LightningAddress } from './service.js'

const TAGS = ['Lightning Address']
const AccountParams = Type.Object({ accountId: Type.String({ maxLength: 64 }) })

export interface AddressRouteDeps {
  db: Db
  accounts: AccountsService
  auth: AuthService
  config: Pick<Config, 'publicBaseUrl' | 'invoicePageUrl'>
}

export function addressJson(config: AddressRouteDeps['config'], a: LightningAddress) {
  return {
    username: a.username,
    // LUD-16 has no port: null where PUBLIC_BASE_URL gives no address a wallet can use (lnurl.ts).
    address: lightningAddressOf(config, a.username) ?? null,
    accountId: a.accountId,
    creditCcy: a.creditCcy,
    lnurl: encodeLnurl(wellKnownUrl(config, a.username)).toUpperCase(),
    payPageUrl: `${config.invoicePageUrl}/ln/${a.username}`,
    createdAt: new Date(a.createdAtMs).toISOString(),
    updatedAt: new Date(a.updatedAtMs).toISOString(),
  }
}

/** `PUT`, `GET` and `DELETE /api/v2/account/{accountId}/lightning-address`, for the account's token. */
export function lightningAddressRoutes(fastify: FastifyInstance, deps: AddressRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = bearerAuth(deps.auth)

  // As the account routes: an unrelated or unknown account answers 401 alike.
  async function requireAccess(principalId: string, accountId: string) {
    if (!(await deps.accounts.canAccess(principalId, accountId)))
      throw new ApiError('unauthorized', 'This token may not act on that account')
  }
  const data = (a: LightningAddress) => ({ data: addressJson(deps.config, a) })

  app.put(
    '/api/v2/account/:accountId/lightning-address',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: "Claim the account's Lightning Address, or change its credit currency",
        description:
          'One address per account; claiming another username gives up the old one. The same request again answers the same address. A username another account holds is 409 invalid_state; a reserved or malformed one (LUD-16: a-z, 0-9, "-", "_", "." only, lower case) is 400 invalid_request; a creditCcy the account has no wallet of is 400 unsupported_currency_pair.',
        security: BEARER,
        params: AccountParams,
        body: LightningAddressBody,
        response: { 200: Type.Object({ data: LightningAddressSchema }), ...errors(400, 401, 409, 429) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      await requireAccess(principalOf(request).accountId, accountId)
      const { username, creditCcy } = request.body
      return data(await claimAddress(deps, accountId, username, creditCcy))
    },
  )

  app.get(
    '/api/v2/account/:accountId/lightning-address',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: "Read the account's Lightning Address",
        security: BEARER,
        params: AccountParams,
        response: { 200: Type.Object({ data: LightningAddressSchema }), ...errors(401, 404, 429) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      await requireAccess(principalOf(request).accountId, accountId)
      const address = await addressOf(deps.db, accountId)
      if (!address) throw new ApiError('not_found', 'This account has no Lightning Address')
      return data(address)
    },
  )

  app.delete(
    '/api/v2/account/:accountId/lightning-address',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: "Give up the account's Lightning Address",
        description:
          'The username is free to claim again at once. Invoices already issued for it can still be paid.',
        security: BEARER,
        params: AccountParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...errors(401, 404, 429) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.params
      await requireAccess(principalOf(request).accountId, accountId)
      if (!(await releaseAddress(deps.db, accountId)))
        throw new ApiError('not_found', 'This account has no Lightning Address')
      return reply.code(204).send(null)
    },
  )
}
