import type { FastifyInstance } from 'fastify'
import { asTxnId } from '../shared/ids.js'
import { Type } from 'typebox'
import { paramsOf } from '../http/request-fields.js'
import type { ConsoleDeps } from './deps.js'
import { markup } from '../pages/escape.js'
import { isDeliveryOfTxn } from '../events/reads.js'
import { ApiError } from '../shared/errors.js'
import { accountIdsOf } from '../transactions/reads.js'
import { CONSOLE_BASE } from './nav.js'
import { consoleAction } from './page.js'
import type { Localized } from './strings.js'

/**
 * Redelivering a transaction's webhook from its page: the webhooks service's redeliver (as
 * `POST /admin/webhook/deliveries/:deliveryId/redeliver`), audited as `webhook.redeliver` in the
 * same transaction. The delivery must be one of this transaction's.
 */
const TEXT: Localized<{ queued: string; back: string }> = {
  en: { queued: 'The event is queued again as delivery #{id}.', back: 'Back to the transaction' },
  vi: { queued: 'Sự kiện đã được xếp hàng gửi lại thành lần gửi #{id}.', back: 'Quay lại giao dịch' },
}

const DeliveryParams = Type.Object({ txnId: Type.String(), deliveryId: Type.String() })

export function transactionActions(app: FastifyInstance, c: ConsoleDeps): void {
  consoleAction(
    app,
    `${CONSOLE_BASE}/transactions/:txnId/deliveries/:deliveryId/redeliver`,
    'transactions',
    async (ctx) => {
      const { txnId, deliveryId } = paramsOf(ctx.request, DeliveryParams)
      if (!/^[1-9][0-9]{0,17}$/.test(deliveryId)) throw new ApiError('not_found', 'Delivery not found')
      // The transaction's account, and whether the delivery is one of its events': both must hold.
      const accountId = (await accountIdsOf(c.db, [asTxnId(txnId)])).get(asTxnId(txnId))
      if (!accountId || !(await isDeliveryOfTxn(c.db, deliveryId, txnId)))
        throw new ApiError('not_found', 'This transaction has no such delivery')
      const created = await c.webhooks.redeliver({ accountId }, deliveryId)
      const t = TEXT[ctx.lang]
      const text = t.queued.replace('{id}', created.id)
      return {
        title: text,
        body: markup`<p class="notice good" role="status">${text}</p><p><a href="${CONSOLE_BASE}/transactions/${txnId}">${t.back}</a></p>`,
        audit: {
          target: `deliveryId=${deliveryId}`,
          after: { txnId, deliveryId, newDeliveryId: created.id },
        },
      }
    },
  )
}
