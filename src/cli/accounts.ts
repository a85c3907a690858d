import { CliError, need, type Commands } from './args.js'
import { call, type DataList } from './client.js'

interface NewKey {
  accountId: string
  apiKey: string
  apiSecret: string
}

interface AccountRow {
  id: string
  tier: string
  parentId: string | null
  displayName: string
}

/** Accounts and their API keys. */
export const accountCommands: Commands = {
  async 'account create'({ flags, print }) {
    const tier = flags.tier === undefined ? undefined : need(flags, 'tier')
    const r = await call<NewKey>('POST', '/admin/accounts', {
      name: need(flags, 'name'),
      ...(flags.parent ? { parentId: need(flags, 'parent') } : {}),
      ...(tier ? { tier } : {}),
    })
    const summary = { accountId: r.accountId, apiKey: r.apiKey, apiSecret: r.apiSecret }
    return print(
      summary,
      `accountId:  ${r.accountId}\nAPI key:    ${r.apiKey}\nAPI secret: ${r.apiSecret}  (shown once; keep it)`,
    )
  },

  async 'account list'({ print }) {
    const r = await call<DataList<AccountRow>>('GET', '/admin/accounts')
    return print(
      r.data,
      r.data.map((a) => `${a.id}  ${a.tier.padEnd(8)}  ${a.parentId ?? '-'}  ${a.displayName}`).join('\n') ||
        '(none)',
    )
  },

  async 'account tier'({ rest, print }) {
    const [accountId, tier] = rest
    if (!accountId || !tier) throw new CliError('usage: svcpay account tier ACCOUNT_ID standard|premium')
    const r = await call<{ accountId: string; tier: string }>(
      'PUT',
      `/admin/accounts/${encodeURIComponent(accountId)}/tier`,
      { tier },
    )
    return print(r, `${r.accountId} is now ${r.tier}`)
  },

  async 'key create'({ flags, print }) {
    const r = await call<NewKey>('POST', '/admin/keys', { accountId: need(flags, 'account') })
    return print(
      { accountId: r.accountId, apiKey: r.apiKey, apiSecret: r.apiSecret },
      `API key:    ${r.apiKey}\nAPI secret: ${r.apiSecret}  (shown once; keep it)`,
    )
  },

  async 'key revoke'({ rest, print }) {
    if (!rest[0]) throw new CliError('usage: svcpay key revoke API_KEY')
    const r = await call<{ apiKey: string }>('POST', `/admin/keys/${encodeURIComponent(rest[0])}/revoke`)
    return print(r, `${r.apiKey} revoked`)
  },
}
