import { sql } from '../db/sql.js'
import { asTxnId } from '../shared/ids.js'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { paramsOf } from '../http/request-fields.js'
import { roleAllows } from '../operators/permissions.js'
import type { ConsoleDeps } from './deps.js'
import type { DeliveryView } from '../events/delivery-records.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import type { Lang } from '../pages/i18n.js'
import { ApiError } from '../shared/errors.js'
import { getTxn } from '../transactions/repository.js'
import { entryPostingsOf, holdsOf } from '../ledger/reads.js'
import { eventsOfTxn } from '../events/reads.js'
import { csrfField } from './csrf.js'
import { money, when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import { consolePage, type ConsoleContext } from './page.js'
import type { Localized } from './strings.js'
import { REFERENCE_KEYS } from './transactions.js'

/**
 * One transaction: its facts, its state timeline (the outbox's events, one per change), its ledger
 * entries and holds, its webhook deliveries with every attempt and a redeliver button, and the
 * rail's references. Read-only but for the redeliver form (transaction-actions.ts).
 */
export const TXN_TEXT: Localized<{
  account: string
  extRefId: string
  kind: string
  state: string
  message: string
  source: string
  destination: string
  settled: string
  fee: string
  networkFee: string
  fxRate: string
  created: string
  updated: string
  expires: string
  timeline: string
  noEvents: string
  entries: string
  noEntries: string
  entry: string
  ledgerAccount: string
  amount: string
  holds: string
  noHolds: string
  holdStatus: string
  deliveries: string
  noDeliveries: string
  delivery: string
  attempts: string
  attempt: string
  at: string
  httpStatus: string
  latency: string
  error: string
  redeliver: string
  redeliverLabel: string
  references: string
  noReferences: string
  railRef: string
  railHealth: string
}> = {
  en: {
    account: 'Account',
    extRefId: 'extRefId',
    kind: 'Kind',
    state: 'State',
    message: 'Message',
    source: 'Source',
    destination: 'Destination',
    settled: 'settled',
    fee: 'svcpay fee',
    networkFee: 'Network fee',
    fxRate: 'Exchange rate',
    created: 'Created',
    updated: 'Updated',
    expires: 'Expires',
    timeline: 'State timeline',
    noEvents: 'No state change recorded yet.',
    entries: 'Ledger entries',
    noEntries: 'No ledger entry.',
    entry: 'Entry',
    ledgerAccount: 'Ledger account',
    amount: 'Amount',
    holds: 'Holds',
    noHolds: 'No hold.',
    holdStatus: 'Status',
    deliveries: 'Webhook deliveries',
    noDeliveries: 'No webhook delivery.',
    delivery: 'Delivery #{id}: {state}, {status}, {attempts} attempt(s)',
    attempts: 'Attempts of delivery #{id}',
    attempt: 'Attempt',
    at: 'At',
    httpStatus: 'HTTP status',
    latency: 'Latency (ms)',
    error: 'Error',
    redeliver: 'Redeliver',
    redeliverLabel: 'Redeliver delivery #{id}',
    references: 'Rail references',
    noReferences: 'No rail reference yet.',
    railRef: 'Rail reference',
    railHealth: 'Rail calls: {failures} failure(s) in a row, last error {error}, last answer {answer}',
  },
  vi: {
    account: 'Tài khoản',
    extRefId: 'extRefId',
    kind: 'Loại',
    state: 'Trạng thái',
    message: 'Thông điệp',
    source: 'Nguồn',
    destination: 'Đích',
    settled: 'đã thanh toán',
    fee: 'Phí svcpay',
    networkFee: 'Phí mạng',
    fxRate: 'Tỷ giá',
    created: 'Tạo lúc',
    updated: 'Cập nhật',
    expires: 'Hết hạn',
    timeline: 'Dòng thời gian trạng thái',
    noEvents: 'Chưa có thay đổi trạng thái nào.',
    entries: 'Bút toán sổ cái',
    noEntries: 'Không có bút toán.',
    entry: 'Bút toán',
    ledgerAccount: 'Tài khoản sổ cái',
    amount: 'Số tiền',
    holds: 'Khoản giữ',
    noHolds: 'Không có khoản giữ.',
    holdStatus: 'Trạng thái',
    deliveries: 'Gửi webhook',
    noDeliveries: 'Không có lần gửi webhook nào.',
    delivery: 'Lần gửi #{id}: {state}, {status}, {attempts} lần thử',
    attempts: 'Các lần thử của lần gửi #{id}',
    attempt: 'Lần thử',
    at: 'Lúc',
    httpStatus: 'Mã HTTP',
    latency: 'Độ trễ (ms)',
    error: 'Lỗi',
    redeliver: 'Gửi lại',
    redeliverLabel: 'Gửi lại lần gửi #{id}',
    references: 'Mã tham chiếu của kênh',
    noReferences: 'Chưa có mã tham chiếu.',
    railRef: 'Mã tham chiếu kênh',
    railHealth: 'Gọi kênh: {failures} lần lỗi liên tiếp, lỗi gần nhất {error}, trả lời gần nhất {answer}',
  },
}

const fill = (s: string, values: Record<string, string | number>) =>
  s.replace(/\{(\w+)\}/g, (_m, k: string) => String(values[k] ?? ''))

const TxnParams = Type.Object({ txnId: Type.String() })

export function transactionPage(app: FastifyInstance, c: ConsoleDeps): void {
  consolePage(app, `${CONSOLE_BASE}/transactions/:txnId`, 'transactions', async (ctx) => {
    const { txnId } = paramsOf(ctx.request, TxnParams)
    const txn = txnId.length <= 64 ? await getTxn(c.db, asTxnId(txnId)) : undefined
    if (!txn) throw new ApiError('not_found', 'Transaction not found')
    const t = TXN_TEXT[ctx.lang]
    const lang = ctx.lang
    const [timeline, entries, holds, deliveries, rail] = await Promise.all([
      timelineOf(c, txn.id, lang),
      entriesOf(c, txn.id, lang),
      holdsSection(c, txn.id, lang),
      c.webhooks.listDeliveries({ txnId: txn.id }, { limit: '100' }),
      c.db.query<{ failures: number; last_error: string | null; last_answer_at: string | null }>(
        sql`SELECT failures, last_error, last_answer_at FROM rail_attempts WHERE txn_id = ${txn.id}`,
      ),
    ])
    const side = (ccy: string, method: string, amount: bigint, settled: bigint | null) =>
      markup`${money(BigInt(amount), ccy, lang)} (${method})${settled === null ? '' : markup`, ${t.settled} ${money(BigInt(settled), ccy, lang)}`}`
    const refs: Array<[string, string]> = []
    if (txn.railRef) refs.push([t.railRef, txn.railRef])
    for (const [prefix, details] of [
      ['source', txn.srcDetails],
      ['destination', txn.destDetails],
    ] as const)
      for (const k of REFERENCE_KEYS)
        if (typeof details[k] === 'string' || typeof details[k] === 'number')
          refs.push([`${prefix}.${k}`, String(details[k])])
    const explorer = txn.destMethod === 'eth' ? ethExplorerUrl(c.config) : undefined
    const refValue = (k: string, v: string) =>
      explorer && /^0x[0-9a-fA-F]{64}$/.test(v) && (k === t.railRef || k === 'destination.txHash')
        ? markup`<a href="${explorer}/tx/${v}" rel="noopener noreferrer" target="_blank">${v}</a>`
        : v
    const health = rail.rows[0]
    return {
      title: txn.id,
      body: markup`<dl class="facts" data-testid="txn-facts">
<dt>${t.account}</dt><dd><a class="mono" href="${CONSOLE_BASE}/accounts/${txn.accountId}">${txn.accountId}</a></dd>
${txn.extRefId ? markup`<dt>${t.extRefId}</dt><dd class="mono">${txn.extRefId}</dd>` : ''}
<dt>${t.kind}</dt><dd>${txn.kind}</dd><dt>${t.state}</dt><dd data-testid="txn-state">${txn.state}</dd>
${txn.msg ? markup`<dt>${t.message}</dt><dd>${txn.msg}</dd>` : ''}
<dt>${t.source}</dt><dd>${side(txn.srcCcy, txn.srcMethod, txn.srcAmountMinor, txn.srcSettledMinor)}</dd>
<dt>${t.destination}</dt><dd>${side(txn.destCcy, txn.destMethod, txn.destAmountMinor, txn.destSettledMinor)}</dd>
<dt>${t.fee}</dt><dd>${money(BigInt(txn.srcFeeMinor), txn.srcCcy, lang)}</dd>
<dt>${t.networkFee}</dt><dd>${money(BigInt(txn.srcNetworkFeeMinor), txn.srcCcy, lang)}</dd>
<dt>${t.fxRate}</dt><dd>${txn.fxRate}</dd>
<dt>${t.created}</dt><dd>${when(txn.createdAtMs)}</dd><dt>${t.updated}</dt><dd>${when(txn.updatedAtMs)}</dd>
<dt>${t.expires}</dt><dd>${when(txn.expiresAtMs)}</dd></dl>
<h2>${t.timeline}</h2>${timeline}
<h2>${t.references}</h2>
${
  refs.length === 0
    ? markup`<p class="muted">${t.noReferences}</p>`
    : markup`<dl class="facts" data-testid="references">${refs.map(([k, v]) => markup`<dt>${k}</dt><dd class="mono">${refValue(k, v)}</dd>`)}</dl>`
}
${health ? markup`<p class="muted">${fill(t.railHealth, { failures: health.failures, error: health.last_error ?? '—', answer: when(health.last_answer_at === null ? null : Number(health.last_answer_at)) })}</p>` : ''}
<h2 id="h-entries">${t.entries}</h2>${entries}
<h2 id="h-holds">${t.holds}</h2>${holds}
<h2>${t.deliveries}</h2>${deliveriesOf(ctx, txn.id, deliveries.data)}`,
    }
  })
}

async function timelineOf(c: ConsoleDeps, txnId: string, lang: Lang): Promise<SafeHtml> {
  const rows = await eventsOfTxn(c.db, txnId, 500)
  if (rows.length === 0) return markup`<p class="muted">${TXN_TEXT[lang].noEvents}</p>`
  return markup`<ol class="timeline" data-testid="timeline">${rows.map(
    (r) =>
      markup`<li><time datetime="${new Date(Number(r.created_at)).toISOString()}">${when(Number(r.created_at))}</time>: <strong>${r.txn_state}</strong>${r.msg ? ` — ${r.msg}` : ''}</li>`,
  )}</ol>`
}

async function entriesOf(c: ConsoleDeps, txnId: string, lang: Lang): Promise<SafeHtml> {
  const t = TXN_TEXT[lang]
  const rows = await entryPostingsOf(c.db, txnId, 500)
  if (rows.length === 0) return markup`<p class="muted">${t.noEntries}</p>`
  return markup`<table aria-labelledby="h-entries" data-testid="entries"><thead><tr><th scope="col">${t.entry}</th><th scope="col">${t.at}</th>
<th scope="col">${t.ledgerAccount}</th><th scope="col" class="num">${t.amount}</th></tr></thead><tbody>${rows.map(
    (
      r,
    ) => markup`<tr><td>#${r.entry_id} ${r.kind}</td><td>${when(Number(r.created_at))}</td><td class="mono">${r.ledger_account_id}</td>
<td class="num">${money(BigInt(r.amount), r.ccy, lang)}</td></tr>`,
  )}</tbody></table>`
}

async function holdsSection(c: ConsoleDeps, txnId: string, lang: Lang): Promise<SafeHtml> {
  const t = TXN_TEXT[lang]
  const rows = await holdsOf(c.db, txnId, 100)
  if (rows.length === 0) return markup`<p class="muted">${t.noHolds}</p>`
  return markup`<table aria-labelledby="h-holds" data-testid="holds"><thead><tr><th scope="col">${t.ledgerAccount}</th><th scope="col" class="num">${t.amount}</th>
<th scope="col">${t.holdStatus}</th><th scope="col">${t.created}</th><th scope="col">${t.updated}</th></tr></thead><tbody>${rows.map(
    (
      r,
    ) => markup`<tr><td class="mono">${r.ledger_account_id}</td><td class="num">${money(BigInt(r.amount), r.ccy, lang)}</td>
<td>${r.status}</td><td>${when(Number(r.created_at))}</td><td>${when(Number(r.updated_at))}</td></tr>`,
  )}</tbody></table>`
}

function deliveriesOf(ctx: ConsoleContext, txnId: string, deliveries: DeliveryView[]): SafeHtml {
  const t = TXN_TEXT[ctx.lang]
  if (deliveries.length === 0) return markup`<p class="muted">${t.noDeliveries}</p>`
  const may = roleAllows(ctx.operator.role, 'webhooks.redeliver')
  const csrf = ctx.operator.csrfToken ? csrfField(ctx.operator.csrfToken) : ''
  return markup`${deliveries.map((d) => {
    const headingId = `delivery-${d.id}`
    const button = may
      ? markup`<form class="inline" method="post" action="${CONSOLE_BASE}/transactions/${txnId}/deliveries/${d.id}/redeliver">${csrf}
<button type="submit" class="secondary" aria-label="${fill(t.redeliverLabel, { id: d.id })}">${t.redeliver}</button></form>`
      : ''
    const attempts =
      d.history.length === 0
        ? ''
        : markup`<table aria-label="${fill(t.attempts, { id: d.id })}"><thead><tr><th scope="col">${t.attempt}</th><th scope="col">${t.at}</th>
<th scope="col">${t.httpStatus}</th><th scope="col" class="num">${t.latency}</th><th scope="col">${t.error}</th></tr></thead><tbody>${d.history.map(
            (a) =>
              markup`<tr><td>${a.attempt}</td><td>${when(a.at)}</td><td>${a.httpStatus ?? '—'}</td><td class="num">${a.latencyMs}</td><td>${a.error ?? '—'}</td></tr>`,
          )}</tbody></table>`
    return markup`<section class="card" aria-labelledby="${headingId}" data-testid="delivery" data-delivery-id="${d.id}">
<h3 id="${headingId}">${fill(t.delivery, { id: d.id, state: d.txnState, status: d.status, attempts: d.attempts })}</h3>
<p class="muted">${when(d.createdAt)} · ${d.lastError ?? d.lastStatus ?? ''}</p>
${attempts}${button}</section>`
  })}`
}

/**
 * Where an Ethereum payout's transaction is shown (issue 33): `ETH_EXPLORER_URL` (an https URL
 * whose `/tx/<hash>` page shows a transaction, such as https://sepolia.etherscan.io), by default
 * Etherscan on mainnet (ETH=jsonrpc with ETH_CHAIN_ID 1); none on the sandbox, whose hashes no
 * explorer knows, nor on another chain without the setting.
 */
export function ethExplorerUrl(config: ConsoleDeps['config']): string | undefined {
  const set = config.env.ETH_EXPLORER_URL
  if (set) return /^https:\/\/[^\s"'<>]+$/.test(set) ? set.replace(/\/+$/, '') : undefined
  if (config.eth === 'jsonrpc' && (config.env.ETH_CHAIN_ID ?? '1') === '1') return 'https://etherscan.io'
  return undefined
}
