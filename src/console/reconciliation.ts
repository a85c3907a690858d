import type { FastifyInstance } from 'fastify'
import type { ConsoleDeps } from './deps.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import type { Lang } from '../pages/i18n.js'
import type { ReconciliationReport } from '../reconcile/reconcile.js'
import { csrfField } from './csrf.js'
import { decimal, when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import { reconciliationSection } from './overview.js'
import { consoleAction, consolePage } from './page.js'
import type { Localized } from './strings.js'

/**
 * Reconciliation (permission `ledger.read`). The page shows the last run as stored (the schedule's
 * last result and each rail's brake readings) without starting one; "Run now" posts, runs the
 * reconciliation of src/reconcile/service.ts (it asks every rail and updates the gauges; a reading
 * only, it never counts towards the brake) and answers with its report: per rail the ledger's
 * figure and its outgoing part, the rail's figure and its incoming part, the delta computed from
 * those four, and a status; liabilities against assets per currency; and the orphans item matching
 * found. The run
 * is audited (`reconciliation.run`) once it has finished, as it waits on the rails.
 */
const TEXT: Localized<{
  last: string
  runNow: string
  runHint: string
  report: string
  checkedAt: string
  allOk: string
  notOk: string
  incomplete: string
  rails: string
  rail: string
  adapter: string
  ccy: string
  ledger: string
  reported: string
  outgoing: string
  incoming: string
  deltaHint: string
  delta: string
  status: string
  currencies: string
  liabilities: string
  assets: string
  coverage: string
  orphans: string
  noOrphans: string
  side: string
  reason: string
  ref: string
  txn: string
  amount: string
  at: string
  unmatched: string
  paused: string
  unknown: string
}> = {
  en: {
    last: 'Last run',
    runNow: 'Run now',
    runHint: 'Asks every rail for its balance and payments now; this may take a few seconds.',
    report: 'Reconciliation report',
    checkedAt: 'Checked at',
    allOk: 'Every rail matches the ledger and no orphan was found.',
    notOk: 'A rail shows a deficit or an orphan was found.',
    incomplete: 'Some rail could not be read: the report is incomplete.',
    rails: 'Rails',
    rail: 'Rail',
    adapter: 'Adapter',
    ccy: 'Currency',
    ledger: 'Ledger',
    reported: 'Reported by the rail',
    outgoing: 'Outgoing',
    incoming: 'Incoming',
    deltaHint:
      'Delta = (reported − incoming) − (ledger − outgoing). Outgoing: sends held but not yet posted, which the rail may have paid already. Incoming: what the rail holds that has arrived but is not final.',
    delta: 'Delta',
    status: 'Status',
    currencies: 'Liabilities and assets per currency',
    liabilities: 'Liabilities (customer balances)',
    assets: 'Assets (reported by rails)',
    coverage: 'Coverage',
    orphans: 'Orphans',
    noOrphans: 'No orphan found.',
    side: 'Side',
    reason: 'Reason',
    ref: 'Reference',
    txn: 'Transaction',
    amount: 'Amount',
    at: 'Time',
    unmatched: 'Not matched item by item',
    paused: 'Sends paused on',
    unknown: 'unknown',
  },
  vi: {
    last: 'Lần chạy gần nhất',
    runNow: 'Chạy ngay',
    runHint: 'Hỏi mọi kênh thanh toán số dư và các khoản thanh toán ngay bây giờ; có thể mất vài giây.',
    report: 'Báo cáo đối soát',
    checkedAt: 'Kiểm tra lúc',
    allOk: 'Mọi kênh khớp với sổ cái và không có khoản mồ côi.',
    notOk: 'Có kênh bị thiếu hụt hoặc có khoản mồ côi.',
    incomplete: 'Không đọc được một số kênh: báo cáo chưa đầy đủ.',
    rails: 'Kênh thanh toán',
    rail: 'Kênh',
    adapter: 'Bộ điều hợp',
    ccy: 'Loại tiền',
    ledger: 'Sổ cái',
    reported: 'Kênh báo cáo',
    outgoing: 'Đang chuyển đi',
    incoming: 'Đang về',
    deltaHint:
      'Chênh lệch = (kênh báo cáo − đang về) − (sổ cái − đang chuyển đi). Đang chuyển đi: các khoản chuyển đang giữ nhưng chưa ghi sổ, mà kênh có thể đã trả. Đang về: phần kênh đang giữ đã đến nhưng chưa chắc chắn.',
    delta: 'Chênh lệch',
    status: 'Trạng thái',
    currencies: 'Nợ phải trả và tài sản theo loại tiền',
    liabilities: 'Nợ phải trả (số dư khách hàng)',
    assets: 'Tài sản (kênh báo cáo)',
    coverage: 'Mức bao phủ',
    orphans: 'Khoản mồ côi',
    noOrphans: 'Không có khoản mồ côi.',
    side: 'Phía',
    reason: 'Lý do',
    ref: 'Tham chiếu',
    txn: 'Giao dịch',
    amount: 'Số tiền',
    at: 'Thời điểm',
    unmatched: 'Chưa đối chiếu từng khoản',
    paused: 'Tạm dừng chuyển trên',
    unknown: 'không rõ',
  },
}

export function reconciliationPages(app: FastifyInstance, c: ConsoleDeps): void {
  const runForm = (csrfToken: string | undefined, t: (typeof TEXT)['en']) =>
    markup`<form method="post" action="${CONSOLE_BASE}/reconciliation/run">${csrfToken ? csrfField(csrfToken) : ''}
<p class="hint" id="run-hint">${t.runHint}</p><button type="submit" aria-describedby="run-hint">${t.runNow}</button></form>`

  consolePage(app, `${CONSOLE_BASE}/reconciliation`, 'reconciliation', async (ctx) => {
    const t = TEXT[ctx.lang]
    return {
      title: ctx.t.navReconciliation,
      body: markup`<h2>${t.last}</h2>${await reconciliationSection(c, ctx.lang, false)}${runForm(ctx.operator.csrfToken, t)}`,
    }
  })

  consoleAction(app, `${CONSOLE_BASE}/reconciliation/run`, 'reconciliation', async (ctx) => {
    const t = TEXT[ctx.lang]
    const report = await c.reconcile()
    return {
      title: t.report,
      body: markup`${reportHtml(report, ctx.lang)}${runForm(ctx.operator.csrfToken, t)}`,
      audit: {
        target: 'reconciliation',
        after: {
          ok: report.ok,
          incomplete: report.incomplete,
          orphans: report.orphans.length,
          rails: report.rails.map((r) => ({ rail: r.rail, ccy: r.ccy, status: r.status, delta: r.delta })),
        },
      },
    }
  })
}

/**
 * What the rail holds on its way in, as the delta counted it: a rail that was read but reports no
 * incoming figure counts none; an unread rail's is unknown.
 */
const incomingOf = (r: ReconciliationReport['rails'][number]) =>
  r.incoming ?? (r.reported === null ? null : '0')

/** The report of one run, as tables. */
export function reportHtml(report: ReconciliationReport, lang: Lang): SafeHtml {
  const t = TEXT[lang]
  const amount = (text: string | null) => (text === null ? t.unknown : decimal(text, lang))
  const summary = report.incomplete ? t.incomplete : report.ok ? t.allOk : t.notOk
  const tone = report.ok && !report.incomplete ? 'good' : report.ok ? 'warn' : 'bad'
  return markup`<p class="notice ${tone}" role="status" data-testid="reconciliation-summary">${t.checkedAt} ${when(report.checkedAt)}. ${summary}</p>
<p class="hint" id="delta-hint">${t.deltaHint}</p>
<table data-testid="reconciliation-rails" aria-describedby="delta-hint"><caption>${t.rails}</caption>
<thead><tr><th scope="col">${t.rail}</th><th scope="col">${t.adapter}</th><th scope="col">${t.ccy}</th><th scope="col" class="num">${t.ledger}</th><th scope="col" class="num">${t.outgoing}</th><th scope="col" class="num">${t.reported}</th><th scope="col" class="num">${t.incoming}</th><th scope="col" class="num">${t.delta}</th><th scope="col">${t.status}</th></tr></thead>
<tbody>${report.rails.map(
    (
      r,
    ) => markup`<tr><td>${r.rail}</td><td>${r.adapter}</td><td>${r.ccy}</td><td class="num">${amount(r.ledger)}</td>
<td class="num">${amount(r.outgoing)}</td><td class="num">${amount(r.reported)}</td>
<td class="num">${amount(incomingOf(r))}</td><td class="num">${amount(r.delta)}</td>
<td><strong>${r.status}</strong>${r.note ? markup` <span class="muted">${r.note}</span>` : ''}</td></tr>`,
  )}</tbody></table>
<table data-testid="reconciliation-currencies"><caption>${t.currencies}</caption>
<thead><tr><th scope="col">${t.ccy}</th><th scope="col" class="num">${t.liabilities}</th><th scope="col" class="num">${t.assets}</th><th scope="col" class="num">${t.coverage}</th></tr></thead>
<tbody>${report.currencies.map(
    (p) =>
      markup`<tr><td>${p.ccy}</td><td class="num">${amount(p.liabilities)}</td><td class="num">${amount(p.assets)}</td><td class="num">${amount(p.coverage)}</td></tr>`,
  )}</tbody></table>
<h2 id="h-orphans">${t.orphans}</h2>
${
  report.orphans.length === 0
    ? markup`<p class="muted" data-testid="no-orphans">${t.noOrphans}</p>`
    : markup`<table aria-labelledby="h-orphans" data-testid="orphans"><thead><tr><th scope="col">${t.rail}</th><th scope="col">${t.side}</th><th scope="col">${t.reason}</th><th scope="col">${t.ref}</th><th scope="col">${t.txn}</th><th scope="col" class="num">${t.amount}</th><th scope="col">${t.at}</th></tr></thead>
<tbody>${report.orphans.map(
        (o) =>
          markup`<tr><td>${o.rail}</td><td>${o.side}</td><td>${o.reason}</td><td class="mono">${o.ref ?? '—'}</td><td class="mono">${o.txnId ?? '—'}</td><td class="num">${amount(o.amount)} ${o.ccy}</td><td>${when(o.at)}</td></tr>`,
      )}</tbody></table>`
}
${
  report.unmatched.length === 0
    ? ''
    : markup`<h2>${t.unmatched}</h2><ul>${report.unmatched.map((u) => markup`<li>${u.rail}: ${u.note}</li>`)}</ul>`
}
${report.pausedRails?.length ? markup`<p class="notice bad">${t.paused}: ${report.pausedRails.join(', ')}</p>` : ''}`
}
