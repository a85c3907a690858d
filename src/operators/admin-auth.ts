import type { FastifyRequest } from 'fastify'
import { createHash, timingSafeEqual } from 'node:crypto'
import { refuseSpentAddress } from '../auth/hook.js'
import { ApiError } from '../shared/errors.js'

/**
 * The onRequest guard of operator routes: a bearer ADMIN_TOKEN, compared in constant time. Under
 * /admin the app's guard (src/operators/guard.ts) has already admitted the caller (token or operator
 * session, permission, CSRF); this check remains for a route declared without it. A failure is
 * counted against the client address like any other (http/rate-limit-headers.ts), and an address
 * that has spent its budget is refused before its token is compared.
 */
export function adminAuth(adminToken: string) {
  const expected = createHash('sha256').update(adminToken).digest()
  return async (request: FastifyRequest) => {
    if (request.operator) return
    await refuseSpentAddress(request)
    const m = /^Bearer (.{1,512})$/.exec(request.headers.authorization ?? '')
    const given = createHash('sha256')
      .update(m?.[1] ?? '')
      .digest()
    if (!m || !timingSafeEqual(given, expected))
      throw new ApiError('unauthorized', 'A valid admin token is required')
  }
}
