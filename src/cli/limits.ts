import { CliError, need, type Commands } from './args.js'
import { call } from './client.js'

interface LimitsView {
  accountId: string
  tier: string
  ccy: string
  allowListOnly: boolean
  limits: Array<{ limit: string; method: string | null; amount: string; used?: string; remaining?: string }>
  overrides: Array<{
    limit: string
    method: string | null
    amount: string
    reason: string
    expiresAt: number | null
  }>
  allowList: Array<{ destination: string; reason: string }>
}

const path = (accountId: string, tail = '') =>
  `/admin/accounts/${encodeURIComponent(accountId)}/limits${tail}`

/** An account's limits (docs/limits.md): tier, overrides and allow-list, each change audited. */
export const limitCommands: Commands = {
  async 'limits show'({ rest, print }) {
    if (!rest[0]) throw new CliError('usage: svcpay limits show ACCOUNT_ID')
    const r = await call<LimitsView>('GET', path(rest[0]))
    const lines = [
      `${r.accountId}  tier ${r.tier}  in ${r.ccy}${r.allowListOnly ? '  allow-list only' : ''}`,
      ...r.limits.map(
        (l) =>
          `  ${l.limit}${l.method ? ` (${l.method})` : ''}: ${l.amount}${l.used !== undefined ? `  used ${l.used}  remaining ${l.remaining}` : ''}`,
      ),
      ...r.overrides.map(
        (o) =>
          `  override ${o.limit}${o.method ? ` (${o.method})` : ''} = ${o.amount}: ${o.reason}${o.expiresAt ? ` until ${new Date(o.expiresAt).toISOString()}` : ''}`,
      ),
      ...r.allowList.map((d) => `  allowed ${d.destination}: ${d.reason}`),
    ]
    return print(r, lines.join('\n'))
  },

  async 'limits set'({ rest, flags, print }) {
    if (!rest[0])
      throw new CliError(
        'usage: svcpay limits set ACCOUNT_ID [--tier NAME|none] [--allow-list-only true|false] --reason TEXT',
      )
    const body: Record<string, unknown> = { reason: need(flags, 'reason') }
    if (flags.tier !== undefined) body.tier = need(flags, 'tier') === 'none' ? null : need(flags, 'tier')
    if (flags['allow-list-only'] !== undefined) body.allowListOnly = need(flags, 'allow-list-only') === 'true'
    const r = await call<Record<string, unknown>>('PUT', path(rest[0]), body)
    return print(r, JSON.stringify(r))
  },

  async 'limits override'({ rest, flags, print }) {
    const [accountId, limit, amount] = rest
    if (!accountId || !limit || !amount)
      throw new CliError(
        'usage: svcpay limits override ACCOUNT_ID LIMIT AMOUNT [--method M] [--expires ISO_DATE] --reason TEXT',
      )
    const expires = flags.expires === undefined ? undefined : Date.parse(need(flags, 'expires'))
    if (expires !== undefined && !Number.isFinite(expires)) throw new CliError('--expires: an ISO date')
    const r = await call<Record<string, unknown>>('PUT', path(accountId, '/overrides'), {
      limit,
      amount,
      reason: need(flags, 'reason'),
      ...(flags.method ? { method: need(flags, 'method') } : {}),
      ...(expires !== undefined ? { expiresAt: expires } : {}),
    })
    return print(r, JSON.stringify(r))
  },

  async 'limits unoverride'({ rest, flags, print }) {
    const [accountId, limit] = rest
    if (!accountId || !limit)
      throw new CliError('usage: svcpay limits unoverride ACCOUNT_ID LIMIT [--method M] --reason TEXT')
    const r = await call<Record<string, unknown>>('DELETE', path(accountId, '/overrides'), {
      limit,
      reason: need(flags, 'reason'),
      ...(flags.method ? { method: need(flags, 'method') } : {}),
    })
    return print(r, JSON.stringify(r))
  },

  async 'limits allow'({ rest, flags, print }) {
    const [accountId, destination] = rest
    if (!accountId || !destination)
      throw new CliError('usage: svcpay limits allow ACCOUNT_ID DESTINATION --reason TEXT')
    const r = await call<Record<string, unknown>>('POST', path(accountId, '/allow-list'), {
      destination,
      reason: need(flags, 'reason'),
    })
    return print(r, JSON.stringify(r))
  },

  async 'limits disallow'({ rest, flags, print }) {
    const [accountId, destination] = rest
    if (!accountId || !destination)
      throw new CliError('usage: svcpay limits disallow ACCOUNT_ID DESTINATION --reason TEXT')
    const r = await call<Record<string, unknown>>('DELETE', path(accountId, '/allow-list'), {
      destination,
      reason: need(flags, 'reason'),
    })
    return print(r, JSON.stringify(r))
  },
}
