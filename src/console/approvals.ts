import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { paramsOf } from '../http/request-fields.js'
import type { ConsoleDeps } from './deps.js'
import { roleAllows } from '../operators/permissions.js'
import { countApprovals, APPROVAL_STATUSES, type ApprovalStatus } from '../approvals/repository.js'
import { NOTE_LENGTH_MAX, type ApprovalView } from '../approvals/service.js'
import { reasonText } from '../approvals/policy.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import { ApiError } from '../shared/errors.js'
import type { AttentionSection } from './attention.js'
import type { Lang } from '../pages/i18n.js'
import { ConsoleRefusal } from './errors.js'
import { csrfField } from './csrf.js'
import { decimal, when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import { consoleAction, consolePage, field, type ConsoleContext } from './page.js'
import type { Localized } from './strings.js'

/**
 * The approvals queue (docs/operators.md, "Approvals"): what waits for a second operator, and the
 * forms to review, approve or reject it. Each form posts to an action that calls the approvals
 * service (src/approvals/service.ts), the same one the operator API's routes call, inside the
 * guard's transaction that ends with its audit row.
 */
const PAGE_SIZE = 100
const BASE = `${CONSOLE_BASE}/approvals`

const TEXT: Localized<{
  waiting: string
  approved: string
  rejected: string
  expired: string
  show: string
  status: string
  none: string
  txn: string
  kind: string
  account: string
  over: string
  requested: string
  deadline: string
  review: string
  decision: string
  actions: string
  note: string
  reason: string
  markReviewed: string
  approve: string
  reject: string
  needsReview: string
  reviewedNotice: string
  approvedNotice: string
  rejectedNotice: string
  back: string
  reasonNeeded: string
  youReviewed: string
  notYours: string
  reviewed: string
  notReviewed: string
  until: string
}> = {
  en: {
    waiting: 'Waiting',
    approved: 'Approved',
    rejected: 'Rejected',
    expired: 'Expired',
    show: 'Show',
    status: 'Status',
    none: 'Nothing here.',
    txn: 'Transaction',
    kind: 'Kind',
    account: 'Account',
    over: 'Over the threshold',
    requested: 'Asked',
    deadline: 'Deadline',
    review: 'Reviewed by',
    decision: 'Decided by',
    actions: 'Decide',
    note: 'Note for {txn}',
    reason: 'Reason to reject {txn}',
    markReviewed: 'Mark reviewed',
    approve: 'Approve',
    reject: 'Reject',
    needsReview:
      'One operator reviews a transaction, another approves it. Whoever reviewed it cannot approve it.',
    reviewedNotice: '{txn} is reviewed. Another operator must approve it now.',
    approvedNotice: '{txn} is approved and goes on to the network.',
    rejectedNotice: '{txn} is rejected; its funds are released.',
    back: 'Back to the approvals',
    reasonNeeded: 'reason: say why the transaction is rejected',
    youReviewed: 'You reviewed it; another operator must approve it.',
    notYours:
      'You cannot approve this transaction because you made or reviewed it. Another operator with the right to decide must approve it.',
    reviewed: 'reviewed',
    notReviewed: 'not reviewed',
    until: 'until {at}',
  },
  vi: {
    waiting: 'Đang chờ',
    approved: 'Đã duyệt',
    rejected: 'Đã từ chối',
    expired: 'Hết hạn',
    show: 'Hiển thị',
    status: 'Trạng thái',
    none: 'Không có gì.',
    txn: 'Giao dịch',
    kind: 'Loại',
    account: 'Tài khoản',
    over: 'Vượt ngưỡng',
    requested: 'Yêu cầu lúc',
    deadline: 'Hạn chót',
    review: 'Người kiểm tra',
    decision: 'Người quyết định',
    actions: 'Quyết định',
    note: 'Ghi chú cho {txn}',
    reason: 'Lý do từ chối {txn}',
    markReviewed: 'Đánh dấu đã kiểm tra',
    approve: 'Phê duyệt',
    reject: 'Từ chối',
    needsReview:
      'Một người vận hành kiểm tra giao dịch, một người khác phê duyệt. Người đã kiểm tra không thể phê duyệt.',
    reviewedNotice: '{txn} đã được kiểm tra. Cần một người vận hành khác phê duyệt.',
    approvedNotice: '{txn} đã được phê duyệt và sẽ được gửi đi.',
    rejectedNotice: '{txn} đã bị từ chối; số tiền bị giữ đã được hoàn lại.',
    back: 'Quay lại danh sách phê duyệt',
    reasonNeeded: 'lý do: hãy nói vì sao giao dịch bị từ chối',
    youReviewed: 'Bạn đã kiểm tra giao dịch này; một người vận hành khác phải phê duyệt.',
    notYours:
      'Bạn không thể phê duyệt giao dịch này vì chính bạn đã tạo hoặc kiểm tra nó. Một người vận hành khác có quyền quyết định phải phê duyệt.',
    reviewed: 'đã kiểm tra',
    notReviewed: 'chưa kiểm tra',
    until: 'hạn đến {at}',
  },
}

type Text = (typeof TEXT)['en']

const statusName = (s: ApprovalStatus, t: Text) => t[s]

function overText(a: ApprovalView, ctx: ConsoleContext): string {
  return a.reasons.map((r) => reasonText(r, (t) => decimal(t, ctx.lang))).join(', ')
}

function decideForms(a: ApprovalView, ctx: ConsoleContext, t: Text): SafeHtml | string {
  if (a.status !== 'waiting' || !roleAllows(ctx.operator.role, 'approvals.decide')) return ''
  const csrf = ctx.operator.csrfToken ? csrfField(ctx.operator.csrfToken) : ''
  const at = `${BASE}/${a.txnId}`
  const id = a.txnId
  const noteInput = (verb: string) =>
    markup`<input name="note" id="${verb}-note-${id}" maxlength="${NOTE_LENGTH_MAX}" aria-label="${t.note.replace('{txn}', id)}">`
  // Four eyes: whoever reviewed it is not offered the approval (the service refuses it anyway).
  const first =
    a.review === null
      ? markup`<form class="inline" method="post" action="${at}/review">${csrf}${noteInput('review')}<button type="submit">${t.markReviewed}</button></form>`
      : a.review.operatorId === ctx.operator.operatorId
        ? markup`<p class="hint" data-testid="reviewed-by-you">${t.youReviewed}</p>`
        : markup`<form class="inline" method="post" action="${at}/approve">${csrf}${noteInput('approve')}<button type="submit">${t.approve}</button></form>`
  return markup`${first}
<form class="inline" method="post" action="${at}/reject">${csrf}<input name="reason" id="reject-reason-${id}" required maxlength="${NOTE_LENGTH_MAX}" aria-label="${t.reason.replace('{txn}', id)}"><button type="submit" class="secondary">${t.reject}</button></form>`
}

function row(a: ApprovalView, ctx: ConsoleContext, t: Text): SafeHtml {
  const who = (x: { email: string | null; at: number; note: string | null } | null) =>
    x === null
      ? '—'
      : markup`${x.email ?? 'worker'} <span class="muted">${when(x.at)}</span>${x.note ? markup`<br>${x.note}` : ''}`
  return markup`<tr data-txn="${a.txnId}"><td><a class="mono" href="${CONSOLE_BASE}/transactions/${a.txnId}">${a.txnId}</a></td>
<td>${a.type}</td><td><a class="mono" href="${CONSOLE_BASE}/accounts/${a.accountId}">${a.accountId}</a></td>
<td class="num">${overText(a, ctx)}</td><td>${when(a.requestedAt)}</td><td>${when(a.expiresAt)}</td>
<td>${who(a.review)}</td><td>${a.status === 'waiting' ? decideForms(a, ctx, t) : who(a.decision)}</td></tr>`
}

export function approvalPages(app: FastifyInstance, c: ConsoleDeps): void {
  consolePage(app, BASE, 'approvals', async (ctx) => {
    const t = TEXT[ctx.lang]
    const asked = ctx.query.status
    const status: ApprovalStatus = APPROVAL_STATUSES.includes(asked as ApprovalStatus)
      ? (asked as ApprovalStatus)
      : 'waiting'
    const { data } = await c.approvals.list({ status, limit: PAGE_SIZE })
    const filter = markup`<form class="filters" method="get" action="${BASE}">
<div><label for="status">${t.status}</label><select id="status" name="status">
${APPROVAL_STATUSES.map((s) => markup`<option value="${s}"${s === status ? markup` selected` : ''}>${statusName(s, t)}</option>`)}
</select></div><div><button type="submit">${t.show}</button></div></form>`
    const table =
      data.length === 0
        ? markup`<p class="muted" role="status" data-testid="no-approvals">${t.none}</p>`
        : markup`<table data-testid="approvals"><caption>${statusName(status, t)}</caption>
<thead><tr><th scope="col">${t.txn}</th><th scope="col">${t.kind}</th><th scope="col">${t.account}</th><th scope="col" class="num">${t.over}</th>
<th scope="col">${t.requested}</th><th scope="col">${t.deadline}</th><th scope="col">${t.review}</th><th scope="col">${status === 'waiting' ? t.actions : t.decision}</th></tr></thead>
<tbody>${data.map((a) => row(a, ctx, t))}</tbody></table>`
    return { title: ctx.t.navApprovals, body: markup`<p class="hint">${t.needsReview}</p>${filter}${table}` }
  })

  const done = (ctx: ConsoleContext, txnId: string, text: string, before: unknown, after: ApprovalView) => {
    const t = TEXT[ctx.lang]
    const message = text.replace('{txn}', txnId)
    return {
      title: message,
      body: markup`<p class="notice good" role="status">${message}</p><p><a href="${BASE}">${t.back}</a></p>`,
      audit: { target: `txnId=${txnId}`, before, after },
    }
  }
  const txnOf = (ctx: ConsoleContext) => {
    const { txnId } = paramsOf(ctx.request, Type.Object({ txnId: Type.String() }))
    if (txnId.length > 64) throw new ApiError('not_found', 'No approval for this transaction')
    return txnId
  }

  consoleAction(app, `${BASE}/:txnId/review`, 'approvals', async (ctx, body) => {
    const txnId = txnOf(ctx)
    const view = await c.approvals.review(txnId, ctx.operator, field(body, 'note', NOTE_LENGTH_MAX) ?? null)
    return done(ctx, txnId, TEXT[ctx.lang].reviewedNotice, { status: 'waiting', review: null }, view)
  })
  consoleAction(app, `${BASE}/:txnId/approve`, 'approvals', async (ctx, body) => {
    const txnId = txnOf(ctx)
    const view = await c.approvals
      .approve(txnId, ctx.operator, field(body, 'note', NOTE_LENGTH_MAX) ?? null)
      .catch((err: unknown) => {
        // The four-eyes refusal is not a matter of role: the page says what it is, in full.
        if (err instanceof ApiError && err.code === 'forbidden')
          throw new ConsoleRefusal(err, { en: TEXT.en.notYours, vi: TEXT.vi.notYours }, BASE)
        throw err
      })
    return done(
      ctx,
      txnId,
      TEXT[ctx.lang].approvedNotice,
      { status: 'waiting', txnState: 'processing' },
      view,
    )
  })
  consoleAction(app, `${BASE}/:txnId/reject`, 'approvals', async (ctx, body) => {
    const txnId = txnOf(ctx)
    const reason = field(body, 'reason', NOTE_LENGTH_MAX)
    if (!reason) throw new ApiError('invalid_request', TEXT.en.reasonNeeded)
    const view = await c.approvals.reject(txnId, ctx.operator, reason)
    return done(
      ctx,
      txnId,
      TEXT[ctx.lang].rejectedNotice,
      { status: 'waiting', txnState: 'processing' },
      view,
    )
  })
}

/** Why a send is listed as awaiting approval, in the page's language. */
function whyWaiting(a: ApprovalView, lang: Lang): string {
  const t = TEXT[lang]
  const over = a.reasons.map((r) => reasonText(r, (t) => decimal(t, lang))).join(', ')
  const review = a.review ? t.reviewed : t.notReviewed
  return `${over}; ${review}, ${t.until.replace('{at}', when(a.expiresAt))}`
}

/** The overview's "needs attention" section of sends waiting for a second operator. */
export const awaitingApproval: AttentionSection = {
  key: 'approvals',
  heading: { en: 'Awaiting approval', vi: 'Đang chờ phê duyệt' },
  none: { en: 'No send is waiting for approval.', vi: 'Không có giao dịch nào chờ phê duyệt.' },
  async read(c, _now, limit) {
    const [total, page] = await Promise.all([
      countApprovals(c.db, 'waiting'),
      c.approvals.list({ status: 'waiting', limit }),
    ])
    return {
      total,
      rows: page.data.map((a) => ({
        txnId: a.txnId,
        accountId: a.accountId,
        state: a.txnState,
        since: a.requestedAt,
        why: {
          en: whyWaiting(a, 'en'),
          vi: whyWaiting(a, 'vi'),
        },
      })),
    }
  },
}
