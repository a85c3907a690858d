import type { FastifyInstance } from 'fastify'
import type { ConsoleDeps } from './deps.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import { ApiError } from '../shared/errors.js'
import { LIST_METHODS, listTransactions, type ListQuery } from '../transactions/list.js'
import { TXN_STATES } from '../shared/txn-states.js'
import { txnsByReference } from '../transactions/reads-reports.js'
import type { Txn } from '../transactions/txn.js'
import { CONSOLE_BASE } from './nav.js'
import { consolePage, type ConsoleQuery } from './page.js'
import type { Localized } from './strings.js'
import { txnTable } from './txn-table.js'

/**
 * Transactions of every account (or one): the API's list and its filters (src/transactions/list.ts,
 * the same parameters and checks as GET /api/v2/transaction), and a look-up by reference: a txnId,
 * an extRefId, or a rail's reference (payment hash, txid, TRON hash, bank reference, address).
 */
const TIMES = ['1d', '7d', '30d', '3m', '6m', '1y', 'other']
const PAGE_SIZE = '25'
/** Reference fields of the rails, in a transaction's details (src/transactions/*, src/rails). */
export const REFERENCE_KEYS = [
  'paymentHash',
  'txid',
  'txHash',
  'bankRef',
  'address',
  'payoutTxnId',
  'returnTxnId',
]
/** Transactions a search by reference lists at most. */
const REFERENCE_RESULTS_MAX = 50

const TEXT: Localized<{
  filters: string
  reference: string
  referenceHint: string
  account: string
  time: string
  from: string
  to: string
  states: string
  srcMethod: string
  destMethod: string
  any: string
  apply: string
  results: string
  total: string
  previous: string
  next: string
  pages: string
  times: Record<string, string>
}> = {
  en: {
    filters: 'Filters',
    reference: 'Reference',
    referenceHint: 'A txnId, an extRefId, or a payment hash, txid, TRON hash, bank reference or address.',
    account: 'Account id',
    time: 'Created in',
    from: 'From (ISO 8601)',
    to: 'To (ISO 8601)',
    states: 'States',
    srcMethod: 'Source method',
    destMethod: 'Destination method',
    any: 'any',
    apply: 'Search',
    results: 'Transactions found',
    total: '{n} transactions match.',
    previous: 'Previous page',
    next: 'Next page',
    pages: 'Pages',
    times: {
      '1d': 'the last day',
      '7d': 'the last 7 days',
      '30d': 'the last 30 days',
      '3m': 'the last 3 months',
      '6m': 'the last 6 months',
      '1y': 'the last year',
      other: 'between the dates below',
    },
  },
  vi: {
    filters: 'Bộ lọc',
    reference: 'Mã tham chiếu',
    referenceHint:
      'txnId, extRefId, hoặc mã băm thanh toán, txid, mã băm TRON, mã tham chiếu ngân hàng hay địa chỉ.',
    account: 'Mã tài khoản',
    time: 'Tạo trong',
    from: 'Từ (ISO 8601)',
    to: 'Đến (ISO 8601)',
    states: 'Trạng thái',
    srcMethod: 'Phương thức nguồn',
    destMethod: 'Phương thức đích',
    any: 'bất kỳ',
    apply: 'Tìm',
    results: 'Giao dịch tìm thấy',
    total: 'Có {n} giao dịch khớp.',
    previous: 'Trang trước',
    next: 'Trang sau',
    pages: 'Trang',
    times: {
      '1d': '1 ngày qua',
      '7d': '7 ngày qua',
      '30d': '30 ngày qua',
      '3m': '3 tháng qua',
      '6m': '6 tháng qua',
      '1y': '1 năm qua',
      other: 'giữa các ngày bên dưới',
    },
  },
}

/** One text value of the query (the last, when repeated), bounded. */
function one(query: ConsoleQuery, name: string, max = 140): string {
  const v = query[name]
  const text = Array.isArray(v) ? v[v.length - 1] : v
  return typeof text === 'string' ? text.trim().slice(0, max) : ''
}

/** A list value: repeated checkboxes (states=a&states=b) or the API's comma-separated form. */
function many(query: ConsoleQuery, name: string): string[] {
  const v = query[name]
  const all = (Array.isArray(v) ? v : v === undefined ? [] : [v]).flatMap((x) => String(x).split(','))
  return all
    .map((x) => x.trim())
    .filter(Boolean)
    .slice(0, 20)
}

export function transactionListPage(app: FastifyInstance, c: ConsoleDeps): void {
  consolePage(app, `${CONSOLE_BASE}/transactions`, 'transactions', async (ctx) => {
    const t = TEXT[ctx.lang]
    const { query } = ctx
    const reference = one(query, 'q', 200)
    const accountId = one(query, 'accountId', 64)
    const states = many(query, 'txnStatuses')
    const form = {
      time: one(query, 'time', 8) || '30d',
      startTime: one(query, 'startTime', 40),
      endTime: one(query, 'endTime', 40),
      srcMethods: one(query, 'srcMethods', 20),
      destMethods: one(query, 'destMethods', 20),
      page: one(query, 'page', 8),
    }
    let found: SafeHtml
    let status = 200
    try {
      found = reference
        ? txnTable(await byReference(c, reference), ctx.lang, { caption: t.results, withAccount: true })
        : await listed(
            c,
            accountId || null,
            { ...form, txnStatuses: states.join(','), limit: PAGE_SIZE },
            ctx.lang,
            query,
          )
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 400) throw err
      status = 400
      const detail = err.details?.map((d) => `${d.field}: ${d.issue}`).join('; ')
      found = markup`<p class="notice bad" role="alert">${err.message}${detail ? ` (${detail})` : ''}</p>`
    }
    const select = (name: string, label: string, value: string) =>
      markup`<div><label for="${name}">${label}</label><select id="${name}" name="${name}">
<option value="">${t.any}</option>${LIST_METHODS.map((m) => markup`<option value="${m}"${m === value ? markup` selected` : ''}>${m}</option>`)}</select></div>`
    return {
      title: ctx.t.navTransactions,
      status,
      body: markup`<form class="filters" method="get" action="${CONSOLE_BASE}/transactions" role="search" aria-label="${t.filters}">
<div><label for="q">${t.reference}</label><input id="q" name="q" type="search" value="${reference}" maxlength="200" aria-describedby="q-hint">
<p class="hint" id="q-hint">${t.referenceHint}</p></div>
<div><label for="accountId">${t.account}</label><input id="accountId" name="accountId" value="${accountId}" maxlength="64"></div>
<div><label for="time">${t.time}</label><select id="time" name="time">${TIMES.map((x) => markup`<option value="${x}"${x === form.time ? markup` selected` : ''}>${t.times[x]}</option>`)}</select></div>
<div><label for="startTime">${t.from}</label><input id="startTime" name="startTime" value="${form.startTime}" maxlength="40"></div>
<div><label for="endTime">${t.to}</label><input id="endTime" name="endTime" value="${form.endTime}" maxlength="40"></div>
${select('srcMethods', t.srcMethod, form.srcMethods)}${select('destMethods', t.destMethod, form.destMethods)}
<fieldset class="checks"><legend>${t.states}</legend>${TXN_STATES.map(
        (s) =>
          markup`<span class="check"><input type="checkbox" id="st-${s}" name="txnStatuses" value="${s}"${states.includes(s) ? markup` checked` : ''}><label for="st-${s}">${s}</label></span>`,
      )}</fieldset>
<div><button type="submit">${t.apply}</button></div></form>
${found}`,
    }
  })
}

async function listed(
  c: ConsoleDeps,
  accountId: string | null,
  q: ListQuery,
  lang: 'en' | 'vi',
  raw: ConsoleQuery,
) {
  const t = TEXT[lang]
  const { rows, pagination } = await listTransactions(c.db, accountId, q, Date.now())
  const link = (page: number) => {
    const params = new URLSearchParams()
    for (const [k, v] of Object.entries(raw))
      if (k !== 'page' && v !== undefined) for (const x of [v].flat()) params.append(k, String(x))
    params.set('page', String(page))
    return `${CONSOLE_BASE}/transactions?${params.toString()}`
  }
  const prev =
    pagination.page > 1 ? markup`<a href="${link(pagination.page - 1)}" rel="prev">${t.previous}</a>` : ''
  const next = pagination.hasMore
    ? markup`<a href="${link(pagination.page + 1)}" rel="next">${t.next}</a>`
    : ''
  return markup`<p role="status" data-testid="total">${t.total.replace('{n}', String(pagination.total))}</p>
${txnTable(rows, lang, { caption: t.results, withAccount: true })}
${prev || next ? markup`<nav aria-label="${t.pages}"><p>${prev} ${next}</p></nav>` : ''}`
}

/**
 * Transactions whose id, extRefId or rail reference is this text. The id, the extRefId and the
 * rail_ref column are indexed; the references kept in the details are read by a scan, which the
 * console can afford for an operator's search.
 */
function byReference(c: ConsoleDeps, reference: string): Promise<Txn[]> {
  return txnsByReference(c.db, reference, REFERENCE_KEYS, REFERENCE_RESULTS_MAX)
}
