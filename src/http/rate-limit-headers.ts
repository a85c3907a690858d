import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { stringify } from '../shared/json.js'
import { applyRateLimitHeaders, rateLimitErrorBody, type Decision } from './rate-limit.js'

/**
 * Operational endpoints answer without rate-limit headers and are never counted: load balancers and
 * scrapers call them from one address all day (docs/rate-limits.md).
 */
declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The operator (or `system`, for the admin token) a request was authenticated as, set by the
     * admin guard before its role and CSRF checks: a refusal from then on is counted against that
     * operator, not against the address its team may share.
     */
    refusalsCountedFor?: string
  }
}

export const RATE_LIMIT_EXEMPT_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics'])

/**
 * Every answer of the service carries `X-RateLimit-*` (contract section 8), whatever produced it.
 * Routes that count a request (the Bearer guard, the token exchange, the payment pages) set the
 * headers themselves; an answer that arrives here without them was counted by no window:
 *
 * - a client error (4xx other than 429: a failed operator or token authentication, a malformed
 *   token request, an unknown route or method) is counted against the client address, the window of
 *   requests that fail authentication, and becomes a 429 when that window is spent; one refused to
 *   an authenticated operator (its role, its CSRF token, anything its route refuses) is counted
 *   against that operator instead;
 * - anything else (an operator's success, the API reference, a 5xx) reports that window unchanged.
 *
 * Nothing here touches an account's windows: only a request whose credentials were verified does.
 */
export function installRateLimitHeaders(app: FastifyInstance): void {
  // A callback hook: most answers were counted and carry the headers already, and leave here
  // without a promise or a turn of the microtask queue.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.hasHeader('x-ratelimit-limit') || isExempt(request)) return done(null, payload)
    complete(request, reply, payload).then((answer) => done(null, answer), done)
  })
}

async function complete(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const status = reply.statusCode
  const limiter = request.server.rateLimiter
  if (status >= 400 && status < 500 && status !== 429) {
    const operator = request.refusalsCountedFor
    const decision = operator
      ? await limiter.consumeOperatorRefusal(operator)
      : await limiter.consumeAnonymous(request.ip)
    applyRateLimitHeaders(reply, decision)
    if (decision.allowed) return payload
    reply.code(429).type('application/json; charset=utf-8')
    return stringify(rateLimitErrorBody(decision))
  }
  const seen = await limiter.peekAnonymous(request.ip)
  // Retry-After belongs to refusals only.
  applyRateLimitHeaders(reply, status === 429 ? seen : ({ ...seen, allowed: true } satisfies Decision))
  return payload
}

function isExempt(request: FastifyRequest): boolean {
  const path = (request.routeOptions.url ?? request.url.split('?')[0] ?? '').replace(/\/+$/, '')
  return RATE_LIMIT_EXEMPT_PATHS.has(path)
}
