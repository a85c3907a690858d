import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { paramsOf } from '../http/request-fields.js'
import { roleAllows } from '../operators/permissions.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import type { Hit } from '../screening/repository.js'
import { ApiError } from '../shared/errors.js'
import type { AttentionSection } from './attention.js'
import { csrfField } from './csrf.js'
import type { ConsoleDeps } from './deps.js'
import { when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import { consoleAction, consolePage, type ConsoleContext } from './page.js'
import type { Localized } from './strings.js'

/**
 * Screening hits (src/screening, docs/screening.md): the deny lists loaded, and every hit — who,
 * what destination, which list and entry, when, and what came of it — with a form to mark a hit
 * reviewed and, for a held deposit, to release its credit. Each form posts to an action that calls
 * the screening service, the same as POST /admin/screening/hits/:hitId/review and /release, inside
 * the guard's transaction that ends with its audit row. Lists are loaded with the CLI or the API.
 */
const PAGE_SIZE = 200
export const SCREENING_PAGE = `${CONSOLE_BASE}/screening`

const TEXT: Localized<{
  lists: string
  noLists: string
  list: string
  entries: string
  loaded: string
  by: string
  hits: string
  noHits: string
  at: string
  account: string
  txn: string
  kind: string
  stage: string
  destination: string
  entry: string
  outcome: string
  reviewed: string
  review: string
  release: string
  reviewedNotice: string
  releasedNotice: string
  back: string
  hint: string
  outcomes: Record<Hit['outcome'], string>
}> = {
  en: {
    lists: 'Deny lists',
    noLists: 'No list is loaded: load one with `svcpay screening load`.',
    list: 'List',
    entries: 'Entries',
    loaded: 'Loaded',
    by: 'By',
    hits: 'Hits',
    noHits: 'No destination or deposit has matched a list.',
    at: 'When',
    account: 'Account',
    txn: 'Transaction',
    kind: 'Kind',
    stage: 'Stage',
    destination: 'Destination',
    entry: 'List entry',
    outcome: 'Outcome',
    reviewed: 'Reviewed',
    review: 'Mark reviewed',
    release: 'Release the deposit',
    reviewedNotice: 'Hit {hit} is marked reviewed.',
    releasedNotice: 'Hit {hit}: the deposit is released and will be credited.',
    back: 'Back to the screening hits',
    hint: 'A refused send changed nothing; a held send waits on the approvals page; a held deposit waits here until released. The customer is never told which list matched.',
    outcomes: { refused: 'refused', held: 'held', released: 'released' },
  },
  vi: {
    lists: 'Danh sách chặn',
    noLists: 'Chưa có danh sách nào: nạp bằng `svcpay screening load`.',
    list: 'Danh sách',
    entries: 'Số mục',
    loaded: 'Nạp lúc',
    by: 'Người nạp',
    hits: 'Trùng khớp',
    noHits: 'Chưa có đích đến hay khoản nạp nào trùng danh sách.',
    at: 'Thời điểm',
    account: 'Tài khoản',
    txn: 'Giao dịch',
    kind: 'Loại',
    stage: 'Bước',
    destination: 'Đích đến',
    entry: 'Mục trong danh sách',
    outcome: 'Kết quả',
    reviewed: 'Đã xem',
    review: 'Đánh dấu đã xem',
    release: 'Giải phóng khoản nạp',
    reviewedNotice: 'Trùng khớp {hit} đã được đánh dấu đã xem.',
    releasedNotice: 'Trùng khớp {hit}: khoản nạp được giải phóng và sẽ được ghi có.',
    back: 'Quay lại danh sách trùng khớp',
    hint: 'Lệnh gửi bị từ chối không thay đổi gì; lệnh gửi bị giữ chờ ở trang phê duyệt; khoản nạp bị giữ chờ ở đây cho đến khi được giải phóng. Khách hàng không bao giờ biết danh sách nào trùng.',
    outcomes: { refused: 'từ chối', held: 'đang giữ', released: 'đã giải phóng' },
  },
}
type Text = (typeof TEXT)['en']

function forms(hit: Hit, ctx: ConsoleContext, t: Text): SafeHtml | string {
  if (!roleAllows(ctx.operator.role, 'approvals.decide')) return ''
  const csrf = ctx.operator.csrfToken ? csrfField(ctx.operator.csrfToken) : ''
  const at = `${SCREENING_PAGE}/hits/${hit.id}`
  const release =
    hit.stage === 'deposit' && hit.outcome === 'held'
      ? markup`<form class="inline" method="post" action="${at}/release">${csrf}<button type="submit">${t.release}</button></form>`
      : ''
  const review =
    hit.reviewedAt === null
      ? markup`<form class="inline" method="post" action="${at}/review">${csrf}<button type="submit" class="secondary">${t.review}</button></form>`
      : ''
  return markup`${release}${review}`
}

function hitRow(hit: Hit, ctx: ConsoleContext, t: Text): SafeHtml {
  const txn =
    hit.stage === 'quote'
      ? markup`<span class="mono muted">${hit.txnId}</span>`
      : markup`<a class="mono" href="${CONSOLE_BASE}/transactions/${hit.txnId}">${hit.txnId}</a>`
  const reviewed =
    hit.reviewedAt === null
      ? '—'
      : markup`${hit.reviewedBy ?? ''} <span class="muted">${when(hit.reviewedAt)}</span>`
  return markup`<tr data-hit="${hit.id}"><td>${when(hit.at)}</td>
<td><a class="mono" href="${CONSOLE_BASE}/accounts/${hit.accountId}">${hit.accountId}</a></td><td>${txn}</td>
<td>${hit.kind}</td><td>${hit.stage}</td><td class="mono">${hit.type}: ${hit.value}</td>
<td>${hit.source}: <span class="mono">${hit.entry}</span></td><td>${t.outcomes[hit.outcome]}</td>
<td>${reviewed}</td><td>${forms(hit, ctx, t)}</td></tr>`
}

export function screeningPages(app: FastifyInstance, c: ConsoleDeps): void {
  consolePage(app, SCREENING_PAGE, 'screening', async (ctx) => {
    const t = TEXT[ctx.lang]
    const [lists, hits] = await Promise.all([c.screening.lists(), c.screening.hits({ limit: PAGE_SIZE })])
    const listTable =
      lists.length === 0
        ? markup`<p class="muted" role="status" data-testid="no-lists">${t.noLists}</p>`
        : markup`<table data-testid="screening-lists"><caption>${t.lists}</caption>
<thead><tr><th scope="col">${t.list}</th><th scope="col" class="num">${t.entries}</th><th scope="col">${t.loaded}</th><th scope="col">${t.by}</th></tr></thead>
<tbody>${lists.map((l) => markup`<tr><td>${l.source}</td><td class="num">${String(l.entries)}</td><td>${when(l.loadedAt)}</td><td>${l.loadedBy}</td></tr>`)}</tbody></table>`
    const hitTable =
      hits.length === 0
        ? markup`<p class="muted" role="status" data-testid="no-hits">${t.noHits}</p>`
        : markup`<table data-testid="screening-hits"><caption>${t.hits}</caption>
<thead><tr><th scope="col">${t.at}</th><th scope="col">${t.account}</th><th scope="col">${t.txn}</th><th scope="col">${t.kind}</th><th scope="col">${t.stage}</th>
<th scope="col">${t.destination}</th><th scope="col">${t.entry}</th><th scope="col">${t.outcome}</th><th scope="col">${t.reviewed}</th><th scope="col"></th></tr></thead>
<tbody>${hits.map((hit) => hitRow(hit, ctx, t))}</tbody></table>`
    return { title: ctx.t.navScreening, body: markup`<p class="hint">${t.hint}</p>${listTable}${hitTable}` }
  })

  const hitOf = (ctx: ConsoleContext) => {
    const { hitId } = paramsOf(ctx.request, Type.Object({ hitId: Type.String() }))
    if (!/^[0-9]{1,18}$/.test(hitId)) throw new ApiError('not_found', 'Screening hit not found')
    return hitId
  }
  for (const [verb, release] of [
    ['review', false],
    ['release', true],
  ] as const) {
    consoleAction(app, `${SCREENING_PAGE}/hits/:hitId/${verb}`, 'screening', async (ctx) => {
      const hitId = hitOf(ctx)
      const done = await c.screening.reviewHit(c.db, hitId, ctx.operator.email, release)
      if (done === 'not_found') throw new ApiError('not_found', 'Screening hit not found')
      if (done === 'not_held') throw new ApiError('invalid_state', 'Only a held deposit can be released')
      const t = TEXT[ctx.lang]
      const message = (release ? t.releasedNotice : t.reviewedNotice).replace('{hit}', hitId)
      return {
        title: message,
        body: markup`<p class="notice good" role="status">${message}</p><p><a href="${SCREENING_PAGE}">${t.back}</a></p>`,
        audit: { target: `screening_hit=${hitId}`, before: done.before, after: done.after },
      }
    })
  }
}

/** The overview's "needs attention" section: screening hits no operator has reviewed. */
export const unreviewedHits: AttentionSection = {
  key: 'screening',
  heading: { en: 'Screening hits to review', vi: 'Trùng khớp sàng lọc cần xem' },
  none: { en: 'Every screening hit has been reviewed.', vi: 'Mọi trùng khớp sàng lọc đã được xem.' },
  async read(c, _now, limit) {
    const [total, hits] = await Promise.all([
      c.screening.unreviewedCount(),
      c.screening.hits({ unreviewed: true, limit }),
    ])
    return {
      total,
      rows: hits.map((hit) => ({
        txnId: hit.stage === 'quote' ? '' : hit.txnId,
        accountId: hit.accountId,
        ...(hit.stage === 'quote' ? { ref: { id: `hit ${hit.id}`, href: SCREENING_PAGE } } : {}),
        state: `${hit.stage} ${hit.outcome}`,
        since: hit.at,
        why: `${hit.type} ${hit.value}: ${hit.source} (${hit.entry})`,
      })),
    }
  },
}
