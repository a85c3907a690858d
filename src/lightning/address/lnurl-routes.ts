import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { applyRateLimitHeaders, rateLimitErrorBody } from '../../http/rate-limit.js'
import type { LnurlError } from '../lnurl-pay.js'
import { invoiceFor, isLnurlError, knownAddress, lnurlError, payRequestFor, type LnurlDeps } from './lnurl.js'
import type { LightningAddress } from './service.js'

/**
 * The public LNURL-pay endpoints of the Lightning Addresses (no token): LUD-16's
 * `GET /.well-known/lnurlp/{username}` and LUD-06's callback `GET /lnurlp/{username}/callback`.
 *
 * Every refusal has LUD-06's shape `{ "status": "ERROR", "reason" }`, with HTTP 200 as LUD-06
 * services answer it (wallets read the body, and several show nothing useful for a 4xx), except a
 * spent request limit: 429 with Retry-After. Requests are counted per client, and per username for
 * a claimed name (the address is looked up once, before counting). Answers carry
 * `Access-Control-Allow-Origin: *` so that web wallets may call them (LUD-01).
 */
// The router keeps parameters to 200 characters; nothing here can fail validation, so every answer
// is in LNURL's shape.
const UsernameParams = Type.Object({ username: Type.String() })
const CallbackQuery = Type.Object({
  amount: Type.Optional(Type.Unknown()),
  comment: Type.Optional(Type.Unknown()),
})

export function lnurlRoutes(fastify: FastifyInstance, deps: LnurlDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  /**
   * Counts the request against its client and, for a claimed name, against that address; false
   * (and the 429 sent) when a window is spent. An unclaimed name (or one that cannot be one) counts
   * against the client alone, so probing names spends the prober's window, and no counter is kept
   * per name nobody holds.
   */
  async function admitted(
    request: FastifyRequest,
    reply: FastifyReply,
    address: LightningAddress | LnurlError,
  ): Promise<boolean> {
    const limiter = request.server.rateLimiter
    const claimed = isLnurlError(address) ? undefined : address.username
    const decision = await limiter.consumeAddress(claimed, request.ip)
    applyRateLimitHeaders(reply, decision)
    reply.header('Access-Control-Allow-Origin', '*')
    reply.header('Cache-Control', 'no-store')
    if (decision.allowed) return true
    await reply.code(429).send(lnurlError(rateLimitErrorBody(decision).message))
    return false
  }

  app.get(
    '/.well-known/lnurlp/:username',
    { schema: { hide: true, params: UsernameParams } },
    async (request, reply) => {
      const address = await knownAddress(deps, request.params.username)
      if (!(await admitted(request, reply, address))) return reply
      return payRequestFor(deps, address)
    },
  )

  app.get(
    '/lnurlp/:username/callback',
    { schema: { hide: true, params: UsernameParams, querystring: CallbackQuery } },
    async (request, reply) => {
      const address = await knownAddress(deps, request.params.username)
      if (!(await admitted(request, reply, address))) return reply
      const { amount, comment } = request.query
      if (typeof amount !== 'string' || !/^[1-9][0-9]{0,18}$/.test(amount))
        return lnurlError('amount must be given once, as a whole number of millisatoshis')
      if (comment !== undefined && typeof comment !== 'string')
        return lnurlError('comment must be given once')
      return invoiceFor(deps, address, BigInt(amount), comment === '' ? undefined : comment)
    },
  )
}
