import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AuthService } from '../auth/service.js'
import type { BankAccountInquiryRail } from '../rails/rail.js'
import { lookUpAccountName } from './account-name.js'
import { bearerAuth, principalOf } from '../auth/hook.js'
import { applyTighterRateLimitHeaders, rateLimitErrorBody } from '../http/rate-limit.js'
import { ApiError } from '../shared/errors.js'
import { BEARER, errors } from '../http/schemas.js'
import { listInstitutions } from './institutions.js'
import { sourceOfFundsCodes } from './source-of-funds.js'
import {
  AccountNameQuerySchema,
  AccountNameSchema,
  InstitutionSchema,
  SourceOfFundsCodesSchema,
} from './schemas.js'

/**
 * Reference data for fiat payouts: where money can go, what a source-of-funds code means, and whose
 * a bank account is.
 */
export function fiatRoutes(
  fastify: FastifyInstance,
  deps: { auth: AuthService; bankAccounts: BankAccountInquiryRail },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = bearerAuth(deps.auth)

  app.get(
    '/api/v2/fiat/institutions',
    {
      onRequest,
      schema: {
        tags: ['Fiat payouts'],
        summary: 'The banks a fiat payout can go to',
        description:
          'For ccy=VND, the Vietnamese banks by their NAPAS BIN code. A currency without bank payouts has an empty list.',
        security: BEARER,
        querystring: Type.Object({
          ccy: Type.String({ pattern: '^[A-Za-z]{3,5}$', description: 'Payout currency, e.g. VND' }),
        }),
        response: { 200: Type.Object({ data: Type.Array(InstitutionSchema) }), ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      const { ccy } = request.query
      return { data: listInstitutions(ccy).map(({ code, name, shortName }) => ({ code, name, shortName })) }
    },
  )

  app.get(
    '/api/v2/fiat/source-of-funds-codes',
    {
      onRequest,
      schema: {
        tags: ['Fiat payouts'],
        summary: 'The codes of a payout’s sourceOfFunds',
        description:
          'A fiat payout carries sourceOfFunds { purpose, source, relationship }, each an integer code from these tables. A published code keeps its meaning.',
        security: BEARER,
        response: {
          200: Type.Object({ data: SourceOfFundsCodesSchema }),
          ...errors(401, 429),
        },
      },
    },
    async () => {
      const { purpose, source, relationship } = sourceOfFundsCodes()
      return { data: { purpose: [...purpose], source: [...source], relationship: [...relationship] } }
    },
  )

  app.get(
    '/api/v2/fiat/account-name',
    {
      onRequest,
      // The query holds an account number (personal data): the request log lines, which show the
      // URL, are left out for this route. Warnings and errors are still logged, without the URL.
      logLevel: 'warn',
      schema: {
        tags: ['Fiat payouts'],
        summary: 'The holder’s name of a bank account',
        description:
          'Asks the bank whose account this is (NAPAS account inquiry) and answers the name as the bank gives it: upper case without diacritics, masked with * where the bank masks it. 404 `not_found` when the bank has no such account; 503 `service_unavailable` when the bank cannot answer now. The name is personal data and is not stored. Besides the account windows, each account has an hourly window of inquiries that reach the bank (RATE_LIMIT_ACCOUNT_NAME_PER_HOUR, 30 by default); when it is spent the answer is 429 `rate_limit_exceeded` with Retry-After, and the bank is not asked.',
        security: BEARER,
        querystring: AccountNameQuerySchema,
        response: { 200: Type.Object({ data: AccountNameSchema }), ...errors(400, 401, 404, 429, 503) },
      },
    },
    async (request, reply) => ({
      data: await lookUpAccountName(deps.bankAccounts, request.query, () => countInquiry(request, reply)),
    }),
  )
}

/**
 * Counts an inquiry about to reach the bank against the account's hourly window for them (each
 * costs a bank fee and names someone), or throws the 429 when that window is spent.
 */
async function countInquiry(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const decision = await request.server.rateLimiter.consumeAccountName(principalOf(request).accountId)
  applyTighterRateLimitHeaders(reply, decision)
  if (!decision.allowed) throw new ApiError('rate_limit_exceeded', rateLimitErrorBody(decision).message)
}
