import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/db.js'
import { auditNote } from '../operators/guard.js'
import { AmountIn } from '../http/schemas.js'
import { parseAmount } from '../shared/amount.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { bookCapital, CAPITAL_PAGE_SIZE_MAX, listCapital } from './capital.js'
import type { RailCurrencies } from './refs.js'

const RAILS = ['lightning', 'onchain', 'tron', 'bank', 'ethereum'] as const
/** A client's reference: what `Idempotency-Key` may hold too. */
const REFERENCE = /^[A-Za-z0-9._:-]{1,64}$/

/**
 * Operator capital (src/reconcile/capital.ts, docs/reconciliation.md "Operator capital"):
 * - `POST /admin/capital` books money the operator put on a rail (`direction: in`) or took off it
 *   (`out`). Permission `transactions.write` (finance, admin); audited with the change. Idempotent
 *   by `reference` in the body or the `Idempotency-Key` header (one of them is required).
 * - `GET /admin/capital` lists the bookings, newest first (`ledger.read`).
 */
export function capitalRoutes(
  fastify: FastifyInstance,
  deps: {
    db: Db
    /** The currency each rail holds (the kind registry's `railCurrencies`). */
    railCurrencies: RailCurrencies
    adminPreHandler: (request: FastifyRequest) => Promise<void>
    now?: () => number
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const now = deps.now ?? Date.now
  const schema = { hide: true, tags: ['Admin'] }

  app.post(
    '/admin/capital',
    {
      onRequest: deps.adminPreHandler,
      schema: {
        ...schema,
        body: Type.Object({
          rail: Type.Union(RAILS.map((r) => Type.Literal(r))),
          ccy: Type.String({ minLength: 1, maxLength: 8 }),
          direction: Type.Optional(Type.Union([Type.Literal('in'), Type.Literal('out')])),
          amount: AmountIn("In the rail's currency"),
          note: Type.String({ minLength: 1, maxLength: 200 }),
          reference: Type.Optional(Type.String({ maxLength: 64 })),
        }),
      },
    },
    async (request) => {
      const body = request.body
      const header = request.headers['idempotency-key']
      const key = typeof header === 'string' ? header : undefined
      if (body.reference !== undefined && key !== undefined && body.reference !== key)
        throw fieldError('invalid_request', 'reference', 'differs from the Idempotency-Key header')
      const reference = body.reference ?? key
      if (reference === undefined)
        throw fieldError('invalid_request', 'reference', 'set it, or send an Idempotency-Key header')
      if (!REFERENCE.test(reference))
        throw fieldError('invalid_request', 'reference', 'must be 1-64 of A-Z a-z 0-9 . _ : -')
      const ccy = body.ccy.toUpperCase()
      const parsed = parseAmount(body.amount, ccy)
      if (!parsed.ok) throw fieldError('invalid_amount', 'amount', parsed.issue)
      if (parsed.minor <= 0n) throw fieldError('invalid_amount', 'amount', 'must be positive')
      if (!request.operator) throw new ApiError('unauthorized', 'An operator is required')
      const booked = await bookCapital(
        deps.db,
        {
          rail: body.rail,
          ccy,
          direction: body.direction ?? 'in',
          amountMinor: parsed.minor,
          note: body.note,
          reference,
          operatorId: request.operator.operatorId,
          now: now(),
        },
        deps.railCurrencies,
      )
      auditNote(request, { action: 'capital.book', target: `reference=${reference}` })
      return booked
    },
  )

  app.get(
    '/admin/capital',
    {
      onRequest: deps.adminPreHandler,
      schema: {
        ...schema,
        querystring: Type.Object({ limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })) }),
      },
    },
    async (request) => {
      const { limit } = request.query
      const n = Number(limit ?? 50)
      if (n > CAPITAL_PAGE_SIZE_MAX)
        throw fieldError('invalid_request', 'limit', `at most ${CAPITAL_PAGE_SIZE_MAX}`)
      return { data: await listCapital(deps.db, n) }
    },
  )
}
