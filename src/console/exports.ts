import type { FastifyInstance } from 'fastify'
import { markup } from '../pages/escape.js'
import { CONSOLE_BASE } from './nav.js'
import { consolePage } from './page.js'
import type { Localized } from './strings.js'

/**
 * The exports for accountants (permission `exports.read`): two forms that ask the export routes of
 * src/exports/routes.ts for a CSV of transactions or of ledger postings, of one account or of the
 * whole service over a period. The browser downloads the file; each export is audited there.
 */
const TEXT: Localized<{
  intro: string
  transactions: string
  ledger: string
  from: string
  to: string
  toHint: string
  account: string
  accountHint: string
  download: string
}> = {
  en: {
    intro:
      'CSV files for the books: exact amounts, one line per transaction or per ledger posting, streamed however many rows. Each export is recorded in the audit trail.',
    transactions: 'Transactions',
    ledger: 'Ledger postings',
    from: 'From (UTC, inclusive)',
    to: 'To (UTC, exclusive)',
    toHint: 'The day after the last one to include.',
    account: 'Account id (optional)',
    accountHint: 'Leave empty for the whole service.',
    download: 'Download CSV',
  },
  vi: {
    intro:
      'Tệp CSV cho sổ sách: số tiền chính xác, mỗi dòng một giao dịch hoặc một bút toán, truyền dần dù nhiều dòng đến đâu. Mỗi lần xuất được ghi vào nhật ký kiểm toán.',
    transactions: 'Giao dịch',
    ledger: 'Bút toán sổ cái',
    from: 'Từ (UTC, gồm)',
    to: 'Đến (UTC, không gồm)',
    toHint: 'Ngày sau ngày cuối cùng cần lấy.',
    account: 'Mã tài khoản (không bắt buộc)',
    accountHint: 'Để trống để lấy toàn bộ dịch vụ.',
    download: 'Tải CSV',
  },
}

export function exportsPage(app: FastifyInstance): void {
  consolePage(app, `${CONSOLE_BASE}/exports`, 'exports', async (ctx) => {
    const t = TEXT[ctx.lang]
    // This month so far: from its first day to tomorrow (exclusive), in UTC.
    const today = new Date().toISOString().slice(0, 10)
    const monthStart = `${today.slice(0, 8)}01`
    const tomorrow = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10)
    const form = (kind: 'transactions' | 'ledger-entries', title: string) =>
      markup`<section aria-labelledby="h-${kind}"><h2 id="h-${kind}">${title}</h2>
<form class="filters" method="get" action="/admin/exports/${kind}.csv" data-testid="export-${kind}">
<div><label for="${kind}-from">${t.from}</label><input id="${kind}-from" name="from" type="date" required value="${monthStart}"></div>
<div><label for="${kind}-to">${t.to}</label><input id="${kind}-to" name="to" type="date" required value="${tomorrow}" aria-describedby="${kind}-to-hint"><p class="hint" id="${kind}-to-hint">${t.toHint}</p></div>
<div><label for="${kind}-account">${t.account}</label><input id="${kind}-account" name="accountId" maxlength="64" aria-describedby="${kind}-account-hint"><p class="hint" id="${kind}-account-hint">${t.accountHint}</p></div>
<div><button type="submit">${t.download}</button></div></form></section>`
    return {
      title: ctx.t.navExports,
      body: markup`<p>${t.intro}</p>${form('transactions', t.transactions)}${form('ledger-entries', t.ledger)}`,
    }
  })
}
