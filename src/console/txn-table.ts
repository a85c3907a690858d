import { markup, type SafeHtml } from '../pages/escape.js'
import type { Lang } from '../pages/i18n.js'
import type { Txn } from '../transactions/txn.js'
import { money, when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import type { Localized } from './strings.js'

/** A table of transactions, as the account page and the transactions page list them. */
const TEXT: Localized<{
  txn: string
  account: string
  kind: string
  state: string
  source: string
  destination: string
  created: string
  none: string
}> = {
  en: {
    txn: 'Transaction',
    account: 'Account',
    kind: 'Kind',
    state: 'State',
    source: 'Source',
    destination: 'Destination',
    created: 'Created',
    none: 'No transaction matches.',
  },
  vi: {
    txn: 'Giao dịch',
    account: 'Tài khoản',
    kind: 'Loại',
    state: 'Trạng thái',
    source: 'Nguồn',
    destination: 'Đích',
    created: 'Tạo lúc',
    none: 'Không có giao dịch nào khớp.',
  },
}

export function txnTable(
  rows: readonly Txn[],
  lang: Lang,
  opts: { caption: string; withAccount?: boolean },
): SafeHtml {
  const t = TEXT[lang]
  if (rows.length === 0) return markup`<p class="muted" data-testid="no-transactions">${t.none}</p>`
  const lines = rows.map(
    (r) => markup`<tr>
<td><a class="mono" href="${CONSOLE_BASE}/transactions/${r.id}">${r.id}</a></td>
${opts.withAccount ? markup`<td><a class="mono" href="${CONSOLE_BASE}/accounts/${r.accountId}">${r.accountId}</a></td>` : ''}
<td>${r.kind}</td><td>${r.state}</td>
<td class="num">${money(BigInt(r.srcAmountMinor), r.srcCcy, lang)} <span class="muted">${r.srcMethod}</span></td>
<td class="num">${money(BigInt(r.destAmountMinor), r.destCcy, lang)} <span class="muted">${r.destMethod}</span></td>
<td>${when(r.createdAtMs)}</td></tr>`,
  )
  return markup`<table data-testid="transactions"><caption class="visually-hidden">${opts.caption}</caption>
<thead><tr><th scope="col">${t.txn}</th>${opts.withAccount ? markup`<th scope="col">${t.account}</th>` : ''}<th scope="col">${t.kind}</th>
<th scope="col">${t.state}</th><th scope="col" class="num">${t.source}</th><th scope="col" class="num">${t.destination}</th><th scope="col">${t.created}</th></tr></thead>
<tbody>${lines}</tbody></table>`
}
