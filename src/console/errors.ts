import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import { toApiError } from '../http/errors.js'
import { markup } from '../pages/escape.js'
import { CONSOLE_BASE } from './nav.js'
import { contextOf, sendPage } from './page.js'
import type { Localized, ShellStrings } from './strings.js'
import { ApiError } from '../shared/errors.js'

/**
 * Errors of console routes. A browser (it asks for text/html) gets a page: the sign-in form when it
 * has no live session, else a short message in its language with the same status. Anything else (a
 * script, the access tests) gets the contract's JSON error body from the app's handler.
 */
export function installConsoleErrors(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (!wantsHtml(request)) throw err
    const apiError = toApiError(err)
    if (apiError.status >= 500) request.log.error({ err }, 'console request failed')
    if (apiError.status === 401 && request.method === 'GET')
      return reply.redirect(`${CONSOLE_BASE}/sign-in?next=${encodeURIComponent(request.url)}`, 303)
    const { lang, t } = contextOf(request, reply)
    if (err instanceof ConsoleRefusal)
      return sendPage(reply, {
        lang,
        operator: request.operator,
        status: apiError.status,
        title: t.errorTitle,
        body: markup`<p class="notice bad" role="alert">${err.text[lang]}</p><p><a href="${err.back ?? CONSOLE_BASE}">${t.back}</a></p>`,
      })
    const signIn =
      apiError.status === 401 ? markup` <a href="${CONSOLE_BASE}/sign-in">${t.signInAgain}</a>` : ''
    return sendPage(reply, {
      lang,
      operator: apiError.status === 401 ? undefined : request.operator,
      status: apiError.status,
      title: t.errorTitle,
      body: markup`<p class="notice bad" role="alert">${messageFor(apiError.status, apiError.message, t)}${signIn}</p>
<p class="muted">${apiError.message}</p>`,
    })
  })
}

/**
 * A refusal a page explains itself, in each language, where the shell's sentence for its status
 * would mislead (a four-eyes refusal is not about the role). A script still gets the contract's
 * JSON error of the refusal it wraps.
 */
export class ConsoleRefusal extends ApiError {
  constructor(
    cause: ApiError,
    readonly text: Localized<string>,
    readonly back?: string,
  ) {
    super(cause.code, cause.message, cause.details)
  }
}

function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? ''
  return accept.includes('text/html')
}

function messageFor(status: number, message: string, t: ShellStrings): string {
  if (status === 401) return t.sessionEnded
  // A form without its session's CSRF token: stale (another sign-in since) or not ours.
  if (status === 403 && /csrf/i.test(message)) return t.signInExpired
  if (status === 403) return t.forbiddenBody
  if (status === 404) return t.notFoundBody
  if (status === 409) return t.conflictBody
  if (status < 500) return t.invalidBody
  return t.failedBody
}

/** A made-up origin: `next` is resolved against it as a browser would resolve it against ours. */
const PLACEHOLDER_ORIGIN = 'http://console.invalid'

/**
 * A path inside the console to go back to after signing in, or the overview. `next` is resolved as
 * a browser resolves a Location (dot segments, encoded or not, are applied; tabs and line breaks
 * dropped), and only a path that is already in that normal form and stays inside the console is
 * given back, so the address the browser goes to is exactly the one checked here.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 500) return CONSOLE_BASE
  // Printable ASCII only (no tabs, spaces or line breaks), no backslash, and a path of this origin.
  if (!/^\/[\x21-\x7e]*$/.test(next) || next.includes('\\') || next.startsWith('//')) return CONSOLE_BASE
  let url: URL
  try {
    url = new URL(next, PLACEHOLDER_ORIGIN)
  } catch {
    return CONSOLE_BASE
  }
  const path = url.pathname
  if (url.origin !== PLACEHOLDER_ORIGIN || url.hash !== '') return CONSOLE_BASE
  if (path !== CONSOLE_BASE && !path.startsWith(`${CONSOLE_BASE}/`)) return CONSOLE_BASE
  // Encoded dots, slashes and backslashes have no use in a console path; some servers decode them.
  if (/%2e|%2f|%5c/i.test(path) || /\/\/|\/\.\.?(\/|$)/.test(path)) return CONSOLE_BASE
  const normal = path + url.search
  return normal === next ? normal : CONSOLE_BASE
}
