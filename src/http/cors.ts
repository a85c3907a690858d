import type { FastifyInstance, FastifyReply } from 'fastify'

/**
 * CORS for the public API (contract section 11, docs/configuration.md): a browser page at one of
 * the origins of CORS_ORIGINS may call /api/v2, the token exchange included. Its preflight is
 * answered 204 with that origin echoed (never `*`) and the request headers the API reads; its calls,
 * errors included, carry the origin and expose the rate-limit headers. Credentials are never allowed:
 * the API takes a bearer token, not a cookie. Every other origin, and every other route (the
 * operator API and console, which use cookies and CSRF tokens, the pages, the docs, the sandbox),
 * gets no CORS header at all. With the list empty (the default) nothing here runs.
 */

/** The request headers a browser may send: the token exchange's, the bearer token's, the stream's. */
const ALLOW_HEADERS = 'Authorization, Content-Type, X-Api-Key, X-Api-Signature, Last-Event-ID'
const ALLOW_METHODS = 'GET, POST, PUT, DELETE'
/** Response headers beyond the CORS-safelisted ones that clients read (the SDK waits out a 429 by them). */
const EXPOSE_HEADERS = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After'
/** How long a browser may reuse a preflight's answer, in seconds. */
const MAX_AGE_S = '600'

function isPublicApi(url: string): boolean {
  const path = url.split('?', 1)[0]!
  return path === '/api/v2' || path.startsWith('/api/v2/')
}

function addVary(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('vary')
  if (current === undefined) return void reply.header('vary', name)
  const list = String(current)
  if (!list.split(',').some((v) => v.trim().toLowerCase() === name.toLowerCase()))
    reply.header('vary', `${list}, ${name}`)
}

export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return
  const allowed = new Set(origins)
  // onRequest, before the guards and rate limits: their refusals carry the headers too, so a browser
  // can read why it was refused.
  app.addHook('onRequest', (request, reply, done) => {
    if (!isPublicApi(request.url)) return done()
    addVary(reply, 'Origin')
    const origin = request.headers.origin
    if (typeof origin !== 'string' || !allowed.has(origin)) return done()
    reply.header('access-control-allow-origin', origin)
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      void reply
        .code(204)
        .header('access-control-allow-methods', ALLOW_METHODS)
        .header('access-control-allow-headers', ALLOW_HEADERS)
        .header('access-control-max-age', MAX_AGE_S)
        .send()
      return
    }
    reply.header('access-control-expose-headers', EXPOSE_HEADERS)
    done()
  })
}
