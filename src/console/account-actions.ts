import { sql } from '../db/sql.js'
import { lockAccount } from '../accounts/reads.js'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { paramsOf } from '../http/request-fields.js'
import type { Tier } from '../accounts/service.js'
import type { ConsoleDeps } from './deps.js'
import { markup } from '../pages/escape.js'
import { ApiError } from '../shared/errors.js'
import { CONSOLE_BASE } from './nav.js'
import { AccountParams } from './accounts.js'
import { consoleAction, field, type ConsoleContext } from './page.js'
import type { Localized } from './strings.js'

/**
 * The account page's changes: issue an API key, revoke one, set the tier. Each calls the service
 * the operator API's route calls (src/admin/routes.ts), inside the guard's transaction that ends
 * with the audit row (key.create, key.revoke, account.tier). A new key's secret is shown on the
 * answer page once and never reaches the audit trail.
 */
const TEXT: Localized<{
  keyCreated: string
  secretOnce: string
  apiKey: string
  apiSecret: string
  keyRevoked: string
  tierSet: string
  back: string
}> = {
  en: {
    keyCreated: 'API key created',
    secretOnce:
      'Copy the secret now and hand it to the account holder over a safe channel. It is shown this once and cannot be read again.',
    apiKey: 'API key',
    apiSecret: 'API secret',
    keyRevoked: 'The key {key} is revoked. Tokens made with it stop working within seconds.',
    tierSet: 'The tier is now {tier}.',
    back: 'Back to the account',
  },
  vi: {
    keyCreated: 'Đã tạo khóa API',
    secretOnce:
      'Hãy sao chép khóa bí mật ngay và chuyển cho chủ tài khoản qua kênh an toàn. Nó chỉ hiện một lần và không thể xem lại.',
    apiKey: 'Khóa API',
    apiSecret: 'Khóa bí mật API',
    keyRevoked: 'Khóa {key} đã bị thu hồi. Các token tạo bằng khóa này ngừng hoạt động trong vài giây.',
    tierSet: 'Hạng hiện là {tier}.',
    back: 'Quay lại tài khoản',
  },
}

const KeyParams = Type.Object({ apiKey: Type.String() })

export function accountActions(app: FastifyInstance, c: ConsoleDeps): void {
  const base = `${CONSOLE_BASE}/accounts/:accountId`
  const accountOf = async (ctx: ConsoleContext) => {
    const { accountId } = paramsOf(ctx.request, AccountParams)
    if (accountId.length > 64 || !(await c.accounts.get(accountId)))
      throw new ApiError('not_found', 'Account not found')
    return accountId
  }
  const backLink = (accountId: string, text: string) =>
    markup`<p><a href="${CONSOLE_BASE}/accounts/${accountId}">${text}</a></p>`

  consoleAction(app, `${base}/keys`, 'accounts', async (ctx) => {
    const accountId = await accountOf(ctx)
    const t = TEXT[ctx.lang]
    const key = await c.auth.createKey(accountId)
    return {
      title: t.keyCreated,
      body: markup`<p class="notice warn" role="status">${t.secretOnce}</p>
<dl class="facts" data-testid="new-key"><dt>${t.apiKey}</dt><dd class="mono">${key.apiKey}</dd>
<dt>${t.apiSecret}</dt><dd class="mono">${key.apiSecret}</dd></dl>${backLink(accountId, t.back)}`,
      audit: { target: `accountId=${accountId}`, after: { accountId, apiKey: key.apiKey } },
    }
  })

  consoleAction(app, `${base}/keys/:apiKey/revoke`, 'accounts', async (ctx) => {
    const accountId = await accountOf(ctx)
    const { apiKey } = paramsOf(ctx.request, KeyParams)
    // Read in the guard's transaction, locked, for the audit row's `before`.
    const { rows } = await c.db.query<{ revoked_at: string | null }>(
      sql`SELECT revoked_at FROM api_keys WHERE id = ${apiKey} AND account_id = ${accountId} FOR UPDATE`,
    )
    if (!rows[0] || !(await c.auth.revokeKey(apiKey)))
      throw new ApiError('not_found', 'This account has no such active key')
    const t = TEXT[ctx.lang]
    return {
      title: t.keyRevoked.replace('{key}', apiKey),
      body: markup`<p class="notice good" role="status">${t.keyRevoked.replace('{key}', apiKey)}</p>${backLink(accountId, t.back)}`,
      audit: {
        target: `apiKey=${apiKey}`,
        before: { accountId, revokedAt: null },
        after: { accountId, revoked: true },
      },
    }
  })

  consoleAction(app, `${base}/tier`, 'accounts', async (ctx, body) => {
    const accountId = await accountOf(ctx)
    const tier = field(body, 'tier', 16)
    if (tier !== 'standard' && tier !== 'premium')
      throw new ApiError('invalid_request', 'tier: standard or premium')
    const before = await lockAccount(c.db, accountId)
    await c.accounts.setTier(accountId, tier as Tier)
    const t = TEXT[ctx.lang]
    return {
      title: t.tierSet.replace('{tier}', tier),
      body: markup`<p class="notice good" role="status">${t.tierSet.replace('{tier}', tier)}</p>${backLink(accountId, t.back)}`,
      audit: { target: `accountId=${accountId}`, before: { tier: before?.tier ?? null }, after: { tier } },
    }
  })
}
