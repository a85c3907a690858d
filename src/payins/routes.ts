import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { auditNote } from '../operators/guard.js'
import { AmountIn } from '../http/schemas.js'
import { amountJson, parseAmount } from '../shared/amount.js'
import { fieldError } from '../shared/errors.js'
import { recordSandboxTransferIn } from '../payouts/vnd/sandbox.js'
import type { PayinDeps } from './deps.js'
import { assignCredit, ingestBankCredit, listCredits, type CreditRow, type IngestOutcome } from './credits.js'

const CREDITS_PAGE_MAX = 500
const REASON_MAX = 500

const creditJson = (r: CreditRow) => ({
  creditId: r.creditId,
  bankRef: r.bankRef,
  amount: amountJson(r.amountMinor, 'VND'),
  memo: r.memo,
  bookedAt: r.bookedAt,
  status: r.status,
  outcome: r.outcome,
  txnId: r.txnId,
  createdAt: r.createdAt,
})

const outcomeJson = (o: IngestOutcome, amountMinor: bigint) => ({
  ...o,
  amount: amountJson(amountMinor, 'VND'),
})

/**
 * The operator API of bank credits (docs/payouts.md, "Receiving dong"): the list of credits (those
 * in suspense by default, the console's attention list reads the same), and the assignment of one
 * to an account, audited by the admin guard in the same database transaction.
 */
export function bankCreditAdminRoutes(fastify: FastifyInstance, deps: { payins: PayinDeps }): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const schema = { hide: true, tags: ['Admin'] }

  app.get(
    '/admin/bank-credits',
    {
      schema: {
        ...schema,
        querystring: Type.Object({
          status: Type.Optional(
            Type.Union(['unassigned', 'assigned', 'matched', 'deposit'].map((s) => Type.Literal(s))),
          ),
          limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
        }),
      },
    },
    async (request) => {
      const limit = Math.min(Number(request.query.limit ?? 100), CREDITS_PAGE_MAX)
      const page = await listCredits(deps.payins.db, request.query.status ?? 'unassigned', limit)
      return { data: page.rows.map(creditJson), total: page.total }
    },
  )

  app.post(
    '/admin/bank-credits/:creditId/assign',
    {
      schema: {
        ...schema,
        params: Type.Object({ creditId: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Object({
          accountId: Type.String({ minLength: 1, maxLength: 64 }),
          txnId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          reason: Type.String({ minLength: 1, maxLength: REASON_MAX }),
        }),
      },
    },
    async (request) => {
      const operator = request.operator
      if (!operator) throw new Error('a bank-credit assignment ran without the admin guard')
      const { creditId } = request.params
      const { accountId, txnId, reason } = request.body
      const done = await assignCredit(deps.payins, {
        creditId,
        accountId,
        ...(txnId ? { txnId } : {}),
        operatorId: operator.operatorId,
        reason,
      })
      auditNote(request, { target: `creditId=${creditId}`, before: { status: 'unassigned' } })
      return {
        creditId: done.creditId,
        bankRef: done.bankRef,
        accountId: done.accountId,
        txnId: done.txnId,
        amount: amountJson(done.amount, 'VND'),
        reason,
      }
    },
  )
}

/**
 * The sandbox bank's incoming transfer (with VND=sandbox): a customer pays `amount` dong with
 * `memo` as the description. There is no partner to notify us, so the credit goes straight to the
 * sink, and the sandbox bank records the transfer as held (`recordSandboxTransferIn`, for reconciliation).
 */
export function sandboxVndTransferRoutes(
  fastify: FastifyInstance,
  deps: { payins: PayinDeps; adminPreHandler: (r: any) => Promise<void> },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/admin/sandbox/vnd/transfer',
    {
      onRequest: deps.adminPreHandler,
      schema: {
        hide: true,
        body: Type.Object({
          memo: Type.String({ maxLength: 500 }),
          amount: AmountIn('Whole dong'),
        }),
      },
    },
    async (request) => {
      const parsed = parseAmount(request.body.amount, 'VND')
      if (!parsed.ok) throw fieldError('invalid_amount', 'amount', parsed.issue)
      if (parsed.minor <= 0n) throw fieldError('invalid_amount', 'amount', 'must be above zero')
      const at = (deps.payins.now ?? Date.now)()
      // The bank has the money first; the sink credits it (one transaction, as with a partner).
      const { bankRef } = await recordSandboxTransferIn(deps.payins.db, parsed.minor, at)
      const outcome = await ingestBankCredit(deps.payins, {
        bankRef,
        amountMinor: parsed.minor,
        memo: request.body.memo,
        bookedAtMs: at,
      })
      return outcomeJson(outcome, parsed.minor)
    },
  )
}
