import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { ConsoleDeps } from './deps.js'
import { roleAllows } from '../operators/permissions.js'
import { paramsOf } from '../http/request-fields.js'
import { markup } from '../pages/escape.js'
import { assignCredit, listCredits, type CreditRow } from '../payins/credits.js'
import { ApiError } from '../shared/errors.js'
import { csrfField } from './csrf.js'
import { when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import { consoleAction, consolePage, field, type ConsoleContext } from './page.js'
import type { Localized } from './strings.js'

/**
 * Bank transfers in that matched no receive (src/payins/credits.ts), and a form on each to assign
 * it to an account (optionally to one of its VND receives). The form posts to an action that calls
 * `assignCredit`, the same as POST /admin/bank-credits/:creditId/assign, inside the guard's
 * transaction that ends with its audit row. The payer's name and account are never shown.
 */
const PAGE_SIZE = 100
const REASON_MAX = 500
export const BANK_CREDITS_PAGE = `${CONSOLE_BASE}/bank-credits`

const TEXT: Localized<{
  title: string
  hint: string
  none: string
  credit: string
  amount: string
  booked: string
  memo: string
  assign: string
  account: string
  txn: string
  reason: string
  assigned: string
  back: string
}> = {
  en: {
    title: 'Bank transfers to assign',
    hint: 'Money that arrived at our bank account with no memo of ours. Assign each to the account it belongs to.',
    none: 'Every bank transfer in has been matched.',
    credit: 'Credit',
    amount: 'Amount (VND)',
    booked: 'Booked',
    memo: 'Description as the bank gave it',
    assign: 'Assign',
    account: 'Account id',
    txn: 'VND receive (optional)',
    reason: 'Reason',
    assigned: 'Credit {credit} was assigned: transaction {txn}.',
    back: 'Back to the list',
  },
  vi: {
    title: 'Chuyển khoản chưa xác định',
    hint: 'Tiền đã về tài khoản ngân hàng của chúng tôi mà không có mã của chúng tôi. Hãy gán từng khoản cho đúng tài khoản.',
    none: 'Mọi chuyển khoản đến đều đã được khớp.',
    credit: 'Khoản',
    amount: 'Số tiền (VND)',
    booked: 'Ghi sổ',
    memo: 'Nội dung do ngân hàng cung cấp',
    assign: 'Gán',
    account: 'Mã tài khoản',
    txn: 'Giao dịch nhận VND (không bắt buộc)',
    reason: 'Lý do',
    assigned: 'Đã gán khoản {credit}: giao dịch {txn}.',
    back: 'Quay lại danh sách',
  },
}

function row(r: CreditRow, ctx: ConsoleContext) {
  const t = TEXT[ctx.lang]
  const id = r.creditId
  const form = roleAllows(ctx.operator.role, 'transactions.write')
    ? markup`<form class="inline" method="post" action="${BANK_CREDITS_PAGE}/${id}/assign">${ctx.operator.csrfToken ? csrfField(ctx.operator.csrfToken) : ''}
<input name="accountId" required maxlength="64" aria-label="${t.account} (${id})" placeholder="${t.account}">
<input name="txnId" maxlength="64" aria-label="${t.txn} (${id})" placeholder="${t.txn}">
<input name="reason" required maxlength="${REASON_MAX}" aria-label="${t.reason} (${id})" placeholder="${t.reason}">
<button type="submit">${t.assign}</button></form>`
    : ''
  return markup`<tr><td class="mono">${id}</td><td class="num">${r.amountMinor.toString()}</td><td>${when(r.bookedAt)}</td><td>${r.memo}</td><td>${form}</td></tr>`
}

export function bankCreditPages(app: FastifyInstance, c: ConsoleDeps): void {
  consolePage(app, BANK_CREDITS_PAGE, undefined, async (ctx) => {
    const t = TEXT[ctx.lang]
    const { rows } = await listCredits(c.db, 'unassigned', PAGE_SIZE)
    const table =
      rows.length === 0
        ? markup`<p class="muted" role="status" data-testid="no-bank-credits">${t.none}</p>`
        : markup`<table data-testid="bank-credits"><caption>${t.title}</caption>
<thead><tr><th scope="col">${t.credit}</th><th scope="col" class="num">${t.amount}</th><th scope="col">${t.booked}</th><th scope="col">${t.memo}</th><th scope="col">${t.assign}</th></tr></thead>
<tbody>${rows.map((r) => row(r, ctx))}</tbody></table>`
    return { title: t.title, body: markup`<p class="hint">${t.hint}</p>${table}` }
  })

  consoleAction(app, `${BANK_CREDITS_PAGE}/:creditId/assign`, undefined, async (ctx, body) => {
    const t = TEXT[ctx.lang]
    const { creditId } = paramsOf(ctx.request, Type.Object({ creditId: Type.String() }))
    if (creditId.length > 64) throw new ApiError('not_found', `No bank credit ${creditId}`)
    const accountId = field(body, 'accountId', 64)
    const reason = field(body, 'reason', REASON_MAX)
    if (!accountId || !reason) throw new ApiError('invalid_request', 'An account id and a reason are needed')
    const txnId = field(body, 'txnId', 64)
    const done = await assignCredit(c.payins, {
      creditId,
      accountId,
      ...(txnId ? { txnId } : {}),
      operatorId: ctx.operator.operatorId,
      reason,
    })
    const message = t.assigned.replace('{credit}', creditId).replace('{txn}', done.txnId)
    return {
      title: message,
      body: markup`<p class="notice good" role="status">${message}</p><p><a href="${BANK_CREDITS_PAGE}">${t.back}</a></p>`,
      audit: {
        target: `creditId=${creditId}`,
        before: { status: 'unassigned' },
        after: { accountId, txnId: done.txnId, amount: done.amount.toString(), reason },
      },
    }
  })
}
