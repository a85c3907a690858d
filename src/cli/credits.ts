import { CliError, need, type Commands } from './args.js'
import { call } from './client.js'

interface CreditsPage {
  data: { creditId: string; bookedAt: number; amount: string; status: string; memo: unknown }[]
  total: number
}

/** Bank credits that arrived without a receive to match (VND). */
export const creditCommands: Commands = {
  async 'credits list'({ flags, print }) {
    const status = flags.status === undefined ? 'unassigned' : need(flags, 'status')
    const r = await call<CreditsPage>('GET', `/admin/bank-credits?status=${encodeURIComponent(status)}`)
    return print(
      r,
      r.data
        .map(
          (c) =>
            `${c.creditId}  ${new Date(c.bookedAt).toISOString()}  ${c.amount} VND  ${c.status}  ${JSON.stringify(c.memo)}`,
        )
        .join('\n') + `\n(${r.data.length} of ${r.total} ${status})`,
    )
  },

  async 'credits assign'({ rest, flags, print }) {
    if (!rest[0])
      throw new CliError(
        'usage: svcpay credits assign CREDIT_ID --account ACCOUNT_ID [--txn TXN_ID] --reason TEXT',
      )
    const r = await call<{ creditId: string; amount: string; accountId: string; txnId: string }>(
      'POST',
      `/admin/bank-credits/${encodeURIComponent(rest[0])}/assign`,
      {
        accountId: need(flags, 'account'),
        ...(flags.txn !== undefined ? { txnId: need(flags, 'txn') } : {}),
        reason: need(flags, 'reason'),
      },
    )
    return print(r, `assigned ${r.creditId} (${r.amount} VND) to ${r.accountId}: ${r.txnId}`)
  },
}
