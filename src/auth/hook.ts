import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthService, Principal } from './service.js'
import { ApiError } from '../shared/errors.js'
import {
  applyRateLimitHeaders,
  rateLimitErrorBody,
  type Decision,
  type RateLimiter,
} from '../http/rate-limit.js'

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

/**
 * The onRequest guard of routes whose credentials could be guessed at (the token exchange, the
 * operator routes): an address that has spent its budget of failed requests is refused before its
 * credentials are checked, so a correct guess is no more visible than a wrong one until the window
 * resets. Nothing is counted here; a failure is counted when it is answered (rate-limit-headers.ts).
 */
export async function refuseSpentAddress(request: FastifyRequest): Promise<void> {
  const decision = await request.server.rateLimiter.peekAnonymous(request.ip)
  // The headers of the refusal are written as it is sent, from the same window.
  if (!decision.allowed) throw new ApiError('rate_limit_exceeded', rateLimitErrorBody(decision).message)
}

/**
 * Counts a token request whose signature has been verified and claimed against the key's account.
 * Only such a request may spend the account's windows: a wrong or replayed signature, an unknown key
 * or a malformed body is counted against the client address instead, so an API key alone cannot lock
 * its account out (contract section 8).
 */
export async function limitTokenRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  owner: { accountId: string; tier: 'standard' | 'premium'; keyId: string },
): Promise<void> {
  enforce(
    reply,
    await request.server.rateLimiter.consume({
      accountId: owner.accountId,
      tier: owner.tier,
      keyId: owner.keyId,
      method: request.method,
      route: request.routeOptions.url ?? request.url,
    }),
  )
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
