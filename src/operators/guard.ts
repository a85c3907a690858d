import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import type { Db, Queryable } from '../db/db.js'
import { inOneTransaction } from '../db/ambient-tx.js'
import { refuseSpentAddress } from '../auth/hook.js'
import { fieldOf, paramsOf, PathParams } from '../http/request-fields.js'
import { applyRateLimitHeaders, rateLimitErrorBody } from '../http/rate-limit.js'
import { ApiError } from '../shared/errors.js'
import { SYSTEM_OPERATOR_ID, sameSecret, type Actor, type OperatorsService } from './service.js'
import { writeAudit } from './audit.js'
import { ADMIN_ROUTES, isStateChanging, roleAllows, routeKey, type RouteAccess } from './permissions.js'
import type { OperatorsConfig } from './config.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator acting on an /admin route, set by the admin guard. */
    operator?: Actor
    /** What a handler adds to its audit row (action, target, before, after). */
    auditNote?: AuditNote
    /** A console form's CSRF token is in its body, checked once the body is read (preValidation). */
    csrfInForm?: boolean
  }
}

export interface AuditNote {
  action?: string
  target?: string | null
  before?: unknown
  after?: unknown
}

// The /admin routes each app declared after its guard, as `METHOD url` (for the access tests).
const declared = new WeakMap<FastifyInstance, Set<string>>()

/** Every `METHOD url` under /admin that passed through this app's guard when it was declared. */
export function guardedAdminRoutes(app: FastifyInstance): string[] {
  return [...(declared.get(app) ?? [])].sort()
}

export const SESSION_COOKIE = 'svcpay_admin'
export const CSRF_HEADER = 'x-csrf-token'

/**
 * Every route under /admin passes here first (a hook of the whole app, so it runs before the
 * route's own hooks): the route must be in ADMIN_ROUTES; the caller must be the ADMIN_TOKEN (as the
 * operator `system`, role admin) or a live operator session; a session must send its CSRF token on
 * any state change; the role must hold the route's permission. A state-changing route then runs in
 * one database transaction that ends by writing its audit row (see RouteAccess).
 */
export function installAdminGuard(
  app: FastifyInstance,
  deps: {
    db: Db
    operators: OperatorsService
    adminToken: string
    operatorsConfig?: Pick<OperatorsConfig, 'adminTokenRoutes'>
  },
): void {
  const tokenOnlyForSetup = deps.operatorsConfig?.adminTokenRoutes === 'setup'
  const tokenHash = createHash('sha256').update(deps.adminToken).digest()
  app.decorateRequest('operator', undefined)
  app.decorateRequest('auditNote', undefined)
  app.decorateRequest('csrfInForm', false)
  app.decorateRequest('refusalsCountedFor', undefined)

  async function authenticate(request: FastifyRequest): Promise<Actor | undefined> {
    const authorization = request.headers.authorization
    if (authorization !== undefined) {
      const m = /^Bearer (.{1,512})$/.exec(authorization)
      const given = createHash('sha256')
        .update(m?.[1] ?? '')
        .digest()
      if (!m || !timingSafeEqual(given, tokenHash)) return undefined
      // Retired for everything but setting up operators unless ADMIN_TOKEN_ROUTES=all (issue 32).
      if (
        tokenOnlyForSetup &&
        !ADMIN_TOKEN_SETUP_ROUTES.has(routeKey(request.method, request.routeOptions.url!))
      )
        throw new ApiError(
          'forbidden',
          'The admin token only sets up operators here (ADMIN_TOKEN_ROUTES=setup): sign in as an operator',
        )
      return { operatorId: SYSTEM_OPERATOR_ID, email: SYSTEM_OPERATOR_ID, role: 'admin', via: 'token' }
    }
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE)
    return cookie ? deps.operators.session(cookie) : undefined
  }

  // A callback hook, not an async one: every API request passes here, and one that is not for
  // /admin leaves without a promise or a turn of the microtask queue.
  app.addHook('onRequest', (request, reply, done) => {
    const url = request.routeOptions.url
    if (url === undefined || !isAdminPath(url)) return done()
    guard(request, reply, url).then(() => done(), done)
  })

  async function guard(request: FastifyRequest, reply: FastifyReply, url: string): Promise<void> {
    const access = ADMIN_ROUTES[routeKey(request.method, url)]
    if (!access) throw new ApiError('forbidden', 'This operator route has no permission assigned')
    if (access.need === 'public') return limitByAddress(request, reply)
    // An address that has spent its budget on failures is refused before anything is compared.
    await refuseSpentAddress(request)
    const actor = await authenticate(request)
    if (!actor) {
      await limitByAddress(request, reply)
      throw new ApiError('unauthorized', 'An operator session or the admin token is required')
    }
    // From here on a refusal is the operator's own: counted in its window, not its address's
    // (rate-limit-headers.ts), and one that has spent that window waits for it to reset.
    request.refusalsCountedFor = actor.operatorId
    const spent = await request.server.rateLimiter.peekOperatorRefusals(actor.operatorId)
    if (!spent.allowed) {
      applyRateLimitHeaders(reply, spent)
      throw new ApiError('rate_limit_exceeded', rateLimitErrorBody(spent).message)
    }
    if (actor.via === 'session' && isStateChanging(request.method)) {
      const given = request.headers[CSRF_HEADER]
      // The console's HTML forms carry the token as a field (src/console/csrf.ts): checked below.
      if (given === undefined && isConsoleForm(request)) request.csrfInForm = true
      else if (typeof given !== 'string' || !sameSecret(given, actor.csrfToken!))
        throw new ApiError('forbidden', `A valid ${CSRF_HEADER} header is required with an operator session`)
    }
    if (!roleAllows(actor.role, access.need))
      throw new ApiError('forbidden', `The ${actor.role} role may not do this (${access.need} is needed)`)
    request.operator = actor
  }

  // Before the body is validated or any handler runs: the form's token, in constant time. Added to
  // the console's routes only (below), so that no other request pays for it.
  const checkFormToken = async (request: FastifyRequest): Promise<void> => {
    if (!request.csrfInForm) return
    const given = fieldOf(request.body, CSRF_FORM_FIELD)
    if (typeof given !== 'string' || !sameSecret(given, request.operator?.csrfToken ?? ''))
      throw new ApiError(
        'forbidden',
        `A valid ${CSRF_HEADER} header or ${CSRF_FORM_FIELD} form field is required with an operator session`,
      )
  }

  const guarded = new Set<string>()
  declared.set(app, guarded)
  app.addHook('onRoute', (route) => {
    if (!isAdminPath(route.url)) return
    for (const method of [route.method].flat()) guarded.add(`${method} ${route.url}`)
    if (route.url.startsWith(CONSOLE_PREFIX))
      route.preValidation = [...[route.preValidation ?? []].flat(), checkFormToken]
    const handler = route.handler as RouteHandlerMethod
    route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const key = routeKey(request.method, request.routeOptions.url ?? route.url)
      const access = ADMIN_ROUTES[key]
      if (!access || !isStateChanging(request.method) || access.audit === 'self' || access.need === 'public')
        return handler.call(this, request, reply)
      const record = async (q: Queryable, result: unknown) => {
        const actor = request.operator
        if (!actor) throw new Error(`${key} ran without the admin guard`)
        const note = request.auditNote ?? {}
        await writeAudit(q, {
          operatorId: actor.operatorId,
          operatorEmail: actor.email,
          action: note.action ?? access.action ?? key,
          target: note.target !== undefined ? note.target : defaultTarget(request),
          before: note.before ?? null,
          after: note.after !== undefined ? note.after : result === reply ? null : result,
          clientIp: request.ip,
          requestId: request.id,
        })
      }
      if (access.audit === 'after') {
        const result = await handler.call(this, request, reply)
        await record(deps.db, result)
        return result
      }
      return inOneTransaction(deps.db, async (q) => {
        if (access.before)
          request.auditNote = { ...request.auditNote, before: await access.before(q, request) }
        const result = await handler.call(this, request, reply)
        // The answer must wait for the commit of the change and its row (docs/operators.md).
        if (reply.sent)
          request.log.error(
            { route: key },
            'an audited admin route answered before its audit row was committed',
          )
        await record(q, result)
        return result
      })
    }
  })
}

/**
 * The routes the admin token still opens with ADMIN_TOKEN_ROUTES=setup: making the first operators,
 * seeing them, and a new set-up for one whose password or second factor is lost (the last admin's).
 */
export const ADMIN_TOKEN_SETUP_ROUTES: ReadonlySet<string> = new Set([
  'GET /admin/operators',
  'POST /admin/operators',
  'POST /admin/operators/:operatorId/reset',
])

export const CSRF_FORM_FIELD = 'csrf_token'

/** A form post of the console (urlencoded), whose CSRF token travels in the body. */
/** The console's routes: the only ones whose form posts may carry the CSRF token as a field. */
const CONSOLE_PREFIX = '/admin/console/'

function isConsoleForm(request: FastifyRequest): boolean {
  const type = request.headers['content-type'] ?? ''
  return (
    (request.routeOptions.url ?? '').startsWith(CONSOLE_PREFIX) &&
    /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)
  )
}

function isAdminPath(url: string): boolean {
  return url === '/admin' || url.startsWith('/admin/') || url.startsWith('/admin.')
}

/** The route's path parameters (`accountId=acc_…`), else the body's accountId, as the audit target. */
function defaultTarget(request: FastifyRequest): string | null {
  const params = Object.entries(paramsOf(request, PathParams))
  if (params.length > 0) return params.map(([k, v]) => `${k}=${v}`).join(',')
  const accountId = fieldOf(request.body, 'accountId')
  return typeof accountId === 'string' ? `accountId=${accountId}` : null
}

async function limitByAddress(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const decision = await request.server.rateLimiter.consumeAnonymous(request.ip)
  applyRateLimitHeaders(reply, decision)
  if (!decision.allowed) throw new ApiError('rate_limit_exceeded', rateLimitErrorBody(decision).message)
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header || header.length > 8_192) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

export function auditNote(request: FastifyRequest, note: AuditNote): void {
  request.auditNote = { ...request.auditNote, ...note }
}

export type { RouteAccess }
