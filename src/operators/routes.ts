import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../shared/errors.js'
import { auditNote, SESSION_COOKIE } from './guard.js'
import { ROLES, roleAllows } from './permissions.js'
import type { Actor, OperatorsService, RequestContext } from './service.js'

/**
 * The operator API of identities and sessions: sign-in and sign-out, set-up of a new operator, and
 * the management of operators. Access to each route is set in src/operators/permissions.ts.
 */
export function operatorRoutes(
  fastify: FastifyInstance,
  deps: { operators: OperatorsService; sessionMaxMs: number; publicBaseUrl: string },
): void {
  fastify.decorate('sessionCookieSecure', sessionCookieSecure(deps.publicBaseUrl))
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const schema = { hide: true, tags: ['Admin'] }
  const { operators } = deps
  const ctx = (request: FastifyRequest): RequestContext => ({
    clientIp: request.ip,
    requestId: String(request.id),
  })
  const actorOf = (request: FastifyRequest): Actor => {
    if (!request.operator) throw new Error('operator route used without the admin guard')
    return request.operator
  }

  app.post(
    '/admin/session',
    {
      schema: {
        ...schema,
        body: Type.Object({
          email: Type.String({ minLength: 3, maxLength: 320 }),
          password: Type.String({ minLength: 1, maxLength: 256 }),
          code: Type.String({ minLength: 1, maxLength: 16 }),
        }),
      },
    },
    async (request, reply) => {
      const signed = await operators.signIn(request.body, ctx(request))
      setSessionCookie(request, reply, signed.sessionToken, Math.floor(deps.sessionMaxMs / 1000))
      return { operator: signed.operator, csrfToken: signed.csrfToken, expiresAt: signed.expiresAt }
    },
  )

  app.get('/admin/session', { schema }, async (request) => {
    const actor = actorOf(request)
    return {
      operator: { id: actor.operatorId, email: actor.email, role: actor.role },
      via: actor.via,
      ...(actor.csrfToken ? { csrfToken: actor.csrfToken } : {}),
    }
  })

  app.delete('/admin/session', { schema }, async (request, reply) => {
    const actor = actorOf(request)
    if (!actor.sessionHash) throw new ApiError('invalid_request', 'The admin token has no session to end')
    await operators.signOut(actor.sessionHash)
    clearSessionCookie(request, reply)
    auditNote(request, { action: 'operator.sign_out', target: `operator:${actor.operatorId}` })
    return { signedOut: true }
  })

  app.post(
    '/admin/sessions/revoke-all',
    {
      schema: {
        ...schema,
        body: Type.Optional(Type.Object({ operatorId: Type.Optional(Type.String({ maxLength: 64 })) })),
      },
    },
    async (request, reply) => {
      const actor = actorOf(request)
      const operatorId = request.body?.operatorId ?? actor.operatorId
      if (operatorId !== actor.operatorId && !roleAllows(actor.role, 'operators.manage'))
        throw new ApiError('forbidden', "Only an admin may end another operator's sessions")
      if (!(await operators.get(operatorId))) throw new ApiError('not_found', 'Operator not found')
      const revoked = await operators.revokeAll(operatorId)
      if (operatorId === actor.operatorId) clearSessionCookie(request, reply)
      auditNote(request, { action: 'operator.sessions_revoked', target: `operator:${operatorId}` })
      return { operatorId, revoked }
    },
  )

  app.post(
    '/admin/setup/begin',
    {
      schema: {
        ...schema,
        body: Type.Object({ setupSecret: Type.String({ minLength: 1, maxLength: 128 }) }),
      },
    },
    async (request) => operators.setupBegin(request.body.setupSecret, ctx(request)),
  )

  app.post(
    '/admin/setup/finish',
    {
      schema: {
        ...schema,
        body: Type.Object({
          setupSecret: Type.String({ minLength: 1, maxLength: 128 }),
          password: Type.String({ minLength: 1, maxLength: 256 }),
          code: Type.String({ minLength: 1, maxLength: 16 }),
        }),
      },
    },
    async (request) => {
      return { operator: await operators.setupFinish(request.body, ctx(request)) }
    },
  )

  app.get('/admin/operators', { schema }, async () => ({ data: await operators.list() }))

  app.post(
    '/admin/operators',
    {
      schema: {
        ...schema,
        body: Type.Object({
          email: Type.String({ minLength: 3, maxLength: 320 }),
          role: Type.Union(ROLES.map((r) => Type.Literal(r))),
        }),
      },
    },
    async (request) => {
      const created = await operators.create(request.body)
      auditNote(request, {
        action: 'operator.create',
        target: `operator:${created.operator.id}`,
        after: {
          email: created.operator.email,
          role: created.operator.role,
          status: created.operator.status,
        },
      })
      return created
    },
  )

  const params = Type.Object({ operatorId: Type.String({ maxLength: 64 }) })

  app.post('/admin/operators/:operatorId/disable', { schema: { ...schema, params } }, async (request) => {
    const { operatorId } = request.params
    const changed = await operators.disable(operatorId)
    if (!changed) throw new ApiError('not_found', 'Operator not found')
    auditNote(request, {
      action: 'operator.disable',
      target: `operator:${operatorId}`,
      before: { status: changed.before.status },
      after: { status: changed.after.status, sessionsEnded: true },
    })
    return { operator: changed.after }
  })

  app.post(
    '/admin/operators/:operatorId/role',
    {
      schema: {
        ...schema,
        params,
        body: Type.Object({ role: Type.Union(ROLES.map((r) => Type.Literal(r))) }),
      },
    },
    async (request) => {
      const { operatorId } = request.params
      const changed = await operators.setRole(operatorId, request.body.role)
      if (!changed) throw new ApiError('not_found', 'Operator not found')
      auditNote(request, {
        action: 'operator.role',
        target: `operator:${operatorId}`,
        before: { role: changed.before.role },
        after: { role: changed.after.role },
      })
      return { operator: changed.after }
    },
  )

  app.post('/admin/operators/:operatorId/enable', { schema: { ...schema, params } }, async (request) => {
    const { operatorId } = request.params
    const changed = await operators.enable(operatorId)
    if (!changed) throw new ApiError('not_found', 'Operator not found')
    auditNote(request, {
      action: 'operator.enable',
      target: `operator:${operatorId}`,
      before: { status: changed.before.status },
      after: { status: changed.after.status },
    })
    return { operator: changed.after }
  })

  app.post('/admin/operators/:operatorId/reset', { schema: { ...schema, params } }, async (request) => {
    const { operatorId } = request.params
    const reset = await operators.reset(operatorId)
    if (!reset) throw new ApiError('not_found', 'Operator not found')
    // The new set-up secret goes to the caller once and never to the audit trail.
    auditNote(request, {
      action: 'operator.reset',
      target: `operator:${operatorId}`,
      before: { status: reset.before.status },
      after: { status: reset.after.status, credentialsCleared: true, sessionsEnded: true },
    })
    return { operator: reset.after, setupSecret: reset.setupSecret, setupExpiresAt: reset.setupExpiresAt }
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether session cookies carry Secure, decided once from PUBLIC_BASE_URL (operatorRoutes). */
    sessionCookieSecure?: boolean
  }
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return (
    host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
  )
}

/**
 * Session cookies go without Secure only when the service's configured public address is plain
 * http on a loopback name (a local set-up without TLS). The Host header a request carries is not
 * asked: a TLS proxy may forward `Host: localhost`, and a client may name any host it likes.
 */
export function sessionCookieSecure(publicBaseUrl: string): boolean {
  let url: URL
  try {
    url = new URL(publicBaseUrl)
  } catch {
    return true
  }
  return !(url.protocol === 'http:' && isLoopbackHost(url.hostname))
}

export function cookieAttributes(request: FastifyRequest, maxAgeS: number): string {
  const secure = request.protocol === 'https' || request.server.sessionCookieSecure !== false
  return `Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? '; Secure' : ''}`
}

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  maxAgeS: number,
): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=${token}; ${cookieAttributes(request, maxAgeS)}`)
  reply.header('cache-control', 'no-store')
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=; ${cookieAttributes(request, 0)}`)
}
