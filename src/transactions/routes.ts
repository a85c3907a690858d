import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AuthService } from '../auth/service.js'
import type { Db } from '../db/db.js'
import type { TransactionsService } from './service.js'
import { bearerAuth, principalOf } from '../http/auth-hook.js'
import { BEARER, errors } from '../http/schemas.js'
import { CreateBodySchema, ListQuerySchema, TxnParams } from './schemas.js'
import { txnJson } from './present.js'
import { listTransactions, type ListQuery } from './list.js'
import type { CreateInput } from './flow.js'

export function transactionRoutes(
  app: FastifyInstance,
  deps: { auth: AuthService; transactions: TransactionsService; db: Db },
): void {
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
          'Every transaction starts `quoted`, with fees and fxRate computed; confirm it to execute. Set amtRequested on one side only. The same extRefId with the same body returns the original transaction.',
        security: BEARER,
        body: CreateBodySchema,
        response: { ...one, ...errors(400, 401, 409, 413, 415, 429, 503) },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const body = request.body as Omit<CreateInput, 'accountId' | 'deductNetworkFeesFromDest'> & {
        deductNetworkFeesFromDest?: boolean
      }
      const txn = await transactions.create(
        { ...body, accountId: p.accountId, deductNetworkFeesFromDest: body.deductNetworkFeesFromDest ?? false },
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
        response: { ...one, ...errors(401, 404, 409, 429) },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const { txnId } = request.params as { txnId: string }
      return txnJson(await transactions.confirm(p.accountId, txnId), p.displayName)
    },
  )

  app.put(
    '/api/v2/transaction/:txnId/cancel',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'Cancel a quoted transaction',
        security: BEARER,
        params: TxnParams,
        response: { ...one, ...errors(401, 404, 409, 429) },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const { txnId } = request.params as { txnId: string }
      return txnJson(await transactions.cancel(p.accountId, txnId), p.displayName)
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
      const { txnId } = request.params as { txnId: string }
      return txnJson(await transactions.get(p.accountId, txnId), p.displayName)
    },
  )

  app.get(
    '/api/v2/transaction',
    {
      onRequest,
      schema: {
        tags: ['Transactions'],
        summary: 'List transactions, newest first',
        description: 'Filter values are comma-separated lists. Defaults: time=30d, page=1, limit=20 (at most 100).',
        security: BEARER,
        querystring: ListQuerySchema,
        response: {
          200: Type.Object({
            data: Type.Array(Type.Ref('Transaction')),
            pagination: Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() }),
          }),
          ...errors(400, 401, 429),
        },
      },
    },
    async (request) => {
      const p = principalOf(request)
      const { rows, pagination } = await listTransactions(deps.db, p.accountId, request.query as ListQuery, Date.now())
      return { data: rows.map((r) => txnJson(r, p.displayName)), pagination }
    },
  )
}
