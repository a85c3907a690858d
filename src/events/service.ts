import type { Db } from '../db/db.js'
import type { SecretBox } from '../shared/secret-box.js'
import {
  listDeliveries,
  redeliver,
  type DeliveryFilter,
  type DeliveryPage,
  type DeliveryQuery,
  type DeliveryView,
} from './delivery-records.js'
import type { ResolveHost } from './http-deliver.js'
import {
  createWebhook,
  listWebhooks,
  removeWebhook,
  updateWebhook,
  rotateWebhookSecret,
  type WebhookInput,
  type WebhookView,
} from './registration.js'

/**
 * Webhook registration (one per account, src/events/registration.ts) and the record of its
 * deliveries (src/events/delivery-records.ts): a table of those modules' functions over one set of deps.
 */
export interface WebhooksService {
  create(accountId: string, input: WebhookInput): Promise<WebhookView>
  list(accountId: string): Promise<WebhookView[]>
  update(
    accountId: string,
    webhookId: string,
    input: Partial<WebhookInput>,
  ): Promise<WebhookView & { updatedAt: number }>
  /** A new secret, the old one still signing for an overlap the customer chose (issue 32). */
  rotateSecret(
    accountId: string,
    webhookId: string,
    input: { secret: string; overlapS?: number },
  ): Promise<WebhookView & { updatedAt: number; previousSecretUntil: number }>
  remove(accountId: string, webhookId: string): Promise<void>
  /**
   * Deliveries newest first: of one live webhook of the account, or (operators) of all its webhooks;
   * the console also asks for those of one transaction, or of every account (no accountId).
   */
  listDeliveries(filter: DeliveryFilter, query: DeliveryQuery): Promise<DeliveryPage>
  redeliver(
    filter: Pick<DeliveryFilter, 'accountId' | 'webhookId'>,
    deliveryId: string,
  ): Promise<DeliveryView>
}

export interface WebhooksDeps {
  db: Db
  box: SecretBox
  /** `ALLOW_HTTP_WEBHOOKS`: http:// and loopback receivers. */
  allowHttp: boolean
  /** `ALLOW_PRIVATE_WEBHOOKS`: receivers in private ranges. */
  allowPrivate: boolean
  /** Replaces the system resolver (tests). */
  resolveHost?: ResolveHost
  now?: () => number
}

export function createWebhooksService(options: WebhooksDeps): WebhooksService {
  const deps = { ...options, now: options.now ?? Date.now }
  return {
    create: (accountId, input) => createWebhook(deps, accountId, input),
    list: (accountId) => listWebhooks(deps, accountId),
    update: (accountId, webhookId, input) => updateWebhook(deps, accountId, webhookId, input),
    rotateSecret: (accountId, webhookId, input) => rotateWebhookSecret(deps, accountId, webhookId, input),
    remove: (accountId, webhookId) => removeWebhook(deps, accountId, webhookId),
    listDeliveries: (filter, query) => listDeliveries(deps, filter, query),
    redeliver: (filter, deliveryId) => redeliver(deps, filter, deliveryId),
  }
}
