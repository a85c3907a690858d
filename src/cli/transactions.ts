import { need, type Commands } from './args.js'
import { call } from './client.js'

interface StuckPage {
  data: {
    txnId: string
    rail: string
    state: string
    reason: string
    since: number | null
    failures: number
    lastError: string | null
    nextRetryAt: number | null
  }[]
  pagination: { total: number }
}

/** Transactions an operator looks after. */
export const transactionCommands: Commands = {
  async 'transactions stuck'({ flags, print }) {
    const query = new URLSearchParams()
    if (flags.page !== undefined) query.set('page', need(flags, 'page'))
    if (flags.limit !== undefined) query.set('limit', need(flags, 'limit'))
    const r = await call<StuckPage>('GET', `/admin/transactions/stuck${query.size ? `?${query}` : ''}`)
    const when = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString())
    return print(
      r,
      r.data
        .map(
          (t) =>
            `${t.txnId}  ${t.rail.padEnd(9)}  ${t.state.padEnd(10)}  ${t.reason.padEnd(12)}  since ${when(t.since)}  ` +
            `failures=${t.failures} lastError=${t.lastError ?? '-'} next=${when(t.nextRetryAt)}`,
        )
        .join('\n') + `\n(${r.data.length} of ${r.pagination.total} stuck)`,
    )
  },
}
