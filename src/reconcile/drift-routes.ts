import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { asTxnId } from '../shared/ids.js'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/db.js'
import { postEntry } from '../ledger/ledger.js'
import { firstNetworkCreditOf } from '../ledger/reads.js'
import { getTxn } from '../transactions/repository.js'
import type { SandboxLightningRail } from '../lightning/sandbox.js'
import { AmountIn } from '../http/schemas.js'
import { amountJson, parseAmount } from '../shared/amount.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { railCcy, type RailCurrencies } from './refs.js'
import { sql } from '../db/sql.js'

const RAILS = ['lightning', 'onchain', 'tron', 'bank', 'ethereum'] as const

/**
 * Sandbox controls that make the books and the rails part ways, so that reconciliation can be seen
 * to catch it (issue 18). Registered with `RAILS=sandbox` only, under /admin (permission
 * `sandbox.control`); nothing like them exists with real rails.
 * - `POST /admin/sandbox/drift/move`: money moves on a sandbox rail outside the service (an
 *   operator's withdrawal from the node, a top-up of the hot wallet): the rail's balance changes,
 *   the ledger's does not.
 * - `POST /admin/sandbox/drift/pay-invoice`: an outside payer pays one of our Lightning invoices on
 *   the node, and the service is not told (the receive is not completed; the worker may notice it
 *   later by looking the invoice up, as it would with a real node).
 * - `POST /admin/sandbox/drift/duplicate-deposit`: a completed receive's ledger entry is posted a
 *   second time, as a bug crediting one deposit twice would: the books balance, the rail does not.
 */
export function sandboxDriftRoutes(
  fastify: FastifyInstance,
  deps: {
    db: Db
    /** The currency each rail holds (the kind registry's `railCurrencies`). */
    railCurrencies: RailCurrencies
    lightning: SandboxLightningRail | undefined
    adminPreHandler: (request: FastifyRequest) => Promise<void>
    now?: () => number
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const now = deps.now ?? Date.now
  const schema = { hide: true, tags: ['Sandbox'] }

  app.post(
    '/admin/sandbox/drift/move',
    {
      onRequest: deps.adminPreHandler,
      schema: {
        ...schema,
        body: Type.Object({
          rail: Type.Union(RAILS.map((r) => Type.Literal(r))),
          direction: Type.Union([Type.Literal('out'), Type.Literal('in')]),
          amount: AmountIn("In the rail's currency"),
          note: Type.Optional(Type.String({ maxLength: 200 })),
        }),
      },
    },
    async (request) => {
      const { body } = request
      const ccy = railCcy(deps.railCurrencies, body.rail)
      const parsed = parseAmount(body.amount, ccy)
      if (!parsed.ok) throw fieldError('invalid_amount', 'amount', parsed.issue)
      const signed = body.direction === 'out' ? -parsed.minor : parsed.minor
      await deps.db.query(
        sql`INSERT INTO sandbox_rail_movements (rail, ccy, amount_minor, note, created_at) VALUES (${body.rail}, ${ccy}, ${signed}, ${body.note ?? ''}, ${now()})`,
      )
      return { rail: body.rail, ccy, direction: body.direction, amount: amountJson(parsed.minor, ccy) }
    },
  )

  app.post(
    '/admin/sandbox/drift/pay-invoice',
    {
      onRequest: deps.adminPreHandler,
      schema: {
        ...schema,
        body: Type.Object({ paymentRequest: Type.String({ minLength: 1, maxLength: 8_000 }) }),
      },
    },
    async (request) => {
      if (!deps.lightning) throw new ApiError('not_found', 'The sandbox Lightning network is not configured')
      const { paymentRequest } = request.body
      const lightning = deps.lightning
      // Only the node's invoice is settled: the receive is left as it is, so the service is not told.
      const paid = await deps.db.tx((q) => lightning.payOurInvoice(q, paymentRequest.trim()))
      if (!paid.ok) throw fieldError('invalid_payment_request', 'paymentRequest', paid.issue)
      return { paymentHash: paid.paymentHash, amount: amountJson(paid.amountPaidMsat / 1_000n, 'BTC') }
    },
  )

  app.post(
    '/admin/sandbox/drift/duplicate-deposit',
    {
      onRequest: deps.adminPreHandler,
      schema: { ...schema, body: Type.Object({ txnId: Type.String({ minLength: 1, maxLength: 64 }) }) },
    },
    async (request) => {
      const { txnId } = request.body
      return deps.db.tx(async (q) => {
        const txn = await getTxn(q, asTxnId(txnId), { lock: true })
        if (!txn) throw new ApiError('not_found', 'Transaction not found')
        if (!['ln_receive', 'onchain_receive', 'deposit'].includes(txn.kind) || txn.state !== 'completed')
          throw fieldError(
            'invalid_request',
            'txnId',
            'must be a completed receive (Lightning, on-chain or a deposit)',
          )
        // The entry that brought the money in: the one posting out of a network's system account.
        const rows = await firstNetworkCreditOf(q, txnId, ['sys:lightning:BTC', 'sys:onchain:BTC'])
        if (rows.length === 0)
          throw fieldError('invalid_request', 'txnId', 'has no entry crediting money from a network')
        const postings = rows.map((r) => ({
          accountId: r.ledger_account_id,
          ccy: r.ccy,
          amount: BigInt(r.amount as bigint),
        }))
        await postEntry(q, { txnId: null, kind: 'sandbox_duplicate_deposit', postings, now: now() })
        // The network's account, not the FX desk's (a receive into a USDT or VND wallet pays out of
        // sys:fx:<ccy> too).
        const network = postings.find(
          (p) => (p.accountId === 'sys:lightning:BTC' || p.accountId === 'sys:onchain:BTC') && p.amount < 0n,
        )!
        return { txnId, duplicated: amountJson(-network.amount, network.ccy), ccy: network.ccy }
      })
    },
  )
}
