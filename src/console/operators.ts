import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { paramsOf } from '../http/request-fields.js'
import type { ConsoleDeps } from './deps.js'
import { ROLES, isRole } from '../operators/permissions.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import type { Operator } from '../operators/service.js'
import { ApiError } from '../shared/errors.js'
import { csrfField } from './csrf.js'
import { when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import { consoleAction, consolePage, field, type ConsoleContext } from './page.js'
import type { Localized } from './strings.js'

/**
 * Operators (admin only: `operators.manage`): the list with each one's role and status, a form to
 * create one, and per operator: change role, disable or enable, reset (a new set-up secret), each a
 * form post calling the operators service as the operator API does (src/operators/routes.ts), in
 * the guard's transaction that ends with the audit row. A set-up secret is shown once, on the page
 * that answers the post, and never reaches the audit trail.
 */
const TEXT: Localized<{
  list: string
  email: string
  role: string
  status: string
  created: string
  actions: string
  create: string
  createButton: string
  created1: string
  secretOnce: string
  setupSecret: string
  validUntil: string
  changeRole: string
  setRole: string
  disable: string
  enable: string
  reset: string
  disabled: string
  enabled: string
  roleSet: string
  wasReset: string
  back: string
  statuses: Record<Operator['status'], string>
}> = {
  en: {
    list: 'Operators',
    email: 'Email',
    role: 'Role',
    status: 'Status',
    created: 'Created',
    actions: 'Actions',
    create: 'Create an operator',
    createButton: 'Create',
    created1: 'Operator {email} created',
    secretOnce:
      'Copy the set-up secret now and hand it to the operator over a channel other than email. It is shown this once; the operator uses it to choose a password and enrol an authenticator.',
    setupSecret: 'Set-up secret',
    validUntil: 'Valid until',
    changeRole: 'Role of {email}',
    setRole: 'Set role',
    disable: 'Disable',
    enable: 'Enable',
    reset: 'Reset password and second factor',
    disabled: '{email} is disabled; its sessions have ended.',
    enabled: '{email} is enabled ({status}).',
    roleSet: '{email} is now {role}.',
    wasReset: 'The password and second factor of {email} are cleared and its sessions ended',
    back: 'Back to the operators',
    statuses: { pending: 'set-up pending', active: 'active', disabled: 'disabled' },
  },
  vi: {
    list: 'Người vận hành',
    email: 'Email',
    role: 'Vai trò',
    status: 'Trạng thái',
    created: 'Tạo lúc',
    actions: 'Thao tác',
    create: 'Tạo người vận hành',
    createButton: 'Tạo',
    created1: 'Đã tạo người vận hành {email}',
    secretOnce:
      'Hãy sao chép mã thiết lập ngay và chuyển cho người vận hành qua kênh khác email. Mã chỉ hiện một lần; người vận hành dùng nó để đặt mật khẩu và đăng ký ứng dụng xác thực.',
    setupSecret: 'Mã thiết lập',
    validUntil: 'Hiệu lực đến',
    changeRole: 'Vai trò của {email}',
    setRole: 'Đặt vai trò',
    disable: 'Vô hiệu hóa',
    enable: 'Kích hoạt lại',
    reset: 'Đặt lại mật khẩu và yếu tố thứ hai',
    disabled: '{email} đã bị vô hiệu hóa; các phiên đã kết thúc.',
    enabled: '{email} đã được kích hoạt lại ({status}).',
    roleSet: '{email} hiện có vai trò {role}.',
    wasReset: 'Mật khẩu và yếu tố thứ hai của {email} đã bị xóa, các phiên đã kết thúc',
    back: 'Quay lại danh sách người vận hành',
    statuses: { pending: 'chờ thiết lập', active: 'đang hoạt động', disabled: 'đã vô hiệu hóa' },
  },
}

const fill = (text: string, values: Record<string, string>) =>
  text.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? '')

const OperatorParams = Type.Object({ operatorId: Type.String() })

export function operatorPages(app: FastifyInstance, c: ConsoleDeps): void {
  const base = `${CONSOLE_BASE}/operators`
  const back = (t: (typeof TEXT)['en']) => markup`<p><a href="${base}">${t.back}</a></p>`
  const done = (text: string, t: (typeof TEXT)['en']) =>
    markup`<p class="notice good" role="status">${text}</p>${back(t)}`
  const idOf = (ctx: ConsoleContext) => {
    const { operatorId } = paramsOf(ctx.request, OperatorParams)
    if (operatorId.length > 64) throw new ApiError('not_found', 'Operator not found')
    return operatorId
  }
  const found = <T>(value: T | undefined): T => {
    if (value === undefined) throw new ApiError('not_found', 'Operator not found')
    return value
  }
  const secretShown = (
    t: (typeof TEXT)['en'],
    secret: string,
    expiresAt: number,
  ): SafeHtml => markup`<p class="notice warn" role="status">${t.secretOnce}</p>
<dl class="facts" data-testid="setup-secret"><dt>${t.setupSecret}</dt><dd class="mono">${secret}</dd>
<dt>${t.validUntil}</dt><dd>${when(expiresAt)}</dd></dl>${back(t)}`

  consolePage(app, base, 'operators', async (ctx) => {
    const t = TEXT[ctx.lang]
    const csrf = ctx.operator.csrfToken ? csrfField(ctx.operator.csrfToken) : ''
    const roleOptions = (selected?: string) =>
      ROLES.map((r) => markup`<option value="${r}"${r === selected ? markup` selected` : ''}>${r}</option>`)
    const rows = (await c.operators.list()).map((o) => {
      const roleLabel = fill(t.changeRole, { email: o.email })
      const toggle =
        o.status === 'disabled'
          ? markup`<form class="inline" method="post" action="${base}/${o.id}/enable">${csrf}<button type="submit" class="secondary" aria-label="${t.enable}: ${o.email}">${t.enable}</button></form>`
          : markup`<form class="inline" method="post" action="${base}/${o.id}/disable">${csrf}<button type="submit" class="secondary" aria-label="${t.disable}: ${o.email}">${t.disable}</button></form>`
      const reset =
        o.status === 'disabled'
          ? ''
          : markup`<form class="inline" method="post" action="${base}/${o.id}/reset">${csrf}<button type="submit" class="secondary" aria-label="${t.reset}: ${o.email}">${t.reset}</button></form>`
      return markup`<tr data-operator="${o.email}"><td>${o.email}<br><span class="mono muted">${o.id}</span></td>
<td><form class="inline" method="post" action="${base}/${o.id}/role">${csrf}<label class="visually-hidden" for="role-${o.id}">${roleLabel}</label>
<select id="role-${o.id}" name="role">${roleOptions(o.role)}</select> <button type="submit" class="secondary" aria-label="${t.setRole}: ${o.email}">${t.setRole}</button></form></td>
<td>${t.statuses[o.status]}</td><td>${when(o.createdAt)}</td><td>${toggle} ${reset}</td></tr>`
    })
    return {
      title: ctx.t.navOperators,
      body: markup`<section aria-labelledby="h-create"><h2 id="h-create">${t.create}</h2>
<form class="filters" method="post" action="${base}">${csrf}
<div><label for="new-email">${t.email}</label><input id="new-email" name="email" type="email" required maxlength="320" autocomplete="off"></div>
<div><label for="new-role">${t.role}</label><select id="new-role" name="role">${roleOptions('viewer')}</select></div>
<div><button type="submit">${t.createButton}</button></div></form></section>
<table data-testid="operators"><caption>${t.list}</caption>
<thead><tr><th scope="col">${t.email}</th><th scope="col">${t.role}</th><th scope="col">${t.status}</th><th scope="col">${t.created}</th><th scope="col">${t.actions}</th></tr></thead>
<tbody>${rows}</tbody></table>`,
    }
  })

  consoleAction(app, base, 'operators', async (ctx, body) => {
    const t = TEXT[ctx.lang]
    const role = field(body, 'role', 16)
    const email = field(body, 'email', 320)
    if (!email || !isRole(role)) throw new ApiError('invalid_request', 'email and a known role are required')
    const created = await c.operators.create({ email, role })
    return {
      title: fill(t.created1, { email: created.operator.email }),
      body: secretShown(t, created.setupSecret, created.setupExpiresAt),
      audit: {
        action: 'operator.create',
        target: `operator:${created.operator.id}`,
        after: { email: created.operator.email, role, status: created.operator.status },
      },
    }
  })

  consoleAction(app, `${base}/:operatorId/disable`, 'operators', async (ctx) => {
    const t = TEXT[ctx.lang]
    const operatorId = idOf(ctx)
    const changed = found(await c.operators.disable(operatorId))
    const text = fill(t.disabled, { email: changed.after.email })
    return {
      title: text,
      body: done(text, t),
      audit: {
        action: 'operator.disable',
        target: `operator:${operatorId}`,
        before: { status: changed.before.status },
        after: { status: changed.after.status, sessionsEnded: true },
      },
    }
  })

  consoleAction(app, `${base}/:operatorId/enable`, 'operators', async (ctx) => {
    const t = TEXT[ctx.lang]
    const operatorId = idOf(ctx)
    const changed = found(await c.operators.enable(operatorId))
    const text = fill(t.enabled, { email: changed.after.email, status: t.statuses[changed.after.status] })
    return {
      title: text,
      body: done(text, t),
      audit: {
        action: 'operator.enable',
        target: `operator:${operatorId}`,
        before: { status: changed.before.status },
        after: { status: changed.after.status },
      },
    }
  })

  consoleAction(app, `${base}/:operatorId/role`, 'operators', async (ctx, body) => {
    const t = TEXT[ctx.lang]
    const operatorId = idOf(ctx)
    const role = field(body, 'role', 16)
    if (!isRole(role)) throw new ApiError('invalid_request', `role: one of ${ROLES.join(', ')}`)
    const changed = found(await c.operators.setRole(operatorId, role))
    const text = fill(t.roleSet, { email: changed.after.email, role })
    return {
      title: text,
      body: done(text, t),
      audit: {
        action: 'operator.role',
        target: `operator:${operatorId}`,
        before: { role: changed.before.role },
        after: { role: changed.after.role },
      },
    }
  })

  consoleAction(app, `${base}/:operatorId/reset`, 'operators', async (ctx) => {
    const t = TEXT[ctx.lang]
    const operatorId = idOf(ctx)
    const reset = found(await c.operators.reset(operatorId))
    return {
      title: fill(t.wasReset, { email: reset.after.email }),
      body: secretShown(t, reset.setupSecret, reset.setupExpiresAt),
      audit: {
        action: 'operator.reset',
        target: `operator:${operatorId}`,
        before: { status: reset.before.status },
        after: { status: reset.after.status, credentialsCleared: true, sessionsEnded: true },
      },
    }
  })
}
