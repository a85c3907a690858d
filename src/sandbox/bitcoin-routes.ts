import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AuthService } from '../auth/service.js'
import { bearerAuth } from '../auth/hook.js'
import { AmountIn, AmountOut, BEARER, errors } from '../http/schemas.js'
import { decodeInvoice } from '../lightning/bolt11.js'
import { validateAddress } from '../onchain/address.js'
import { MINE_BLOCKS_MAX, type SandboxOnchainRail } from '../onchain/sandbox.js'
import type { SandboxLightningRail } from '../lightning/sandbox.js'
import { amountJson, parseAmount } from '../shared/amount.js'
import { fieldError } from '../shared/errors.js'
import { wakeWorkers } from '../bitcoin/schedule.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { scheduleCheck } from '../transactions/repository.js'
import { txnByRailRef } from '../transactions/reads.js'
import type { KindRegistry } from '../transactions/kinds.js'
import { completeLnReceive } from '../lightning/receive.js'
import { BTC_MAX_MONEY_SATS } from '../transactions/amount-limits.js'

// No real Bitcoin payment can be larger than the money supply; the sandbox networks refuse it too.
const MORE_THAN_MAX_MONEY = 'is more than all the bitcoin there will ever be (21000000 BTC)'

/**
 * The sandbox Bitcoin networks' controls (contract section 9): an outside payer paying our
 * invoices and addresses, outside invoices for sends to pay, and blocks. A paid invoice of ours
 * completes its receive at once; every other action that concerns a transaction sets its
 * `next_check_at` to now and wakes the workers, so it moves on within milliseconds. Every route
 * is offered twice: with a Bearer token of any account under
 * `/sandbox/...`, and with the admin token under `/admin/sandbox/...` for the command line.
 */
export function sandboxBitcoinRoutes(
  app: FastifyInstance,
  deps: {
    auth: AuthService
    /** The Bitcoin deps, with the sandbox nodes this folder plays the outside world with. */
    bitcoin: BitcoinDeps & {
      rails: { sandbox: { lightning?: SandboxLightningRail; onchain?: SandboxOnchainRail } }
    }
    adminPreHandler: (request: FastifyRequest) => Promise<void>
    kinds: Pick<KindRegistry, 'confirmationWaits'>
  },
): void {
  const { db, config } = deps.bitcoin
  const { lightning, onchain } = deps.bitcoin.rails.sandbox
  const now = deps.bitcoin.now ?? Date.now
  const bearer = bearerAuth(deps.auth)

  function route(
    path: string,
    summary: string,
    body: ReturnType<typeof Type.Object>,
    response: ReturnType<typeof Type.Object>,
    handler: (body: any) => Promise<unknown>,
  ) {
    // Authentication runs on request, before the body is parsed or validated: a caller without a
    // token learns nothing about what the body should be.
    app.post(
      `/sandbox${path}`,
      {
        onRequest: bearer,
        schema: {
          tags: ['Sandbox'],
          summary,
          security: BEARER,
          body,
          response: { 200: response, ...errors(400, 401, 429) },
        },
      },
      async (request) => handler(request.body),
    )
    app.post(
      `/admin/sandbox${path}`,
      { onRequest: deps.adminPreHandler, schema: { hide: true, body } },
      async (request) => handler(request.body),
    )
  }

  if (lightning) {
    route(
      '/lightning/pay',
      'An outside payer pays one of our Lightning invoices (sandbox only)',
      Type.Object({ paymentRequest: Type.String({ minLength: 1, maxLength: 8_000 }) }),
      Type.Object(
        { paymentHash: Type.String(), amount: AmountOut('Amount paid, BTC') },
        {
          examples: [
            {
              paymentHash: 'e5b11aa8c1b669a9f8052f6a46bd62ee6013d9457162291b6e7f6b136c631a4d',
              amount: 0.0005,
            },
          ],
        },
      ),
      async (body: { paymentRequest: string }) => {
        const decoded = decodeInvoice(body.paymentRequest.trim())
        if ('error' in decoded) throw fieldError('invalid_payment_request', 'paymentRequest', decoded.error)
        const paid = await db.tx(async (q) => {
          // The receive is locked first: an account of ours paying the same invoice waits, or wins.
          const receive = await txnByRailRef(q, 'ln_receive', decoded.paymentHash, { lock: true })
          if (!receive)
            throw fieldError(
              'invalid_payment_request',
              'paymentRequest',
              'not an invoice issued by this service',
            )
          if (receive.state !== 'srccreated') {
            const issue =
              receive.state === 'completed' ? 'the invoice is already paid' : 'the invoice has expired'
            throw fieldError('invalid_payment_request', 'paymentRequest', issue)
          }
          const result = await lightning.payOurInvoice(q, body.paymentRequest.trim())
          if (!result.ok) throw fieldError('invalid_payment_request', 'paymentRequest', result.issue)
          // The receive completes in this transaction, under its lock: were it left for the worker,
          // an internal send confirmed in between would find it open and pay the invoice a second time.
          await completeLnReceive(deps.bitcoin, q, receive, result.amountPaidMsat / 1_000n, now())
          return result
        })
        return { paymentHash: paid.paymentHash, amount: amountJson(paid.amountPaidMsat / 1_000n, 'BTC') }
      },
    )

    route(
      '/lightning/invoice',
      'An outside Lightning invoice for sends to pay (sandbox only)',
      Type.Object({
        amount: Type.Optional(AmountIn('BTC; leave out for a zero-amount invoice')),
        outcome: Type.Optional(Type.Union([Type.Literal('succeed'), Type.Literal('fail')])),
      }),
      Type.Object(
        { paymentRequest: Type.String() },
        { examples: [{ paymentRequest: 'lnbcrt100u1p4s9...' }] },
      ),
      async (body: { amount?: unknown; outcome?: 'succeed' | 'fail' }) => {
        let amountMsat: bigint | undefined
        if (body.amount !== undefined) {
          const parsed = parseAmount(body.amount, 'BTC')
          if (!parsed.ok) throw fieldError('invalid_amount', 'amount', parsed.issue)
          if (parsed.minor > BTC_MAX_MONEY_SATS)
            throw fieldError('invalid_amount', 'amount', MORE_THAN_MAX_MONEY)
          amountMsat = parsed.minor * 1_000n
        }
        const issued = await lightning.createOutsideInvoice({
          ...(amountMsat === undefined ? {} : { amountMsat }),
          outcome: body.outcome ?? 'succeed',
        })
        return { paymentRequest: issued.paymentRequest }
      },
    )
  }

  if (onchain) {
    route(
      '/onchain/send',
      'An outside payment to a Bitcoin address, into the mempool (sandbox only)',
      Type.Object({
        address: Type.String({ minLength: 1, maxLength: 100 }),
        amount: AmountIn('BTC'),
        // Who pays: the address the payment's input spends, as a node lists it (deposit screening).
        fromAddress: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      }),
      Type.Object(
        { txid: Type.String() },
        { examples: [{ txid: '9c2e4f1a7b3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7' }] },
      ),
      async (body: { address: string; amount: unknown; fromAddress?: string }) => {
        const check = validateAddress(body.address.trim(), config.network)
        if (!check.ok) throw fieldError('invalid_address', 'address', check.issue)
        const address = check.address
        const parsed = parseAmount(body.amount, 'BTC')
        if (!parsed.ok) throw fieldError('invalid_amount', 'amount', parsed.issue)
        if (parsed.minor > BTC_MAX_MONEY_SATS)
          throw fieldError('invalid_amount', 'amount', MORE_THAN_MAX_MONEY)
        // The sandbox chain wakes the deposit watcher for addresses we watch.
        const from = body.fromAddress?.trim()
        return onchain.sendFromOutside({
          address,
          amountSats: parsed.minor,
          ...(from ? { fromAddress: from } : {}),
        })
      },
    )

    route(
      '/onchain/mine',
      'Mine blocks: the first takes every transaction in the mempool (sandbox only)',
      Type.Object({ blocks: Type.Optional(Type.Integer({ minimum: 1, maximum: MINE_BLOCKS_MAX })) }),
      Type.Object(
        { height: Type.Integer({ description: 'The new chain height' }) },
        { examples: [{ height: 102 }] },
      ),
      async (body: { blocks?: number } | undefined) => {
        const height = await db.tx(async (q) => {
          const h = await onchain.mine(q, body?.blocks ?? 1)
          // Everything waiting for confirmations is looked at again now.
          await scheduleCheck(q, { awaiting: deps.kinds.confirmationWaits }, now(), 'exact')
          await wakeWorkers(q)
          return h
        })
        return { height }
      },
    )
  }
}
