import type { FastifyInstance } from 'fastify'
import type { ConsoleDeps } from './deps.js'
import { listAudit, type AuditFilter } from '../operators/audit.js'
import { toMs } from '../admin/audit-routes.js'
import { markup } from '../pages/escape.js'
import { ApiError } from '../shared/errors.js'
import { when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import { consolePage } from './page.js'
import type { Localized } from './strings.js'

/**
 * The audit trail (permission `audit.read`): the filters of GET /admin/audit, newest first, fifty
 * rows a page with a link to the next, and a link that downloads the same selection as CSV
 * (GET /admin/audit.csv). Before and after are shown as the JSON the trail keeps.
 */
const PAGE_SIZE = 50
const FILTERS = ['operator', 'action', 'target', 'from', 'to'] as const

const TEXT: Localized<{
  filters: string
  operator: string
  operatorHint: string
  action: string
  target: string
  from: string
  to: string
  timeHint: string
  apply: string
  csv: string
  rows: string
  none: string
  at: string
  change: string
  client: string
  next: string
}> = {
  en: {
    filters: 'Filter the audit trail',
    operator: 'Operator',
    operatorHint: 'Id or email.',
    action: 'Action',
    target: 'Target',
    from: 'From',
    to: 'To (exclusive)',
    timeHint: 'ISO 8601 date or time, UTC.',
    apply: 'Apply',
    csv: 'Download these rows as CSV',
    rows: 'Audit rows, newest first',
    none: 'No audit row matches.',
    at: 'Time',
    change: 'Before → after',
    client: 'Client address, request id',
    next: 'Older rows',
  },
  vi: {
    filters: 'Lọc nhật ký kiểm toán',
    operator: 'Người vận hành',
    operatorHint: 'Mã hoặc email.',
    action: 'Hành động',
    target: 'Đối tượng',
    from: 'Từ',
    to: 'Đến (không gồm)',
    timeHint: 'Ngày hoặc giờ ISO 8601, UTC.',
    apply: 'Áp dụng',
    csv: 'Tải các dòng này dạng CSV',
    rows: 'Các dòng kiểm toán, mới nhất trước',
    none: 'Không có dòng nào khớp.',
    at: 'Thời điểm',
    change: 'Trước → sau',
    client: 'Địa chỉ máy khách, mã yêu cầu',
    next: 'Các dòng cũ hơn',
  },
}

const json = (v: unknown) => (v === null || v === undefined ? '—' : JSON.stringify(v))

export function auditLogPage(app: FastifyInstance, c: ConsoleDeps): void {
  consolePage(app, `${CONSOLE_BASE}/audit`, 'audit', async (ctx) => {
    const t = TEXT[ctx.lang]
    const { query } = ctx
    const given: Partial<Record<(typeof FILTERS)[number], string>> = {}
    for (const name of FILTERS) {
      const v = query[name]
      if (typeof v === 'string' && v.trim() !== '' && v.length <= 320) given[name] = v.trim()
    }
    const filter: AuditFilter = {
      ...(given.operator ? { operator: given.operator.toLowerCase() } : {}),
      ...(given.action ? { action: given.action } : {}),
      ...(given.target ? { target: given.target } : {}),
      ...(given.from ? { fromMs: toMs(given.from, 'from') } : {}),
      ...(given.to ? { toMs: toMs(given.to, 'to') } : {}),
    }
    const cursor = typeof query.cursor === 'string' && query.cursor.length <= 64 ? query.cursor : undefined
    let page
    try {
      page = await listAudit(c.db, filter, { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) })
    } catch (err) {
      if (err instanceof RangeError)
        throw new ApiError('invalid_request', 'The cursor is not one this page gave')
      throw err
    }
    const params = new URLSearchParams(given as Record<string, string>)
    const input = (name: (typeof FILTERS)[number], label: string, hint?: string) =>
      markup`<div><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" value="${given[name] ?? ''}" maxlength="320"${hint ? markup` aria-describedby="f-${name}-hint"` : ''}>${hint ? markup`<p class="hint" id="f-${name}-hint">${hint}</p>` : ''}</div>`
    const rows = page.data.map(
      (
        r,
      ) => markup`<tr><td>${when(r.at)}</td><td>${r.operatorEmail}<br><span class="mono muted">${r.operatorId}</span></td>
<td class="mono">${r.action}</td><td class="mono">${r.target ?? '—'}</td>
<td class="mono">${json(r.before)} → ${json(r.after)}</td><td class="mono">${r.clientIp ?? '—'}<br>${r.requestId ?? ''}</td></tr>`,
    )
    const next = page.nextCursor
      ? markup`<p><a href="${CONSOLE_BASE}/audit?${new URLSearchParams({ ...given, cursor: page.nextCursor }).toString()}">${t.next}</a></p>`
      : ''
    return {
      title: ctx.t.navAudit,
      body: markup`<form class="filters" method="get" action="${CONSOLE_BASE}/audit" aria-label="${t.filters}">
${input('operator', t.operator, t.operatorHint)}${input('action', t.action)}${input('target', t.target)}
${input('from', t.from, t.timeHint)}${input('to', t.to, t.timeHint)}
<div><button type="submit">${t.apply}</button></div></form>
<p><a href="/admin/audit.csv${params.size ? `?${params.toString()}` : ''}" data-testid="audit-csv" download>${t.csv}</a></p>
${
  page.data.length === 0
    ? markup`<p class="muted" role="status">${t.none}</p>`
    : markup`<table data-testid="audit"><caption>${t.rows}</caption>
<thead><tr><th scope="col">${t.at}</th><th scope="col">${t.operator}</th><th scope="col">${t.action}</th><th scope="col">${t.target}</th><th scope="col">${t.change}</th><th scope="col">${t.client}</th></tr></thead>
<tbody>${rows}</tbody></table>`
}${next}`,
    }
  })
}
