import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SvcpayClient } from '@svcpay/sdk'
import { createHarness, type Harness } from '../../../test/helpers/harness.js'

/** The SDK method of each operation of the API reference. */
const METHODS: Record<string, string> = {
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
  'POST /api/v2/webhook/{webhookId}/rotate-secret': 'rotateWebhookSecret',
  'GET /api/v2/webhook/{webhookId}/deliveries': 'listWebhookDeliveries',
  'POST /api/v2/webhook/{webhookId}/deliveries/{deliveryId}/redeliver': 'redeliverWebhookDelivery',
  'GET /api/v2/fiat/institutions': 'listInstitutions',
  'GET /api/v2/fiat/source-of-funds-codes': 'getSourceOfFundsCodes',
  'GET /api/v2/fiat/account-name': 'getAccountName',
  'POST /sandbox/fund': 'sandbox.fund',
  'POST /sandbox/lightning/pay': 'sandbox.payInvoice',
  'POST /sandbox/lightning/invoice': 'sandbox.createInvoice',
  'POST /sandbox/onchain/send': 'sandbox.sendOnchain',
  'POST /sandbox/onchain/mine': 'sandbox.mine',
}

describe('the SDK covers the API', () => {
  let h: Harness
  let operations: string[]
  let operationIds: Record<string, string>
  beforeAll(async () => {
    h = await createHarness()
    const doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/openapi.json' })).body)
    operations = Object.entries(doc.paths as Record<string, Record<string, { tags: string[] }>>).flatMap(
      ([path, item]) =>
        Object.entries(item)
          .filter(([, op]) => !op.tags.includes('Operations') && !op.tags.includes('Bank partner'))
          .map(([method]) => `${method.toUpperCase()} ${path}`),
    )
    operationIds = Object.fromEntries(
      Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
        ([path, item]) =>
          Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op.operationId]),
      ),
    )
  })
  afterAll(() => h.close())

  it('has one method for every documented operation', () => {
    expect(operations.sort()).toEqual(Object.keys(METHODS).sort())
    const client = new SvcpayClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' }) as any
    for (const [op, name] of Object.entries(METHODS)) {
      const fn = name.split('.').reduce((o, part) => o?.[part], client)
      expect(typeof fn, `${op} -> ${name}`).toBe('function')
    }
  })

  it('names each operation of the OpenAPI document after its SDK method (sandbox.fund -> sandboxFund)', () => {
    for (const [op, name] of Object.entries(METHODS)) {
      const id = name.replace(/\.(\w)/, (_, c: string) => c.toUpperCase())
      expect(operationIds[op], op).toBe(id)
    }
  })
})
