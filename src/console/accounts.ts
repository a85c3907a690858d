import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { paramsOf } from '../http/request-fields.js'
import type { ConsoleDeps } from './deps.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import { roleAllows } from '../operators/permissions.js'
import { ApiError } from '../shared/errors.js'
import { sql } from '../db/sql.js'
import { listTransactions } from '../transactions/list.js'
import { searchAccounts, subAccountsOf } from '../accounts/reads.js'
import { accountIdsWithExtRef } from '../transactions/reads.js'
import { csrfField } from './csrf.js'
import { money, when } from './format.js'
import { CONSOLE_BASE } from './nav.js'
import { consolePage, type ConsoleContext } from './page.js'
import type { Localized } from './strings.js'
import { txnTable } from './txn-table.js'
import { asAccountId } from '../shared/ids.js'
import { accountLimitsSection } from './account-limits.js'

/**
 * Accounts: a search by id, name, extRefId of one of its transactions, or the start of one of its
 * API keys; and an account's page with its wallets, sub-accounts, keys, tier and recent
 * transactions. The forms that change keys and tier post to account-actions.ts.
 */
const SEARCH_MIN = 3
const SEARCH_MAX = 140
const RESULTS_MAX = 50
const RECENT = 20

export const ACCOUNT_TEXT: Localized<{
  search: string
  searchHint: string
  find: string
  tooShort: string
  results: string
  none: string
  id: string
  name: string
  tier: string
  parent: string
  created: string
  wallets: string
  ccy: string
  posted: string
  pending: string
  available: string
  subAccounts: string
  noSubAccounts: string
  keys: string
  noKeys: string
  key: string
  status: string
  active: string
  revoked: string
  revoke: string
  revokeKey: string
  createKey: string
  changeTier: string
  setTier: string
  recent: string
  allTransactions: string
  standard: string
  premium: string
}> = {
  en: {
    search: 'Find an account',
    searchHint:
      'An account id, part of its name, the extRefId of one of its transactions, or the start of an API key.',
    find: 'Search',
    tooShort: 'Type at least 3 characters.',
    results: 'Accounts found',
    none: 'No account matches.',
    id: 'Id',
    name: 'Name',
    tier: 'Tier',
    parent: 'Parent account',
    created: 'Created',
    wallets: 'Wallets',
    ccy: 'Currency',
    posted: 'Posted',
    pending: 'Held',
    available: 'Available',
    subAccounts: 'Sub-accounts',
    noSubAccounts: 'No sub-accounts.',
    keys: 'API keys',
    noKeys: 'No API keys.',
    key: 'Key',
    status: 'Status',
    active: 'active',
    revoked: 'revoked {at}',
    revoke: 'Revoke',
    revokeKey: 'Revoke key {key}',
    createKey: 'Create a new API key',
    changeTier: 'Change tier',
    setTier: 'Set tier',
    recent: 'Recent transactions',
    allTransactions: 'All transactions of this account',
    standard: 'standard',
    premium: 'premium',
  },
  vi: {
    search: 'Tìm tài khoản',
    searchHint: 'Mã tài khoản, một phần tên, extRefId của một giao dịch, hoặc phần đầu của một khóa API.',
    find: 'Tìm',
    tooShort: 'Hãy nhập ít nhất 3 ký tự.',
    results: 'Tài khoản tìm thấy',
    none: 'Không có tài khoản nào khớp.',
    id: 'Mã',
    name: 'Tên',
    tier: 'Hạng',
    parent: 'Tài khoản cha',
    created: 'Tạo lúc',
    wallets: 'Ví',
    ccy: 'Loại tiền',
    posted: 'Đã ghi sổ',
    pending: 'Đang giữ',
    available: 'Khả dụng',
    subAccounts: 'Tài khoản con',
    noSubAccounts: 'Không có tài khoản con.',
    keys: 'Khóa API',
    noKeys: 'Không có khóa API.',
    key: 'Khóa',
    status: 'Trạng thái',
    active: 'đang dùng',
    revoked: 'đã thu hồi {at}',
    revoke: 'Thu hồi',
    revokeKey: 'Thu hồi khóa {key}',
    createKey: 'Tạo khóa API mới',
    changeTier: 'Đổi hạng',
    setTier: 'Đặt hạng',
    recent: 'Giao dịch gần đây',
    allTransactions: 'Mọi giao dịch của tài khoản này',
    standard: 'tiêu chuẩn',
    premium: 'cao cấp',
  },
}

/** LIKE's wildcards taken literally. */
const likeText = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/** The account of a console path: any text, since a page answers an unknown one with its 404. */
export const AccountParams = Type.Object({ accountId: Type.String() })

export function accountPages(app: FastifyInstance, c: ConsoleDeps): void {
  consolePage(app, `${CONSOLE_BASE}/accounts`, 'accounts', async (ctx) => {
    const t = ACCOUNT_TEXT[ctx.lang]
    const raw = ctx.query.q
    const q = typeof raw === 'string' ? raw.trim().slice(0, SEARCH_MAX) : ''
    let results: SafeHtml | string = ''
    if (q !== '' && q.length < SEARCH_MIN)
      results = markup`<p class="notice warn" role="status">${t.tooShort}</p>`
    else if (q !== '') {
      const rows = await searchAccounts(
        c.db,
        {
          text: q,
          namePattern: `%${likeText(q)}%`,
          keyPrefix: `${likeText(q)}%`,
          alsoIds: accountIdsWithExtRef,
        },
        RESULTS_MAX,
      )
      results =
        rows.length === 0
          ? markup`<p class="muted" role="status" data-testid="no-accounts">${t.none}</p>`
          : markup`<table data-testid="accounts"><caption>${t.results}</caption>
<thead><tr><th scope="col">${t.id}</th><th scope="col">${t.name}</th><th scope="col">${t.tier}</th><th scope="col">${t.parent}</th><th scope="col">${t.created}</th></tr></thead>
<tbody>${rows.map(
              (
                r,
              ) => markup`<tr><td><a class="mono" href="${CONSOLE_BASE}/accounts/${r.id}">${r.id}</a></td><td>${r.display_name}</td>
<td>${tierName(r.tier, t)}</td><td>${r.parent_id ? markup`<a class="mono" href="${CONSOLE_BASE}/accounts/${r.parent_id}">${r.parent_id}</a>` : '—'}</td>
<td>${when(Number(r.created_at))}</td></tr>`,
            )}</tbody></table>`
    }
    return {
      title: ctx.t.navAccounts,
      body: markup`<form class="filters" method="get" action="${CONSOLE_BASE}/accounts" role="search">
<div><label for="q">${t.search}</label><input id="q" name="q" type="search" value="${q}" maxlength="${SEARCH_MAX}" aria-describedby="q-hint">
<p class="hint" id="q-hint">${t.searchHint}</p></div>
<div><button type="submit">${t.find}</button></div></form>${results}`,
    }
  })

  consolePage(app, `${CONSOLE_BASE}/accounts/:accountId`, 'accounts', async (ctx) => {
    const { accountId } = paramsOf(ctx.request, AccountParams)
    const account = accountId.length <= 64 ? await c.accounts.get(accountId) : undefined
    if (!account) throw new ApiError('not_found', 'Account not found')
    return { title: `${account.displayName}`, body: await accountBody(c, ctx, account.id) }
  })
}

function tierName(tier: string, t: (typeof ACCOUNT_TEXT)['en']): string {
  return tier === 'premium' ? t.premium : t.standard
}

async function accountBody(c: ConsoleDeps, ctx: ConsoleContext, accountId: string): Promise<SafeHtml> {
  const t = ACCOUNT_TEXT[ctx.lang]
  const lang = ctx.lang
  const [account, wallets, subs, keys, recent, limits] = await Promise.all([
    c.accounts.get(accountId),
    c.accounts.wallets(asAccountId(accountId)),
    subAccountsOf(c.db, accountId, 200).then((rows) => ({ rows })),
    c.db.query<{ id: string; created_at: string; revoked_at: string | null }>(
      sql`SELECT id, created_at, revoked_at FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at DESC, id LIMIT 200`,
    ),
    listTransactions(c.db, accountId, { time: '1y', limit: String(RECENT) }, Date.now()),
    accountLimitsSection(c, accountId, ctx.lang),
  ])
  const a = account!
  const csrf = ctx.operator.csrfToken ? csrfField(ctx.operator.csrfToken) : ''
  const may = (p: 'keys.write' | 'accounts.tier') => roleAllows(ctx.operator.role, p)
  const base = `${CONSOLE_BASE}/accounts/${a.id}`
  const tierForm = may('accounts.tier')
    ? markup`<form class="filters" method="post" action="${base}/tier">${csrf}
<div><label for="tier">${t.changeTier}</label><select id="tier" name="tier">
${(['standard', 'premium'] as const).map((x) => markup`<option value="${x}"${x === a.tier ? markup` selected` : ''}>${tierName(x, t)}</option>`)}
</select></div><div><button type="submit">${t.setTier}</button></div></form>`
    : ''
  const walletRows = wallets.map(
    (w) => markup`<tr><td>${w.ccy}</td><td class="num">${money(w.postedMinor, w.ccy, lang)}</td>
<td class="num">${money(w.pendingMinor, w.ccy, lang)}</td><td class="num">${money(w.postedMinor - w.pendingMinor, w.ccy, lang)}</td></tr>`,
  )
  const keyRows = keys.rows.map((k) => {
    const revoke =
      k.revoked_at === null && may('keys.write')
        ? markup`<form class="inline" method="post" action="${base}/keys/${k.id}/revoke">${csrf}<button type="submit" class="secondary" aria-label="${t.revokeKey.replace('{key}', k.id)}">${t.revoke}</button></form>`
        : ''
    const status = k.revoked_at === null ? t.active : t.revoked.replace('{at}', when(Number(k.revoked_at)))
    return markup`<tr><td class="mono">${k.id}</td><td>${when(Number(k.created_at))}</td><td>${status}</td><td>${revoke}</td></tr>`
  })
  const createKey = may('keys.write')
    ? markup`<form method="post" action="${base}/keys">${csrf}<button type="submit">${t.createKey}</button></form>`
    : ''
  return markup`<dl class="facts" data-testid="account-facts"><dt>${t.id}</dt><dd class="mono">${a.id}</dd>
<dt>${t.tier}</dt><dd>${tierName(a.tier, t)}</dd>
<dt>${t.parent}</dt><dd>${a.parentId ? markup`<a class="mono" href="${CONSOLE_BASE}/accounts/${a.parentId}">${a.parentId}</a>` : '—'}</dd>
<dt>${t.created}</dt><dd>${when(a.createdAt)}</dd></dl>
${tierForm}
<h2 id="h-wallets">${t.wallets}</h2>
<table aria-labelledby="h-wallets" data-testid="wallets"><thead><tr><th scope="col">${t.ccy}</th><th scope="col" class="num">${t.posted}</th><th scope="col" class="num">${t.pending}</th><th scope="col" class="num">${t.available}</th></tr></thead>
<tbody>${walletRows}</tbody></table>
<h2 id="h-subs">${t.subAccounts}</h2>
${
  subs.rows.length === 0
    ? markup`<p class="muted">${t.noSubAccounts}</p>`
    : markup`<ul>${subs.rows.map((s) => markup`<li><a href="${CONSOLE_BASE}/accounts/${s.id}">${s.display_name}</a> <span class="mono muted">${s.id}</span></li>`)}</ul>`
}
<h2 id="h-keys">${t.keys}</h2>
${
  keys.rows.length === 0
    ? markup`<p class="muted">${t.noKeys}</p>`
    : markup`<table aria-labelledby="h-keys" data-testid="keys"><thead><tr><th scope="col">${t.key}</th><th scope="col">${t.created}</th><th scope="col">${t.status}</th><td></td></tr></thead>
<tbody>${keyRows}</tbody></table>`
}
${createKey}
${limits}
<h2 id="h-recent">${t.recent}</h2>
${txnTable(recent.rows, lang, { caption: t.recent })}
<p><a href="${CONSOLE_BASE}/transactions?accountId=${a.id}">${t.allTransactions}</a></p>`
}
