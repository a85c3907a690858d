import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AccountsService, Wallet } from './service.js'
import type { AuthService } from '../auth/service.js'
import { ApiError } from '../shared/errors.js'
import { amountJson } from '../shared/amount.js'
import { bearerAuth, principalOf } from '../auth/hook.js'
import { BEARER, errors } from '../http/schemas.js'
import { AccountSchema, WalletSchema } from './schemas.js'
import { asAccountId, asWalletId } from '../shared/ids.js'

// app.ts registers the shared Wallet schema from here.
export { WalletSchema }

export function walletJson(w: Wallet) {
  return {
    id: w.id,
    ccy: w.ccy,
    amount: amountJson(w.postedMinor, w.ccy),
    availableBalance: amountJson(w.postedMinor - w.pendingMinor, w.ccy),
    accountId: w.accountId,
    createdAt: new Date(w.createdAt).toISOString(),
    updatedAt: new Date(w.updatedAt).toISOString(),
  }
}

const AccountParams = Type.Object({ accountId: Type.String({ maxLength: 64 }) })

export function accountRoutes(
  fastify: FastifyInstance,
  deps: { accounts: AccountsService; auth: AuthService },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = bearerAuth(deps.auth)
  const { accounts } = deps

  // An unrelated or unknown account answers 401 alike, so account ids cannot be probed.
  async function requireAccess(principalId: string, accountId: string, status: 401 | 403) {
    if (!(await accounts.canAccess(principalId, accountId))) {
      throw status === 401
        ? new ApiError('unauthorized', 'This token may not read that account')
        : new ApiError('forbidden', 'This token may not read wallets of that account')
    }
  }

  app.get(
    '/api/v2/account/:accountId',
    {
      onRequest,
      schema: {
        tags: ['Accounts'],
        summary: 'Read account information',
        security: BEARER,
        params: AccountParams,
        response: {
          200: Type.Object({ data: AccountSchema }),
          ...errors(401, 429),
        },
      },
    },
    async (request) => {
      const { accountId } = request.params
      await requireAccess(principalOf(request).accountId, accountId, 401)
      const account = await accounts.get(accountId)
      if (!account) throw new ApiError('unauthorized', 'This token may not read that account')
      return { data: account }
    },
  )

  app.get(
    '/api/v2/account/:accountId/wallet/',
    {
      onRequest,
      schema: {
        tags: ['Wallets'],
        summary: "List an account's wallets",
        security: BEARER,
        params: AccountParams,
        response: { 200: Type.Object({ data: Type.Array(Type.Ref('Wallet')) }), ...errors(401, 429) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      await requireAccess(principalOf(request).accountId, accountId, 401)
      return { data: (await accounts.wallets(asAccountId(accountId))).map(walletJson) }
    },
  )

  app.get(
    '/api/v2/account/:accountId/wallet/:walletId',
    {
      onRequest,
      schema: {
        tags: ['Wallets'],
        summary: 'Read one wallet',
        security: BEARER,
        params: Type.Object({
          accountId: Type.String({ maxLength: 64 }),
          walletId: Type.String({ maxLength: 64 }),
        }),
        response: { 200: Type.Object({ data: Type.Ref('Wallet') }), ...errors(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const { accountId, walletId } = request.params
      await requireAccess(principalOf(request).accountId, accountId, 403)
      const wallet = await accounts.wallet(asWalletId(walletId))
      if (!wallet || wallet.accountId !== accountId) throw new ApiError('not_found', 'Wallet not found')
      return { data: walletJson(wallet) }
    },
  )
}
