import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { readCookie } from '../operators/guard.js'
import { fieldOf, paramsOf } from '../http/request-fields.js'
import { cookieAttributes } from '../operators/routes.js'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../operators/password.js'
import { sameSecret, type OperatorsService } from '../operators/service.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import { ApiError } from '../shared/errors.js'
import { CONSOLE_BASE } from './nav.js'
import { contextOf, field, formFields, sendPage } from './page.js'
import type { Localized } from './strings.js'

/**
 * An operator's own set-up in the browser (docs/operators.md, "Setting up the first operator"): the
 * two calls `POST /admin/setup/begin` and `/finish` as two forms, on the same operator service, so
 * the same checks and audit rows hold. Only the holder of a set-up secret can use it (an admin made
 * it with the operator, or with a reset); it works for one set-up and is used up by it, so the page
 * is of no use once the set-up is done unless an admin issues a new secret.
 *
 * There is no session yet: each form is protected against posts from other sites by a double-submit
 * token (a random value in a short-lived SameSite=Strict cookie of this path that the form repeats),
 * as the sign-in form is. Both forms answer Post/Redirect/Get: the first leads to the page showing
 * the authenticator's secret once (a flash bound to that cookie, src/console/flash.ts), so that a
 * reload never issues a new secret behind an entry already added to the app; the second leads to a
 * page saying the set-up is done.
 */
const BASE = `${CONSOLE_BASE}/setup`
const FORM_COOKIE = 'svcpay_console_setup'
const FORM_TTL_S = 3600

const TEXT: Localized<{
  title: string
  intro: string
  secret: string
  secretHint: string
  begin: string
  secretRefused: string
  expired: string
  enrolTitle: string
  enrolIntro: string
  totpSecret: string
  otpauth: string
  password: string
  passwordHint: string
  passwordAgain: string
  code: string
  codeHint: string
  finish: string
  mismatch: string
  codeRefused: string
  gone: string
  startAgain: string
  doneTitle: string
  done: string
  signIn: string
}> = {
  en: {
    title: 'Set up your operator account',
    intro:
      'An admin created your account and gave you a set-up secret. With it you choose a password and add this service to your authenticator app. The secret works once.',
    secret: 'Set-up secret',
    secretHint: 'It starts with setup_.',
    begin: 'Continue',
    secretRefused: 'This set-up secret is unknown, used or expired. Ask an admin for a new one.',
    expired: 'This form has expired. Please try again.',
    enrolTitle: 'Add the authenticator, choose a password',
    enrolIntro:
      'Add this secret to your authenticator app (paste it, or the address below), then type the code the app shows. It is shown on this page only: if you leave it, start again with your set-up secret.',
    totpSecret: 'Authenticator secret',
    otpauth: 'Address for the app',
    password: 'Password',
    passwordHint: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`,
    passwordAgain: 'Password again',
    code: 'Authenticator code',
    codeHint: 'Six digits, from your authenticator app.',
    finish: 'Finish set-up',
    mismatch: 'The two passwords are not the same.',
    codeRefused:
      'The code was not accepted. Type the code the app shows now (check the phone’s clock); the entry you added stays valid.',
    gone: 'This page was shown once and is not kept. Start again with your set-up secret: you get a new authenticator secret.',
    startAgain: 'Start again',
    doneTitle: 'Set-up complete',
    done: 'Your account is ready. Sign in with your email, your password and the code of your authenticator app.',
    signIn: 'Sign in',
  },
  vi: {
    title: 'Thiết lập tài khoản người vận hành',
    intro:
      'Quản trị viên đã tạo tài khoản và đưa cho bạn một mã thiết lập. Với mã này, bạn chọn mật khẩu và thêm dịch vụ vào ứng dụng xác thực. Mã chỉ dùng được một lần.',
    secret: 'Mã thiết lập',
    secretHint: 'Bắt đầu bằng setup_.',
    begin: 'Tiếp tục',
    secretRefused: 'Mã thiết lập không tồn tại, đã dùng hoặc đã hết hạn. Hãy xin quản trị viên một mã mới.',
    expired: 'Biểu mẫu này đã hết hạn. Vui lòng thử lại.',
    enrolTitle: 'Thêm ứng dụng xác thực, chọn mật khẩu',
    enrolIntro:
      'Hãy thêm khóa bí mật này vào ứng dụng xác thực (dán khóa, hoặc địa chỉ bên dưới), rồi nhập mã ứng dụng hiển thị. Khóa chỉ hiện trên trang này: nếu rời trang, hãy bắt đầu lại bằng mã thiết lập.',
    totpSecret: 'Khóa bí mật xác thực',
    otpauth: 'Địa chỉ cho ứng dụng',
    password: 'Mật khẩu',
    passwordHint: `Từ ${PASSWORD_MIN_LENGTH} đến ${PASSWORD_MAX_LENGTH} ký tự.`,
    passwordAgain: 'Nhập lại mật khẩu',
    code: 'Mã xác thực',
    codeHint: 'Sáu chữ số, từ ứng dụng xác thực của bạn.',
    finish: 'Hoàn tất thiết lập',
    mismatch: 'Hai mật khẩu không giống nhau.',
    codeRefused:
      'Mã không được chấp nhận. Hãy nhập mã ứng dụng đang hiển thị (kiểm tra đồng hồ điện thoại); mục bạn đã thêm vẫn dùng được.',
    gone: 'Trang này chỉ hiện một lần và không được lưu lại. Hãy bắt đầu lại bằng mã thiết lập: bạn sẽ nhận khóa bí mật xác thực mới.',
    startAgain: 'Bắt đầu lại',
    doneTitle: 'Đã thiết lập xong',
    done: 'Tài khoản của bạn đã sẵn sàng. Hãy đăng nhập bằng email, mật khẩu và mã của ứng dụng xác thực.',
    signIn: 'Đăng nhập',
  },
}

type Text = (typeof TEXT)['en']

interface Enrolment {
  email: string
  setupSecret: string
  totpSecret: string
  otpauthUri: string
}

const langQuery = (request: FastifyRequest) => {
  const lang = fieldOf(request.query, 'lang')
  return lang === 'en' || lang === 'vi' ? `?lang=${lang}` : ''
}

/** A fresh double-submit token: set as this path's cookie, returned for the form's hidden field. */
function formToken(request: FastifyRequest, reply: FastifyReply): string {
  const token = randomBytes(32).toString('base64url')
  const attributes = cookieAttributes(request, FORM_TTL_S).replace('Path=/', `Path=${BASE}`)
  reply.header('set-cookie', `${FORM_COOKIE}=${token}; ${attributes}`)
  return token
}

/** The form's token, if it repeats this browser's cookie (compared in constant time). */
function postedToken(request: FastifyRequest, body: Record<string, unknown>): string | undefined {
  const cookie = readCookie(request.headers.cookie, FORM_COOKIE)
  const given = typeof body.form_token === 'string' ? body.form_token : ''
  return cookie && cookie.length >= 32 && sameSecret(cookie, given) ? cookie : undefined
}

export function setupPages(app: FastifyInstance, deps: { operators: OperatorsService }): void {
  const context = (request: FastifyRequest) => ({ clientIp: request.ip, requestId: String(request.id) })

  const page = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    view: (t: Text, token: string) => { title: string; body: SafeHtml },
  ) => {
    const { lang } = contextOf(request, reply)
    const shown = view(TEXT[lang], formToken(request, reply))
    return sendPage(reply, { lang, status, ...shown })
  }
  const problem = (text: string | undefined) =>
    text ? markup`<p class="notice bad" role="alert" id="setup-error">${text}</p>` : ''

  const beginForm = (request: FastifyRequest, reply: FastifyReply, status: number, error?: keyof Text) =>
    page(request, reply, status, (t, token) => ({
      title: t.title,
      body: markup`<div class="card signin">${problem(error ? t[error] : undefined)}<p>${t.intro}</p>
<form method="post" action="${BASE}${langQuery(request)}">
<input type="hidden" name="form_token" value="${token}">
<div class="field"><label for="setup-secret">${t.secret}</label>
<input id="setup-secret" name="setupSecret" type="password" autocomplete="off" required maxlength="128" aria-describedby="setup-secret-hint${error ? ' setup-error' : ''}">
<p class="hint" id="setup-secret-hint">${t.secretHint}</p></div>
<button type="submit">${t.begin}</button></form></div>`,
    }))

  const finishForm = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    setupSecret: string,
    shown?: Enrolment,
    error?: string,
  ) =>
    page(request, reply, status, (t, token) => ({
      title: t.enrolTitle,
      body: markup`<div class="card">${problem(error)}
${
  shown
    ? markup`<p>${t.enrolIntro}</p><dl class="facts" data-testid="totp"><dt>${t.totpSecret}</dt><dd class="mono">${shown.totpSecret}</dd>
<dt>${t.otpauth}</dt><dd class="mono">${shown.otpauthUri}</dd></dl>`
    : ''
}
<form method="post" action="${BASE}/finish${langQuery(request)}">
<input type="hidden" name="form_token" value="${token}"><input type="hidden" name="setupSecret" value="${setupSecret}">
<div class="field"><label for="new-password">${t.password}</label>
<input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" aria-describedby="new-password-hint">
<p class="hint" id="new-password-hint">${t.passwordHint}</p></div>
<div class="field"><label for="new-password-again">${t.passwordAgain}</label>
<input id="new-password-again" name="passwordAgain" type="password" autocomplete="new-password" required maxlength="${PASSWORD_MAX_LENGTH}"></div>
<div class="field"><label for="code">${t.code}</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required aria-describedby="code-hint">
<p class="hint" id="code-hint">${t.codeHint}</p></div>
<button type="submit">${t.finish}</button></form></div>`,
    }))

  app.get(BASE, { schema: { hide: true } }, async (request, reply) => beginForm(request, reply, 200))

  // Step 1, `setup/begin`: a new authenticator secret, shown once on the page the 303 leads to.
  app.post(BASE, { schema: { hide: true } }, async (request, reply) => {
    const body = formFields(request.body)
    const cookie = postedToken(request, body)
    if (!cookie) return beginForm(request, reply, 403, 'expired')
    const setupSecret = field(body, 'setupSecret', 128)
    if (!setupSecret) return beginForm(request, reply, 401, 'secretRefused')
    let begun: Awaited<ReturnType<OperatorsService['setupBegin']>>
    try {
      begun = await deps.operators.setupBegin(setupSecret, context(request))
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return beginForm(request, reply, 401, 'secretRefused')
      throw err
    }
    const enrolment: Enrolment = {
      email: begun.email,
      setupSecret,
      totpSecret: begun.totpSecret,
      otpauthUri: begun.otpauthUri,
    }
    const id = await app.consoleFlashes.put(cookie, { title: 'setup', body: JSON.stringify(enrolment) })
    void reply
      .code(303)
      .headers({ location: `${BASE}/enrol/${id}${langQuery(request)}`, 'cache-control': 'no-store' })
    return ''
  })

  app.get(`${BASE}/enrol/:flashId`, { schema: { hide: true } }, async (request, reply) => {
    const { flashId } = paramsOf(request, Type.Object({ flashId: Type.String() }))
    const flash = await app.consoleFlashes.take(readCookie(request.headers.cookie, FORM_COOKIE), flashId)
    if (!flash) {
      const { lang } = contextOf(request, reply)
      const t = TEXT[lang]
      return sendPage(reply, {
        lang,
        status: 410,
        title: t.title,
        body: markup`<p class="notice warn" role="status">${t.gone}</p><p><a href="${BASE}${langQuery(request)}">${t.startAgain}</a></p>`,
      })
    }
    const enrolment = JSON.parse(flash.body) as Enrolment
    return finishForm(request, reply, 200, enrolment.setupSecret, enrolment)
  })

  // Step 2, `setup/finish`: the password and a current code; the set-up secret is used up.
  app.post(`${BASE}/finish`, { schema: { hide: true } }, async (request, reply) => {
    const body = formFields(request.body)
    const { lang } = contextOf(request, reply)
    const t = TEXT[lang]
    if (!postedToken(request, body)) return beginForm(request, reply, 403, 'expired')
    const setupSecret = field(body, 'setupSecret', 128)
    if (!setupSecret) return beginForm(request, reply, 401, 'secretRefused')
    const password = typeof body.password === 'string' ? body.password : ''
    const code = field(body, 'code', 16) ?? ''
    if (password !== body.passwordAgain)
      return finishForm(request, reply, 400, setupSecret, undefined, t.mismatch)
    if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH)
      return finishForm(request, reply, 400, setupSecret, undefined, t.passwordHint)
    try {
      await deps.operators.setupFinish({ setupSecret, password, code }, context(request))
    } catch (err) {
      if (err instanceof ApiError && err.message.startsWith('The set-up secret'))
        return beginForm(request, reply, 401, 'secretRefused')
      if (err instanceof ApiError && (err.code === 'unauthorized' || err.code === 'invalid_state'))
        return finishForm(request, reply, 401, setupSecret, undefined, t.codeRefused)
      throw err
    }
    const cleared = `${FORM_COOKIE}=; ${cookieAttributes(request, 0).replace('Path=/', `Path=${BASE}`)}`
    void reply.code(303).headers({
      location: `${BASE}/done${langQuery(request)}`,
      'cache-control': 'no-store',
      'set-cookie': cleared,
    })
    return ''
  })

  app.get(`${BASE}/done`, { schema: { hide: true } }, async (request, reply) => {
    const { lang } = contextOf(request, reply)
    const t = TEXT[lang]
    return sendPage(reply, {
      lang,
      title: t.doneTitle,
      body: markup`<p class="notice good" role="status">${t.done}</p><p><a href="${CONSOLE_BASE}/sign-in">${t.signIn}</a></p>`,
    })
  })
}
