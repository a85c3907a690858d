import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { Container } from './container.js'
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.js'
import { installJson } from './http/json-body.js'
import { refuseNulCharacters } from './http/text-input.js'
import { ErrorBodySchema } from './http/schemas.js'
import { finishOpenapi, openapiRefResolver } from './http/openapi.js'
import { observabilityRoutes } from './http/observability.js'
import { authRoutes } from './auth/routes.js'
import { accountRoutes, WalletSchema } from './accounts/routes.js'
import { rateRoutes } from './rates/routes.js'
import { adminAuth, adminRoutes } from './admin/routes.js'
import { sandboxFundRoutes } from './sandbox/fund.js'
import { transactionRoutes } from './transactions/routes.js'
import { TransactionSchema } from './transactions/schemas.js'
import { depositRoutes } from './transactions/deposit-routes.js'
import { sandboxBitcoinRoutes } from './sandbox/bitcoin-routes.js'
import { fiatRoutes } from './fiat/routes.js'
// Events: webhooks, their deliveries, and the status stream.
import { webhookAdminRoutes, webhookRoutes } from './events/routes.js'
import { statusStreamRoutes } from './events/stream.js'
// The hosted invoice page: public HTML page, its live status stream and its assets.
import { invoicePageRoutes } from './pages/routes.js'
import { bankNotificationRoutes } from './transactions/partner-routes.js'

/** Builds the HTTP application on a container. `server.ts` listens on it; tests inject into it. */
export async function buildApp(c: Container): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: c.log as unknown as FastifyBaseLogger,
    bodyLimit: c.config.bodyLimitBytes,
    trustProxy: c.config.env.TRUST_PROXY === 'true',
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
  app.addSchema(ErrorBodySchema)
  app.addSchema(WalletSchema)
  app.addSchema(TransactionSchema)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svcpay — Wallet Service API v2',
        version: '2.0.0',
        description:
          'BTC over Lightning and on-chain, swaps, USDT on TRON and VND bank payouts, signed webhooks. Amounts are JSON numbers written as exact decimals.',
      },
      servers: [{ url: c.config.publicBaseUrl }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    // Shared schemas keep their names; error answers and rate-limit headers are completed (http/openapi.ts).
    refResolver: openapiRefResolver,
    transformObject: finishOpenapi,
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  observabilityRoutes(app, { db: c.db, metrics: c.metrics })
  authRoutes(app, c)
  accountRoutes(app, c)
  rateRoutes(app, c)
  transactionRoutes(app, c)
  fiatRoutes(app, c)
  adminRoutes(app, c)
  webhookRoutes(app, c)
  webhookAdminRoutes(app, c)
  statusStreamRoutes(app, { ...c, heartbeatMs: c.config.streamHeartbeatMs })
  invoicePageRoutes(app, c)
  if (c.verifyBankNotification) bankNotificationRoutes(app, { db: c.db, verify: c.verifyBankNotification })
  if (c.config.rails === 'sandbox') sandboxFundRoutes(app, { ...c, adminPreHandler: adminAuth(c.adminToken) })
  // Bitcoin: the static deposit address, and the sandbox networks' controls.
  depositRoutes(app, c)
  if (c.config.rails === 'sandbox') sandboxBitcoinRoutes(app, { ...c, adminPreHandler: adminAuth(c.adminToken) })
  return app
}
