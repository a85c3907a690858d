import type { ConsoleDeps } from './deps.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import { accountLimitsView } from '../limits/routes.js'
import { allowList } from '../limits/repository.js'
import { when } from './format.js'
import type { Localized } from './strings.js'
import type { Lang } from '../pages/i18n.js'

/**
 * The limits section of an account's page (docs/limits.md): its limits tier, every limit in effect
 * with what the windows have used, the operators' overrides with their reasons and expiry, and the
 * allow-list. Read-only: an operator changes them with the admin API or `svcpay limits`, each
 * change audited.
 */
const ALLOW_LIST_SHOWN = 50

export const LIMITS_TEXT: Localized<{
  heading: string
  tier: string
  none: string
  limit: string
  method: string
  amount: string
  used: string
  remaining: string
  resets: string
  all: string
  overrides: string
  reason: string
  expires: string
  never: string
  allowList: string
  allowListOnly: string
  howToChange: string
}> = {
  en: {
    heading: 'Limits',
    tier: 'Limits tier',
    none: 'No limits are set for this account.',
    limit: 'Limit',
    method: 'Method',
    amount: 'Amount',
    used: 'Used',
    remaining: 'Remaining',
    resets: 'Frees up',
    all: 'all methods',
    overrides: 'Overrides',
    reason: 'Reason',
    expires: 'Expires',
    never: 'never',
    allowList: 'Allow-list',
    allowListOnly: 'This account may pay only the destinations below.',
    howToChange: 'Change them with svcpay limits … (each change is audited).',
  },
  vi: {
    heading: 'Hạn mức',
    tier: 'Hạng hạn mức',
    none: 'Tài khoản này chưa có hạn mức.',
    limit: 'Hạn mức',
    method: 'Phương thức',
    amount: 'Số tiền',
    used: 'Đã dùng',
    remaining: 'Còn lại',
    resets: 'Giải phóng lúc',
    all: 'mọi phương thức',
    overrides: 'Điều chỉnh riêng',
    reason: 'Lý do',
    expires: 'Hết hạn',
    never: 'không',
    allowList: 'Danh sách được phép',
    allowListOnly: 'Tài khoản này chỉ được trả cho các đích dưới đây.',
    howToChange: 'Thay đổi bằng svcpay limits … (mọi thay đổi đều được ghi nhật ký).',
  },
}

export async function accountLimitsSection(c: ConsoleDeps, accountId: string, lang: Lang): Promise<SafeHtml> {
  const t = LIMITS_TEXT[lang]
  const at = Date.now()
  const [view, allowed] = await Promise.all([
    accountLimitsView(c.db, c.config.limits, accountId, at),
    allowList(c.db, accountId, ALLOW_LIST_SHOWN),
  ])
  const rows = view.limits.map(
    (
      l,
    ) => markup`<tr><td>${l.limit}</td><td>${l.method ?? t.all}</td><td class="num">${l.amount}${l.ccy ? ` ${l.ccy}` : ''}</td>
<td class="num">${l.used ?? '—'}</td><td class="num">${l.remaining ?? '—'}</td><td>${l.resetsAt ? when(l.resetsAt) : '—'}</td></tr>`,
  )
  const overrides = view.overrides.map(
    (
      o,
    ) => markup`<tr><td>${o.limit}</td><td>${o.method ?? t.all}</td><td class="num">${o.amount}${o.ccy ? ` ${o.ccy}` : ''}</td>
<td>${o.reason}</td><td>${o.setBy}</td><td>${o.expiresAt ? when(o.expiresAt) : t.never}</td></tr>`,
  )
  return markup`<h2 id="h-limits">${t.heading}</h2>
<dl class="facts" data-testid="account-limits"><dt>${t.tier}</dt><dd>${view.tier}</dd></dl>
${
  rows.length === 0
    ? markup`<p class="muted">${t.none}</p>`
    : markup`<table aria-labelledby="h-limits" data-testid="limits"><thead><tr><th scope="col">${t.limit}</th><th scope="col">${t.method}</th><th scope="col" class="num">${t.amount}</th><th scope="col" class="num">${t.used}</th><th scope="col" class="num">${t.remaining}</th><th scope="col">${t.resets}</th></tr></thead>
<tbody>${rows}</tbody></table>`
}
${
  overrides.length === 0
    ? ''
    : markup`<h3>${t.overrides}</h3><table data-testid="limit-overrides"><thead><tr><th scope="col">${t.limit}</th><th scope="col">${t.method}</th><th scope="col" class="num">${t.amount}</th><th scope="col">${t.reason}</th><th scope="col"></th><th scope="col">${t.expires}</th></tr></thead>
<tbody>${overrides}</tbody></table>`
}
${
  view.allowListOnly || allowed.length > 0
    ? markup`<h3>${t.allowList}</h3>${view.allowListOnly ? markup`<p>${t.allowListOnly}</p>` : ''}
<ul data-testid="allow-list">${allowed.map((d) => markup`<li><span class="mono">${d.destination}</span> — ${d.reason}</li>`)}</ul>`
    : ''
}
<p class="muted">${t.howToChange}</p>`
}
