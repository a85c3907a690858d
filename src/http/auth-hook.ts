import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthService, Principal } from '../auth/service.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal
  }
}

/** The preHandler of every Bearer-protected route. */
export function bearerAuth(auth: AuthService) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    request.principal = await auth.authenticate(request.headers.authorization)
  }
}

export function principalOf(request: FastifyRequest): Principal {
  const p = request.principal
  if (!p) throw new Error('route used without the bearer preHandler')
  return p
}
