import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { asAccountId, asTxnId } from '../shared/ids.js'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AuthService } from '../auth/service.js'
import type { Db } from '../db/db.js'
import type { TransactionsService } from './service.js'
import { bearerAuth, principalOf } from '../auth/hook.js'
import { BEARER, errors } from '../http/schemas.js'
import { CreateBodySchema, ListPaginationSchema, ListQuerySchema, TxnParams } from './schemas.js'
import { txnJson } from './txn.js'
import { listTransactions } from './list.js'

export function transactionRoutes(
  fastify: FastifyInstance,
  deps: { auth: AuthService; transactions: TransactionsService; db: Db },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = bearerAuth(deps.auth)
  const { transactions } = deps
  const one = { 200: Type.Ref('Transaction') }

  app.post(
    '/api/v2/transaction',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'Create a transaction (a quote)',
        description:
          'Every transaction starts `quoted`, with fees and fxRate computed; confirm it to execute. Set amtRequested on one side only. Every amount, given or computed (both sides after conversion, fees, the wallet total), is at most 10^17 minor units; receives at most RECEIVE_MAX_BTC; Bitcoin sends at most 21,000,000 BTC: else 400 invalid_amount naming the field. A bech32 address may be written all in lower or all in upper case and is stored, returned and compared in lower case; mixed case is 400 invalid_address; base58 addresses (Bitcoin and TRON) are case-sensitive and kept as given; an Ethereum address (eth) may be all lower or all upper case or in its EIP-55 checksum form (mixed case that fails the checksum is 400 invalid_address) and is stored and returned in its EIP-55 form. The same extRefId with the same request (amounts compared by value: 0.001 and "0.0010" are one amount) returns the original transaction; with a different request, 409 duplicate_ext_ref_id.',
        security: BEARER,
        body: CreateBodySchema,
        response: { ...one, ...errors(400, 401, 409, 413, 415, 429, 503) },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const body = request.body
      const txn = await transactions.create(
        {
          ...body,
          accountId: asAccountId(p.accountId),
          deductNetworkFeesFromDest: body.deductNetworkFeesFromDest ?? false,
        },
        request.body,
      )
      return txnJson(txn, p.displayName)
    },
  )

  app.put(
    '/api/v2/transaction/:txnId/confirm',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'Confirm a quoted transaction',
        description: 'Confirming a transaction already past quoted returns it unchanged.',
        security: BEARER,
        params: TxnParams,
        response: { ...one, ...errors(401, 404, 409, 429, 503) },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const { txnId } = request.params
      return txnJson(await transactions.confirm(asAccountId(p.accountId), asTxnId(txnId)), p.displayName)
    },
  )

  app.put(
    '/api/v2/transaction/:txnId/cancel',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'Cancel a quoted transaction',
        description:
          'Only a quoted transaction can be cancelled (else 409 invalid_state). Past expiresAt the quote is expired instead and cancel answers 409 quote_expired, as confirm does.',
        security: BEARER,
        params: TxnParams,
        response: { ...one, ...errors(401, 404, 409, 429) },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const { txnId } = request.params
      return txnJson(await transactions.cancel(asAccountId(p.accountId), asTxnId(txnId)), p.displayName)
    },
  )

  app.get(
    '/api/v2/transaction/:txnId',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'Read a transaction',
        security: BEARER,
        params: TxnParams,
        response: { ...one, ...errors(401, 404, 429) },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const { txnId } = request.params
      return txnJson(await transactions.get(asAccountId(p.accountId), asTxnId(txnId)), p.displayName)
    },
  )

  app.get(
    '/api/v2/transaction',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'List transactions, newest first',
        description:
          'Filter values are comma-separated lists. Defaults: time=30d, page=1, limit=20 (at most 100). Pages by number (page) or, stable while transactions are created, by cursor: startingAfter=<last txnId of a page> for the next (older) page, endingBefore=<first txnId> for the previous one; pagination.hasMore says whether more lie that way.',
        security: BEARER,
        querystring: ListQuerySchema,
        response: {
          200: Type.Object({
            data: Type.Array(Type.Ref('Transaction')),
            pagination: ListPaginationSchema,
          }),
          ...errors(400, 401, 429),
        },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const { rows, pagination } = await listTransactions(deps.db, p.accountId, request.query, Date.now())
      return { data: rows.map((r) => txnJson(r, p.displayName)), pagination }
    },
  )
}
