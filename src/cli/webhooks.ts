import { CliError, need, type Commands } from './args.js'
import { call, type DataList } from './client.js'

interface DeliveryRow {
  id: string
  status: string
  attempts: number
  txnState: string
  txnId: string
}

/** Webhook deliveries: what was sent to an account, and a delivery sent again. */
export const webhookCommands: Commands = {
  async 'webhook deliveries'({ flags, print }) {
    const r = await call<DataList<DeliveryRow>>(
      'GET',
      `/admin/webhook/deliveries?accountId=${encodeURIComponent(need(flags, 'account'))}`,
    )
    return print(
      r.data,
      r.data
        .map((d) => `${d.id}  ${d.status.padEnd(9)}  attempts=${d.attempts}  ${d.txnState}  ${d.txnId}`)
        .join('\n') || '(none)',
    )
  },

  async 'webhook redeliver'({ rest, print }) {
    if (!rest[0]) throw new CliError('usage: svcpay webhook redeliver DELIVERY_ID')
    const r = await call<{ data?: { id: string } }>(
      'POST',
      `/admin/webhook/deliveries/${encodeURIComponent(rest[0])}/redeliver`,
    )
    return print(r, `queued delivery ${r.data?.id ?? rest[0]}`)
  },
}
