import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { Container } from './container.js'
import type { TrustProxy } from './config/config.js'
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.js'
import { installJson } from './http/json-body.js'
import { refuseNulCharacters } from './http/text-input.js'
import { installRateLimitHeaders } from './http/rate-limit-headers.js'
import { installCors } from './http/cors.js'
import { ErrorBodySchema } from './http/schemas.js'
import { docsServers, finishOpenapi, openapiRefResolver } from './openapi/openapi.js'
import { observabilityRoutes } from './http/observability.js'
import { authRoutes } from './auth/routes.js'
import { accountRoutes, WalletSchema } from './accounts/routes.js'
import { rateRoutes } from './rates/routes.js'
import { adminRoutes } from './admin/routes.js'
// Limits (issue 31): an account's GET /limits and the operator API of tiers, overrides, allow-lists.
import { limitsRoutes } from './limits/routes.js'
import { keysRoutes } from './admin/keys.js'
import { adminAuth } from './operators/admin-auth.js'
import { sandboxFundRoutes } from './sandbox/fund.js'
import { transactionRoutes } from './transactions/routes.js'
import { TransactionSchema } from './transactions/schemas.js'
import { depositRoutes } from './onchain/deposit-routes.js'
import { onchainAdminRoutes } from './onchain/admin-routes.js'
import { approvalRoutes } from './approvals/routes.js'
import { screeningRoutes } from './screening/routes.js'
import { sandboxBitcoinRoutes } from './sandbox/bitcoin-routes.js'
import { bankCreditAdminRoutes, sandboxVndTransferRoutes } from './payins/routes.js'
import { fiatRoutes } from './fiat/routes.js'
// Events: webhooks, their deliveries, and the status stream.
import { webhookAdminRoutes, webhookRoutes } from './events/routes.js'
import { statusStreamRoutes } from './events/stream.js'
import { hasTxn } from './transactions/reads.js'
// The hosted invoice page: public HTML page, its live status stream and its assets.
import { invoicePageRoutes } from './pages/routes.js'
// Lightning Addresses (issue 21): the account's address, and its public LNURL-pay endpoints.
import { lightningAddressRoutes } from './lightning/address/routes.js'
import { lnurlRoutes } from './lightning/address/lnurl-routes.js'
import { lnAddressPageRoutes } from './pages/ln-address-routes.js'
import { bankCreditRoutes, bankNotificationRoutes } from './payouts/partner-routes.js'
import { recordSkippedCredit } from './payouts/vnd/skipped-credits.js'
// Operators (issue 19): the guard of every /admin route, sessions, operators and the audit trail.
import { installAdminGuard } from './operators/guard.js'
import { operatorRoutes } from './operators/routes.js'
import { auditRoutes } from './admin/audit-routes.js'
import { exportRoutes } from './exports/routes.js'
// Reconciliation (issue 18) and its sandbox drift controls.
import { reconciliationRoutes } from './reconcile/routes.js'
import { backupRoutes } from './admin/backup-routes.js'
import { sandboxDriftRoutes } from './reconcile/drift-routes.js'
import { capitalRoutes } from './reconcile/capital-routes.js'
// The operator console (issue 19): server-rendered pages on the same guard.
import { consoleRoutes } from './console/routes.js'

/** Fastify's trustProxy for TRUST_PROXY: the peers whose X-Forwarded-For entry is believed. */
function trustProxyOption(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  return trust
}

/** Builds the HTTP application on a container. `server.ts` listens on it; tests inject into it. */
export async function buildApp(c: Container): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: c.log as unknown as FastifyBaseLogger,
    bodyLimit: c.config.bodyLimitBytes,
    // TRUST_PROXY (docs/configuration.md): a hop count becomes a function, since Fastify's own
    // numeric option trusts no hop at all; a list of addresses is compiled by Fastify.
    trustProxy: trustProxyOption(c.config.trustProxy),
    return503OnClosing: true,
    // Errors raised before a route runs (unparseable URLs, malformed HTTP) keep the contract's body.
    frameworkErrors,
    clientErrorHandler,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true } },
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 200 },
  })
  app.decorate('rateLimiter', c.rateLimiter)
  installJson(app)
  refuseNulCharacters(app)
  installErrorHandling(app)
  // Before the guards and rate limits, so that their refusals reach the browser too (http/cors.ts).
  installCors(app, c.config.corsOrigins)
  installRateLimitHeaders(app)
  app.addSchema(ErrorBodySchema)
  app.addSchema(WalletSchema)
  app.addSchema(TransactionSchema)
  // Before any route: it wraps every /admin route declared after it (src/operators/guard.ts).
  installAdminGuard(app, c)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svcpay — Wallet Service API v2',
        version: '2.0.0',
        description:
          'BTC over Lightning and on-chain, swaps, USDT on TRON and Ethereum and VND bank payouts, signed webhooks. Amounts are JSON numbers written as exact decimals.',
      },
      servers: [{ url: c.config.publicBaseUrl }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    // Shared schemas keep their names; error answers and rate-limit headers are completed (src/openapi/openapi.ts).
    refResolver: openapiRefResolver,
    transformObject: finishOpenapi,
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // "Try it out" calls the address the page was opened from (localhost or 127.0.0.1, or the public
    // one), so it never crosses origins: /docs/json lists that address first (src/openapi/openapi.ts).
    transformSpecification: (spec) => docsServers(spec, c.config.publicBaseUrl),
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  observabilityRoutes(app, { db: c.db, metrics: c.metrics })
  authRoutes(app, c)
  accountRoutes(app, c)
  rateRoutes(app, c)
  // Before the transaction routes: sends on a rail paused by reconciliation are refused.
  transactionRoutes(app, c)
  fiatRoutes(app, c)
  adminRoutes(app, c)
  operatorRoutes(app, {
    operators: c.operators,
    sessionMaxMs: c.operatorsConfig.sessionMaxMs,
    publicBaseUrl: c.config.publicBaseUrl,
  })
  auditRoutes(app, c)
  // Key rotation (issue 32): the master keyring's status and reseal, the token signing keys.
  keysRoutes(app, c)
  exportRoutes(app, c)
  webhookRoutes(app, c)
  webhookAdminRoutes(app, c)
  statusStreamRoutes(app, { ...c, heartbeatMs: c.config.streamHeartbeatMs, hasTxn })
  invoicePageRoutes(app, c)
  lightningAddressRoutes(app, c)
  lnurlRoutes(app, c.lightningAddresses)
  lnAddressPageRoutes(app, c)
  bankNotificationRoutes(app, { db: c.db, verify: c.verifyBankNotification })
  bankCreditRoutes(app, {
    verify: c.bankCredits?.verify,
    sink: c.bankCredits?.sink,
    recordSkip: (item) => recordSkippedCredit(c.db, item, 'notification', Date.now()),
  })
  if (c.config.rails === 'sandbox') sandboxFundRoutes(app, { ...c, adminPreHandler: adminAuth(c.adminToken) })
  // Bitcoin: the static deposit address, and the sandbox networks' controls.
  depositRoutes(app, c)
  onchainAdminRoutes(app, c)
  approvalRoutes(app, c)
  limitsRoutes(app, c)
  screeningRoutes(app, c)
  if (c.config.rails === 'sandbox')
    sandboxBitcoinRoutes(app, { ...c, adminPreHandler: adminAuth(c.adminToken) })
  // VND pay-in: credits in suspense and their assignment; the sandbox bank's incoming transfer.
  bankCreditAdminRoutes(app, c)
  if (c.config.vnd === 'sandbox')
    sandboxVndTransferRoutes(app, { ...c, adminPreHandler: adminAuth(c.adminToken) })
  reconciliationRoutes(app, { ...c, adminPreHandler: adminAuth(c.adminToken) })
  // Backup of the embedded engine and recovery after a restore (docs/operations.md).
  backupRoutes(app, {
    db: c.db,
    dataDir: c.config.dataDir,
    recovery: {
      reconcile: () => c.reconcile(),
      tron: c.recoveryRails.tron,
      transactions: () => c.transactions,
      now: Date.now,
      log: c.log,
    },
    adminPreHandler: adminAuth(c.adminToken),
  })
  capitalRoutes(app, {
    db: c.db,
    railCurrencies: c.kinds.railCurrencies,
    adminPreHandler: adminAuth(c.adminToken),
  })
  if (c.config.rails === 'sandbox')
    sandboxDriftRoutes(app, {
      db: c.db,
      railCurrencies: c.kinds.railCurrencies,
      lightning: c.bitcoin.rails.sandbox.lightning,
      adminPreHandler: adminAuth(c.adminToken),
    })
  await consoleRoutes(app, c)
  return app
}
