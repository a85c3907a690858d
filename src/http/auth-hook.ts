import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthService, Principal } from '../auth/service.js'
import { ApiError } from '../shared/errors.js'
import { applyRateLimitHeaders, rateLimitErrorBody, type Decision, type RateLimiter } from './rate-limit.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal
  }
  interface FastifyInstance {
    /** The request limiter, decorated once by the app so every guard shares it. */
    rateLimiter: RateLimiter
  }
}

/**
 * The onRequest guard of every Bearer-protected route (it runs before the body is read or validated): authenticate, then count the request against the
 * account's tier windows and the key's endpoint limit. A request that fails authentication counts
 * against its client address instead, so keys and tokens cannot be guessed at speed.
 */
export function bearerAuth(auth: AuthService) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    let principal: Principal
    try {
      principal = await auth.authenticate(request.headers.authorization)
    } catch (err) {
      await limitAnonymous(request, reply)
      throw err
    }
    request.principal = principal
    enforce(
      reply,
      await request.server.rateLimiter.consume({
        accountId: principal.accountId,
        tier: principal.tier,
        keyId: principal.keyId,
        method: request.method,
        route: request.routeOptions.url ?? request.url,
      }),
    )
  }
}

/** Token requests count against the key's account, or the client address for an unknown key. */
export function tokenRequestLimit(auth: AuthService) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const apiKey = request.headers['x-api-key']
    const owner = typeof apiKey === 'string' && apiKey ? await auth.accountOfKey(apiKey) : undefined
    if (!owner) return limitAnonymous(request, reply)
    enforce(
      reply,
      await request.server.rateLimiter.consume({
        accountId: owner.accountId,
        tier: owner.tier,
        keyId: apiKey as string,
        method: request.method,
        route: request.routeOptions.url ?? request.url,
      }),
    )
  }
}

async function limitAnonymous(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  enforce(reply, await request.server.rateLimiter.consumeAnonymous(request.ip))
}

function enforce(reply: FastifyReply, decision: Decision): void {
  applyRateLimitHeaders(reply, decision)
  if (!decision.allowed) throw new ApiError('rate_limit_exceeded', rateLimitErrorBody(decision).message)
}

export function principalOf(request: FastifyRequest): Principal {
  const p = request.principal
  if (!p) throw new Error('route used without the bearer preHandler')
  return p
}
