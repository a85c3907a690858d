import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AuthService } from '../auth/service.js'
import { bearerAuth, principalOf } from '../auth/hook.js'
import { BEARER, errors } from '../http/schemas.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { staticAddress } from './deposits.js'

/** `GET /api/v2/account/onchain-address`: the caller's permanent on-chain deposit address. */
export function depositRoutes(app: FastifyInstance, deps: { auth: AuthService; bitcoin: BitcoinDeps }): void {
  app.get(
    '/api/v2/account/onchain-address',
    {
      onRequest: bearerAuth(deps.auth),
      schema: {
        tags: ['Accounts'],
        summary: "The account's static on-chain address",
        description:
          'A permanent, reusable BIP84 address, made on the first call. Every payment to it becomes a transaction of its own (kind deposit: srccreated, then completed after the required confirmations).',
        security: BEARER,
        response: {
          200: Type.Object(
            { staticOnchainAddress: Type.String() },
            { examples: [{ staticOnchainAddress: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080' }] },
          ),
          ...errors(401, 429),
        },
      },
    },
    async (request) => ({
      staticOnchainAddress: await staticAddress(deps.bitcoin, principalOf(request).accountId),
    }),
  )
}
