import { sql } from '../db/sql.js'
import type { FastifyInstance } from 'fastify'
import type { ConsoleDeps } from './deps.js'
import { checkBooks } from '../ledger/ledger.js'
import { completedVolumesByDay } from '../transactions/reads-reports.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import type { Lang } from '../pages/i18n.js'
import { ATTENTION_SECTIONS } from './attention.js'
import { volumeChart, type DayVolume } from './chart.js'
import { when } from './format.js'
import { CONSOLE_BASE, mayOpen } from './nav.js'
import { consolePage } from './page.js'
import type { Localized } from './strings.js'
import { roleAllows } from '../operators/permissions.js'
import { KEYS_TEXT, keysSection } from './keys.js'

/**
 * The overview: completed volume per day and currency, what needs attention, the books check and
 * the last reconciliation. Everything is read, nothing is changed; the reconciliation shown is the
 * one last run (by the schedule or `svcpay reconcile`), not a new one.
 */
const DAYS = 14
const ATTENTION_ROWS = 10

const TEXT: Localized<{
  volumes: string
  noVolume: string
  attention: string
  more: string
  txn: string
  account: string
  state: string
  since: string
  why: string
  books: string
  booksOk: string
  booksBad: string
  unbalanced: string
  wallets: string
  holds: string
  totals: string
  reconciliation: string
  neverRun: string
  lastRun: string
  lastOk: string
  lastNotOk: string
  rail: string
  deficitReadings: string
  orphans: string
  paused: string
  yes: string
  no: string
  details: string
}> = {
  en: {
    volumes: 'Completed volume, last 14 days',
    noVolume: 'No transaction completed in the last 14 days.',
    attention: 'Needs attention',
    more: '{n} in all; the oldest are shown.',
    txn: 'Transaction',
    account: 'Account',
    state: 'State',
    since: 'Since',
    why: 'Why',
    books: 'Books check',
    booksOk: 'The books balance: every entry sums to zero and every wallet matches its postings and holds.',
    booksBad: 'The books do not balance. Investigate before moving money.',
    unbalanced: 'Unbalanced entries',
    wallets: 'Wallets not matching their postings',
    holds: 'Wallets not matching their holds',
    totals: 'Sum of all balances per currency',
    reconciliation: 'Reconciliation',
    neverRun: 'No reconciliation has run on a schedule yet.',
    lastRun: 'Last run',
    lastOk: 'Every rail matched the ledger.',
    lastNotOk: 'The last run found a difference or could not finish.',
    rail: 'Rail',
    deficitReadings: 'Deficit readings in a row',
    orphans: 'Orphans',
    paused: 'Sends paused',
    yes: 'yes',
    no: 'no',
    details: 'Details',
  },
  vi: {
    volumes: 'Khối lượng hoàn tất, 14 ngày qua',
    noVolume: 'Không có giao dịch nào hoàn tất trong 14 ngày qua.',
    attention: 'Cần chú ý',
    more: 'Tổng cộng {n}; hiển thị những mục cũ nhất.',
    txn: 'Giao dịch',
    account: 'Tài khoản',
    state: 'Trạng thái',
    since: 'Từ lúc',
    why: 'Lý do',
    books: 'Kiểm tra sổ sách',
    booksOk: 'Sổ sách cân bằng: mọi bút toán có tổng bằng không và mọi ví khớp với bút toán và khoản giữ.',
    booksBad: 'Sổ sách không cân bằng. Hãy kiểm tra trước khi chuyển tiền.',
    unbalanced: 'Bút toán không cân bằng',
    wallets: 'Ví không khớp với bút toán',
    holds: 'Ví không khớp với khoản giữ',
    totals: 'Tổng số dư theo loại tiền',
    reconciliation: 'Đối soát',
    neverRun: 'Chưa có lần đối soát theo lịch nào.',
    lastRun: 'Lần chạy gần nhất',
    lastOk: 'Mọi kênh khớp với sổ cái.',
    lastNotOk: 'Lần chạy gần nhất phát hiện chênh lệch hoặc không hoàn tất.',
    rail: 'Kênh',
    deficitReadings: 'Số lần thiếu hụt liên tiếp',
    orphans: 'Mục không khớp',
    paused: 'Tạm dừng gửi',
    yes: 'có',
    no: 'không',
    details: 'Chi tiết',
  },
}

export function overviewPage(app: FastifyInstance, c: ConsoleDeps): void {
  consolePage(app, CONSOLE_BASE, 'overview', async (ctx) => {
    const now = Date.now()
    const t = TEXT[ctx.lang]
    const [volumes, attention, books, reconciliation] = await Promise.all([
      volumesSection(c, now, ctx.lang),
      attentionSection(c, now, ctx.lang),
      checkBooks(c.db),
      reconciliationSection(c, ctx.lang, mayOpen(ctx.operator.role, `${CONSOLE_BASE}/reconciliation`)),
    ])
    // The keys block (issue 32), for the roles that may read it.
    const keys = roleAllows(ctx.operator.role, 'keys.read') ? await keysSection(c, ctx.lang) : undefined
    const totals = Object.entries(books.totals).map(
      ([ccy, total]) => markup`<tr><td>${ccy}</td><td class="num">${total}</td></tr>`,
    )
    return {
      title: ctx.t.navOverview,
      body: markup`<section aria-labelledby="h-volumes"><h2 id="h-volumes">${t.volumes}</h2>${volumes}</section>
<section aria-labelledby="h-attention"><h2 id="h-attention">${t.attention}</h2>${attention}</section>
<section aria-labelledby="h-books"><h2 id="h-books">${t.books}</h2>
<p class="notice ${books.ok ? 'good' : 'bad'}" data-testid="books">${books.ok ? t.booksOk : t.booksBad}</p>
<dl class="facts"><dt>${t.unbalanced}</dt><dd>${books.unbalancedEntries}</dd><dt>${t.wallets}</dt><dd>${books.walletMismatches}</dd>
<dt>${t.holds}</dt><dd>${books.holdMismatches}</dd></dl>
<table><caption>${t.totals}</caption><tbody>${totals}</tbody></table></section>
<section aria-labelledby="h-reconciliation"><h2 id="h-reconciliation">${t.reconciliation}</h2>${reconciliation}</section>
${keys ? markup`<section aria-labelledby="h-keys"><h2 id="h-keys">${KEYS_TEXT[ctx.lang].title}</h2>${keys}</section>` : markup``}`,
    }
  })
}

/** Completed transactions per UTC day of creation and source currency, over the last DAYS days. */
async function volumesSection(c: ConsoleDeps, now: number, lang: Lang): Promise<SafeHtml> {
  const today = Math.floor(now / 86_400_000)
  const first = today - DAYS + 1
  const rows = await completedVolumesByDay(c.db, first * 86_400_000)
  if (rows.length === 0) return markup`<p class="muted">${TEXT[lang].noVolume}</p>`
  const byCcy = new Map<string, Map<number, DayVolume>>()
  for (const r of rows) {
    const series = byCcy.get(r.ccy) ?? new Map<number, DayVolume>()
    series.set(Number(r.day), { day: Number(r.day), count: Number(r.n), minor: BigInt(r.total) })
    byCcy.set(r.ccy, series)
  }
  const days = Array.from({ length: DAYS }, (_, i) => first + i)
  return markup`${[...byCcy].map(([ccy, series]) => volumeChart(ccy, days, series, lang))}`
}

async function attentionSection(c: ConsoleDeps, now: number, lang: Lang): Promise<SafeHtml> {
  const t = TEXT[lang]
  const parts = await Promise.all(
    ATTENTION_SECTIONS.map(async (section) => {
      const { total, rows } = await section.read(c, now, ATTENTION_ROWS)
      const heading = section.heading[lang]
      if (rows.length === 0)
        return markup`<h3>${heading}</h3><p class="muted" data-testid="attention-${section.key}">${section.none[lang]}</p>`
      const more =
        total > rows.length ? markup`<p class="muted">${t.more.replace('{n}', String(total))}</p>` : ''
      const lines = rows.map(
        (
          r,
        ) => markup`<tr><td>${r.txnId ? markup`<a class="mono" href="${CONSOLE_BASE}/transactions/${r.txnId}">${r.txnId}</a>` : r.ref ? markup`<a class="mono" href="${r.ref.href}">${r.ref.id}</a>` : ''}</td>
<td>${r.accountId ? markup`<a class="mono" href="${CONSOLE_BASE}/accounts/${r.accountId}">${r.accountId}</a>` : ''}</td><td>${r.state}</td><td>${when(r.since)}</td><td>${typeof r.why === 'string' ? r.why : r.why[lang]}</td></tr>`,
      )
      return markup`<h3>${heading}</h3><table data-testid="attention-${section.key}"><caption class="visually-hidden">${heading}</caption>
<thead><tr><th scope="col">${t.txn}</th><th scope="col">${t.account}</th><th scope="col">${t.state}</th><th scope="col">${t.since}</th><th scope="col">${t.why}</th></tr></thead>
<tbody>${lines}</tbody></table>${more}`
    }),
  )
  return markup`${parts}`
}

/** The last scheduled run and each rail's brake readings (src/reconcile): stored, not recomputed. */
export async function reconciliationSection(
  c: ConsoleDeps,
  lang: Lang,
  linkDetails: boolean,
): Promise<SafeHtml> {
  const t = TEXT[lang]
  const [{ rows: runs }, { rows: rails }] = await Promise.all([
    c.db.query<{ last_run_at: string | null; last_ok: boolean | null }>(
      sql`SELECT last_run_at, last_ok FROM reconcile_schedule WHERE id = 1`,
    ),
    c.db.query<{ rail: string; deficit_readings: number; paused_at: string | null; orphans: number }>(
      sql`SELECT rail, deficit_readings, paused_at, orphans FROM reconcile_brake ORDER BY rail`,
    ),
  ])
  const run = runs[0]
  const status =
    !run || run.last_run_at === null
      ? markup`<p class="muted">${t.neverRun}</p>`
      : markup`<p class="notice ${run.last_ok ? 'good' : 'warn'}">${t.lastRun}: ${when(Number(run.last_run_at))}. ${run.last_ok ? t.lastOk : t.lastNotOk}</p>`
  const table =
    rails.length === 0
      ? ''
      : markup`<table><caption class="visually-hidden">${t.reconciliation}</caption>
<thead><tr><th scope="col">${t.rail}</th><th scope="col" class="num">${t.deficitReadings}</th><th scope="col" class="num">${t.orphans}</th><th scope="col">${t.paused}</th></tr></thead>
<tbody>${rails.map((r) => markup`<tr><td>${r.rail}</td><td class="num">${r.deficit_readings}</td><td class="num">${r.orphans}</td><td>${r.paused_at === null ? t.no : `${t.yes} (${when(Number(r.paused_at))})`}</td></tr>`)}</tbody></table>`
  const link = linkDetails ? markup`<p><a href="${CONSOLE_BASE}/reconciliation">${t.details}</a></p>` : ''
  return markup`${status}${table}${link}`
}
