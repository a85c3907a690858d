import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { fieldOf } from '../http/request-fields.js'
import { readCookie } from '../operators/guard.js'
import { markup } from '../pages/escape.js'
import { ApiError } from '../shared/errors.js'
import { clearSessionCookie, cookieAttributes, setSessionCookie } from '../operators/routes.js'
import { sameSecret, type OperatorsService } from '../operators/service.js'
import { CONSOLE_BASE } from './nav.js'
import { consoleAction, contextOf, field, formFields, sendPage } from './page.js'
import { safeNext } from './errors.js'
import type { ShellStrings } from './strings.js'

/**
 * Signing in and out of the console, on the operator session service (src/operators/service.ts):
 * the same checks, lockout, audit rows and cookie as `POST /admin/session`. Before there is a
 * session the sign-in form is protected against cross-site posting by a double-submit token: a
 * random value in a SameSite=Strict cookie that the form must repeat.
 */
const FORM_COOKIE = 'svcpay_console_signin'
const FORM_COOKIE_PATH = `${CONSOLE_BASE}/sign-in`
const FORM_TTL_S = 3600

export function signInRoutes(
  app: FastifyInstance,
  deps: { operators: OperatorsService; sessionMaxMs: number },
): void {
  app.get(`${CONSOLE_BASE}/sign-in`, { schema: { hide: true } }, async (request, reply) =>
    signInForm(request, reply, 200),
  )

  app.post(`${CONSOLE_BASE}/sign-in`, { schema: { hide: true } }, async (request, reply) => {
    const body = formFields(request.body)
    const cookie = readCookie(request.headers.cookie, FORM_COOKIE)
    const given = typeof body.form_token === 'string' ? body.form_token : ''
    if (!cookie || !sameSecret(cookie, given)) return signInForm(request, reply, 403, 'expired')
    const email = field(body, 'email', 320)
    const password = typeof body.password === 'string' ? body.password : ''
    const code = field(body, 'code', 16)
    if (!email || !code || password === '' || password.length > 256)
      return signInForm(request, reply, 401, 'failed')
    try {
      const signed = await deps.operators.signIn(
        { email, password, code },
        { clientIp: request.ip, requestId: String(request.id) },
      )
      setSessionCookie(request, reply, signed.sessionToken, Math.floor(deps.sessionMaxMs / 1000))
      // The form's token has done its work.
      reply.header('set-cookie', [
        reply.getHeader('set-cookie') as string,
        `${FORM_COOKIE}=; ${cookieAttributes(request, 0).replace('Path=/', `Path=${FORM_COOKIE_PATH}`)}`,
      ])
      return reply.redirect(safeNext(fieldOf(request.query, 'next') ?? body.next), 303)
    } catch (err) {
      if (err instanceof ApiError && err.code === 'unauthorized')
        return signInForm(request, reply, 401, 'failed')
      throw err
    }
  })

  consoleAction(app, `${CONSOLE_BASE}/sign-out`, undefined, async (ctx) => {
    await deps.operators.signOut(ctx.operator.sessionHash ?? '')
    clearSessionCookie(ctx.request, ctx.reply)
    return {
      title: ctx.t.signedOutTitle,
      body: signedOutBody(ctx.t, ctx.t.signedOutBody),
      signedOut: true,
      audit: { action: 'operator.sign_out', target: `operator:${ctx.operator.operatorId}` },
    }
  })

  consoleAction(app, `${CONSOLE_BASE}/sign-out-everywhere`, undefined, async (ctx) => {
    const revoked = await deps.operators.revokeAll(ctx.operator.operatorId)
    clearSessionCookie(ctx.request, ctx.reply)
    return {
      title: ctx.t.signedOutTitle,
      body: signedOutBody(ctx.t, ctx.t.signedOutEverywhereBody),
      signedOut: true,
      audit: {
        action: 'operator.sessions_revoked',
        target: `operator:${ctx.operator.operatorId}`,
        after: { revoked },
      },
    }
  })
}

function signedOutBody(t: ShellStrings, text: string) {
  return markup`<p class="notice good" role="status">${text}</p><p><a href="${CONSOLE_BASE}/sign-in">${t.signInAgain}</a></p>`
}

function signInForm(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  problem?: 'failed' | 'expired',
): string {
  const { lang, t } = contextOf(request, reply)
  const token = randomBytes(32).toString('base64url')
  const attributes = cookieAttributes(request, FORM_TTL_S).replace('Path=/', `Path=${FORM_COOKIE_PATH}`)
  reply.header('set-cookie', `${FORM_COOKIE}=${token}; ${attributes}`)
  const next = safeNext(fieldOf(request.query, 'next'))
  const action = `${CONSOLE_BASE}/sign-in${next === CONSOLE_BASE ? '' : `?next=${encodeURIComponent(next)}`}`
  const message =
    problem === undefined
      ? ''
      : markup`<p class="notice bad" role="alert" id="signin-error">${problem === 'failed' ? t.signInFailed : t.signInExpired}</p>`
  const described = problem ? ' signin-error' : ''
  return sendPage(reply, {
    lang,
    status,
    title: t.signInTitle,
    body: markup`<div class="card signin">
${message}
<p>${t.signInIntro}</p>
<form method="post" action="${action}">
<input type="hidden" name="form_token" value="${token}">
<div class="field"><label for="email">${t.email}</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="320"></div>
<div class="field"><label for="password">${t.password}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256"></div>
<div class="field"><label for="code">${t.totpCode}</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required aria-describedby="code-hint${described}">
<p class="hint" id="code-hint">${t.totpHint}</p></div>
<button type="submit">${t.signIn}</button>
</form>
</div>`,
  })
}
