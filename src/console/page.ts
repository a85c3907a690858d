import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { auditNote, type AuditNote } from '../operators/guard.js'
import { ADMIN_ROUTES } from '../operators/permissions.js'
import type { SafeHtml } from '../pages/escape.js'
import { createNonce } from '../pages/headers.js'
import type { Lang } from '../pages/i18n.js'
import type { Actor } from '../operators/service.js'
import { consoleSecurityHeaders } from './headers.js'
import { renderDocument } from './layout.js'
import type { Section } from './nav.js'
import { consoleLanguage, SHELL_STRINGS, type ShellStrings } from './strings.js'
import { operatorCredential, resultPath, signedOutPath } from './flash.js'

/**
 * How a console page is declared. The admin guard has already admitted the request by the time a
 * handler runs (session or token, the route's permission from ADMIN_ROUTES, the CSRF token of a
 * state change), so a page only reads and renders. Declaring a page that is not in ADMIN_ROUTES
 * fails at start-up rather than leaving it refused to everyone.
 */
export interface ConsoleContext {
  request: FastifyRequest
  reply: FastifyReply
  operator: Actor
  lang: Lang
  t: ShellStrings
  /** The query string, each value as given: a page judges its own filters (see ConsoleQuery). */
  query: ConsoleQuery
}

/**
 * A console page's query string as Fastify parses it: every value a string, a repeated name an
 * array of them. It is checked in the handler, not as the route's schema, and admits every query
 * there is: a filter a page does not take never becomes a JSON validation error; the page decides
 * (ignores it, or shows its form with a notice), as it did before.
 */
const ConsoleQuery = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))
export type ConsoleQuery = Static<typeof ConsoleQuery>

/**
 * A form post's (or a script's JSON) fields by name. A body of another shape (a JSON array or
 * string) has no fields, as before: it is read here rather than refused by a schema, so that the
 * action answers it with its page, as it answers a missing field.
 */
const FormFields = Type.Record(Type.String(), Type.Unknown())
export const formFields = (body: unknown): Record<string, unknown> =>
  Value.Check(FormFields, body) ? body : {}

export interface Rendered {
  title: string
  body: SafeHtml
  /** HTTP status; 200 by default. */
  status?: number
  /** The action ended this session: the page is drawn without the navigation. */
  signedOut?: boolean
  /** The navigation entry to mark, where it is not the route's own (a form's result page). */
  section?: Section
}

export function contextOf(request: FastifyRequest, reply: FastifyReply): Omit<ConsoleContext, 'operator'> {
  const query = Value.Check(ConsoleQuery, request.query) ? request.query : {}
  const lang = consoleLanguage(query, request.headers['accept-language'])
  return { request, reply, lang, t: SHELL_STRINGS[lang], query }
}

/** Sends a console page as HTML with its security headers and a fresh nonce; returns the body. */
export function sendPage(
  reply: FastifyReply,
  view: { lang: Lang; operator?: Actor; section?: Section } & Rendered,
): string {
  const nonce = createNonce()
  void reply.code(view.status ?? 200).headers(consoleSecurityHeaders(nonce))
  return renderDocument({ ...view, nonce })
}

function requireDeclared(method: 'GET' | 'POST', path: string): void {
  if (!ADMIN_ROUTES[`${method} ${path}`])
    throw new Error(
      `console route ${method} ${path} is missing from ADMIN_ROUTES (src/operators/permissions.ts)`,
    )
}

function actorOf(request: FastifyRequest): Actor {
  if (!request.operator) throw new Error('console route used without the admin guard')
  return request.operator
}

/** A GET page for a signed-in operator; `section` marks its entry in the navigation. */
export function consolePage(
  app: FastifyInstance,
  path: string,
  section: Section | undefined,
  render: (ctx: ConsoleContext) => Promise<Rendered>,
): void {
  requireDeclared('GET', path)
  app.get(path, { schema: { hide: true } }, async (request, reply) => {
    const ctx = { ...contextOf(request, reply), operator: actorOf(request) }
    const page = await render(ctx)
    return sendPage(reply, {
      ...page,
      lang: ctx.lang,
      operator: ctx.operator,
      section: page.section ?? section,
    })
  })
}

/**
 * A state-changing form post (urlencoded, with the CSRF field) or script call (JSON, with the
 * header). The guard runs it in one database transaction ending with its audit row; `audit` is what
 * that row records. It answers Post/Redirect/Get (src/console/flash.ts): the page the action
 * renders is kept once, in the same transaction, and the answer, sent after the commit, is a
 * 303 See Other to the GET that shows it; a sign-out's leads to the signed-out page. A refusal
 * (an error) is answered with its page at once, and changes nothing.
 */
export function consoleAction(
  app: FastifyInstance,
  path: string,
  section: Section | undefined,
  act: (ctx: ConsoleContext, body: Record<string, unknown>) => Promise<Rendered & { audit: AuditNote }>,
): void {
  requireDeclared('POST', path)
  app.post(path, { schema: { hide: true } }, async (request, reply) => {
    const ctx = { ...contextOf(request, reply), operator: actorOf(request) }
    const done = await act(ctx, formFields(request.body))
    auditNote(request, { after: null, ...done.audit })
    const lang = typeof ctx.query.lang === 'string' ? ctx.query.lang : undefined
    const location = done.signedOut
      ? signedOutPath(done.audit.action === 'operator.sessions_revoked', lang)
      : resultPath(
          await app.consoleFlashes.put(operatorCredential(request) ?? '', {
            title: done.title,
            body: String(done.body),
            ...(section ? { section } : {}),
          }),
          lang,
        )
    // Not reply.redirect(): that sends at once, before the guard commits the change and its row.
    void reply.code(303).headers({ location, 'cache-control': 'no-store' })
    return ''
  })
}

/** A text field of a form or JSON body: trimmed, at most `max` characters, or undefined. */
export function field(body: Record<string, unknown>, name: string, max = 200): string | undefined {
  const v = body[name]
  if (typeof v !== 'string') return undefined
  const text = v.trim()
  return text === '' || text.length > max ? undefined : text
}
