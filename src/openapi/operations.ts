/**
 * What client generators and linters read from each operation of /openapi.json: a stable
 * `operationId` (generators name their methods after it; it is the SDK's method name, so a generated
 * client and @svcpay/sdk say the same thing), and a security requirement on every operation, empty
 * on the few that need no token. Applied by finishOpenapi (openapi.ts); a route that declares its own
 * `operationId` or `security` keeps it.
 *
 * The ids are part of the API: renaming one renames a method in every generated client. Add one for
 * each new operation (test/openapi-tools.test.ts fails without it).
 */

import { describeParameters } from './parameters.js'

type Json = Record<string, any>

/** `METHOD /path` (as the document writes the path) -> operationId. */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'POST /api/v2/authentication/token-signature': 'authenticate',
  'GET /api/v2/account/onchain-address': 'getOnchainAddress',
  'GET /api/v2/account/{accountId}': 'getAccount',
  'GET /api/v2/account/{accountId}/limits': 'getAccountLimits',
  'GET /api/v2/account/{accountId}/wallet/': 'listWallets',
  'GET /api/v2/account/{accountId}/wallet/{walletId}': 'getWallet',
  'PUT /api/v2/account/{accountId}/lightning-address': 'setLightningAddress',
  'GET /api/v2/account/{accountId}/lightning-address': 'getLightningAddress',
  'DELETE /api/v2/account/{accountId}/lightning-address': 'deleteLightningAddress',
  'GET /api/v2/rate': 'getRates',
  'POST /api/v2/transaction': 'createTransaction',
  'GET /api/v2/transaction': 'listTransactions',
  'GET /api/v2/transaction/{txnId}': 'getTransaction',
  'PUT /api/v2/transaction/{txnId}/confirm': 'confirmTransaction',
  'PUT /api/v2/transaction/{txnId}/cancel': 'cancelTransaction',
  'GET /api/v2/transaction/{txnId}/events': 'streamTransaction',
  'POST /api/v2/webhook': 'createWebhook',
  'GET /api/v2/webhook': 'listWebhooks',
  'PUT /api/v2/webhook/{webhookId}': 'updateWebhook',
  'DELETE /api/v2/webhook/{webhookId}': 'deleteWebhook',
  // Key rotation (issue 32): the customer's webhook secret, with an overlap.
  'POST /api/v2/webhook/{webhookId}/rotate-secret': 'rotateWebhookSecret',
  'GET /api/v2/webhook/{webhookId}/deliveries': 'listWebhookDeliveries',
  'POST /api/v2/webhook/{webhookId}/deliveries/{deliveryId}/redeliver': 'redeliverWebhookDelivery',
  'GET /api/v2/fiat/institutions': 'listInstitutions',
  'GET /api/v2/fiat/source-of-funds-codes': 'getSourceOfFundsCodes',
  'GET /api/v2/fiat/account-name': 'getAccountName',
  'POST /sandbox/fund': 'sandboxFund',
  'POST /sandbox/lightning/pay': 'sandboxPayInvoice',
  'POST /sandbox/lightning/invoice': 'sandboxCreateInvoice',
  'POST /sandbox/onchain/send': 'sandboxSendOnchain',
  'POST /sandbox/onchain/mine': 'sandboxMine',
  'POST /partners/bank/notifications': 'bankPartnerNotification',
  'POST /partners/bank/credits': 'bankPartnerCredit',
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /metrics': 'getMetrics',
}

/**
 * Operations that take no bearer token, declared with an empty security requirement (`security:
 * []`, "none needed") so that generators send none: the token exchange (its request is signed with
 * the API secret instead, in the body), the bank partner's signed notifications and the operational
 * endpoints.
 */
export const PUBLIC_OPERATIONS: ReadonlySet<string> = new Set([
  'POST /api/v2/authentication/token-signature',
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'POST /partners/bank/notifications',
  'POST /partners/bank/credits',
])

/** The specification writes the wallet list with a trailing slash; the document keeps it, on purpose. */
const TRAILING_SLASH_NOTE =
  'The path ends with a slash because the specification writes it so; the same path without it answers the same.'

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'])

/** Adds the operationIds, the empty security of the public operations, the license and the notes. */
export function describeOperations(openapiObject: Json): void {
  openapiObject.info ??= {}
  openapiObject.info.license ??= { name: 'MIT', identifier: 'MIT' }
  for (const [path, item] of Object.entries(openapiObject.paths ?? {}) as [string, Json][]) {
    for (const [method, op] of Object.entries(item) as [string, Json][]) {
      if (!HTTP_METHODS.has(method)) continue
      const key = `${method.toUpperCase()} ${path}`
      const id = OPERATION_IDS[key]
      if (id) op.operationId ??= id
      if (PUBLIC_OPERATIONS.has(key)) op.security ??= []
      describeParameters(key, op)
      if (path.endsWith('/') && path !== '/') {
        op['x-svcpay-trailing-slash'] = 'intended'
        if (!op.description?.includes(TRAILING_SLASH_NOTE))
          op.description = op.description
            ? `${op.description}\n\n${TRAILING_SLASH_NOTE}`
            : TRAILING_SLASH_NOTE
      }
    }
  }
}
