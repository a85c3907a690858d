import type { Config } from './config/config.js'
import { adminToken, masterKey, previousMasterKeys } from './config/local-secrets.js'
import { createPgliteDb, createPostgresDb, type Db } from './db/db.js'
import { migrate } from './db/migrate.js'
import { createSecretBox, type SecretBox } from './shared/secret-box.js'
import { createJwtKeySet, type JwtKeySet } from './auth/jwt-key.js'
import { createAuthService, type AuthService } from './auth/service.js'
import { createAccountsService, type AccountsService } from './accounts/service.js'
import {
  createRatesService,
  liveRateProvider,
  staticRateProvider,
  type RatesService,
} from './rates/service.js'
import { createWalletIds, ensureSystemAccounts } from './ledger/ledger.js'
import { createMetrics, type Metrics } from './http/observability.js'
import { PRECISION } from './shared/currency.js'
import type { Logger } from 'pino'
import { createTransactionsService, type TransactionsService } from './transactions/service.js'
import { createTxnRepository } from './transactions/repository.js'
import { createApprovalsService, type ApprovalsService } from './approvals/service.js'
import { swapFlow } from './swap/swap.js'
import { serviceKinds } from './wiring/kinds.js'
import type { KindRegistry } from './transactions/kinds.js'
import type { Flow } from './transactions/flow.js'
import type { CreditSink } from './payouts/vnd/bank-credit.js'
import type { BankCreditsSource, PayoutRails } from './payouts/rails.js'
// The wiring of each area (src/wiring): payouts and pay-ins, Bitcoin, the rate limits.
import { wirePayments } from './wiring/payments.js'
import { wireBitcoin } from './wiring/bitcoin.js'
import type { BitcoinFlowDeps } from './wiring/bitcoin-flows.js'
import { wireRateLimits } from './wiring/rate-limits.js'
import { wireRailOps } from './wiring/rail-ops.js'
import type { Redis } from 'ioredis'
import type { RateLimiter } from './http/rate-limit.js'
import type { LnurlClientOptions } from './lightning/lnurl-client.js'
import type { LnurlDeps } from './lightning/address/lnurl.js'
import type { PayinDeps } from './payins/deps.js'
// Events: the in-process hub of committed state changes, webhook registration and deliveries.
import { createNotifier, mirrorTxnNotifies, type Notifier } from './events/notifier.js'
import { createWebhooksService, type WebhooksService } from './events/service.js'
import type { ResolveHost } from './events/http-deliver.js'
// Operators (issue 19): named identities, sessions and the audit trail of the operator API.
import { joinAmbientTransactions } from './db/ambient-tx.js'
import {
  createOperatorsService,
  operatorsConfigFromEnv,
  type OperatorsConfig,
  type OperatorsService,
} from './operators/service.js'
// Rail operations: attempts and backoff, stuck transactions, `svcpay rails check`.
import type { RailsCheckResult } from './rails/check.js'
import type { BankAccountInquiryRail, TronRail } from './rails/rail.js'
// Reconciliation (issue 18): the books against what every rail holds.
import type { Reconciler } from './reconcile/service.js'
import { brakeGate, brakeSettings, createSendsBrake, type BrakeSettings } from './reconcile/brake.js'
import { recoveryBrake } from './reconcile/recovery.js'
import { approvalGate } from './approvals/gate.js'
import { approvedAt } from './approvals/repository.js'
// Limits and risk controls (issue 31): a confirm gate and the hot-wallet caps' review check.
import { limitsGate } from './limits/gate.js'
import { hotWalletCheck, railCaps } from './limits/hot-wallet.js'
import { reconcileIntervalMs, reconcileWindowMs } from './reconcile/schedule.js'
import { registerStuckGauge } from './transactions/stuck.js'
import { wireScreening } from './wiring/screening.js'
import type { ScreeningService } from './screening/service.js'

/** Every service, wired from its explicit dependencies. Tests build one the same way. */
export interface Container {
  config: Config
  db: Db
  box: SecretBox
  /** The token signing keys by kid (src/auth/jwt-key.ts). */
  jwtKeys: JwtKeySet
  adminToken: string
  auth: AuthService
  accounts: AccountsService
  rates: RatesService
  metrics: Metrics
  log: Logger
  transactions: TransactionsService
  /** Every kind of transaction, as the flows declare them (src/wiring/kinds.ts), checked at start. */
  kinds: KindRegistry
  /** Four-eyes approval of large payouts and on-chain sends (src/approvals). */
  approvals: ApprovalsService
  /** Screening of destinations and deposits against deny lists and a provider (src/screening). */
  screening: ScreeningService
  /** The Bitcoin rails and what the Lightning and on-chain flows, the deposit watcher and sandbox routes need. */
  bitcoin: BitcoinFlowDeps
  /** What the VND receive, the bank-credit sink (`ingestBankCredit`) and credit assignment need (src/payins). */
  payins: PayinDeps
  /** The LNURL-pay of this service's Lightning Addresses: its HTTP routes and in-process sends share it. */
  lightningAddresses: LnurlDeps
  rateLimiter: RateLimiter
  /** Shared Redis connection when REDIS_URL is set. */
  redis: Redis | undefined
  /** Committed state changes of any instance, for status streams and the delivery worker. */
  notifier: Notifier
  webhooks: WebhooksService
  /** Checks a bank partner notification; set with `VND=bank-http` and `BANK_PAYOUT_WEBHOOK_SECRET`. */
  verifyBankNotification: PayoutRails['verifyBankNotification']
  /**
   * Incoming bank transfers (issue 20): where they are read from and the sink they go to; set with
   * `VND=bank-http` and a sink (the VND pay-in's, src/payins).
   */
  bankCredits: (BankCreditsSource & { sink: CreditSink }) | undefined
  /** The VND bank rail's account inquiry (`GET /api/v2/fiat/account-name`). */
  bankAccounts: BankAccountInquiryRail
  /** Named operators of the operator API: set-up, sign-in, sessions (src/operators). */
  operators: OperatorsService
  operatorsConfig: OperatorsConfig
  /** Asks every configured rail how it is (`svcpay rails check`, GET /admin/rails). */
  checkRails(): Promise<RailsCheckResult>
  /**
   * Reconciles the ledger with every rail and updates the reserve gauges (`svcpay reconcile`); only
   * with `record` (the schedule, an operator's audited run) does it count towards the brake.
   */
  reconcile: Reconciler
  /** RECONCILE_HALT_SENDS and RECONCILE_HALT_AFTER. */
  reconcileBrake: BrakeSettings
  /** RECONCILE_INTERVAL_S in milliseconds; 0: the worker does not reconcile on its own. */
  reconcileIntervalMs: number
  /** The rails recovery after a restore asks about sends it takes up (src/reconcile/recovery.ts). */
  recoveryRails: { tron: TronRail }
  /** Replaces the system resolver for webhook hosts (tests); undefined in production. */
  resolveHost: ResolveHost | undefined
  close(): Promise<void>
}

export async function createContainer(
  config: Config,
  log: Logger,
  opts: {
    db?: Db
    resolveHost?: ResolveHost
    creditSink?: CreditSink
    lnurlClient?: Partial<LnurlClientOptions>
  } = {},
): Promise<Container> {
  const baseDb =
    opts.db ??
    (config.databaseUrl
      ? createPostgresDb(config.databaseUrl, { poolMax: config.dbPoolMax })
      : await createPgliteDb(config.dataDir))
  // Events: one subscription per process to committed changes; with Redis, commits are also
  // published there (src/events/notifier.ts).
  const notifier = createNotifier({
    db: baseDb,
    redisUrl: config.redisUrl,
    listenersMax: config.streamListenersMax,
    log,
  })
  // An admin action and its audit row share one transaction even through services that take no
  // transaction argument: their queries join it (src/db/ambient-tx.ts).
  const db = joinAmbientTransactions(
    notifier.redisEnabled ? mirrorTxnNotifies(baseDb, notifier.publish) : baseDb,
  )
  await migrate(db)
  const walletAndRateCurrencies = Object.keys(PRECISION).filter(
    (c) => c !== 'ETH' || config.walletCurrencies.includes(c),
  )
  await ensureSystemAccounts(db, walletAndRateCurrencies)
  // The master keyring: MASTER_KEY seals, MASTER_KEY_PREVIOUS still opens (issue 32).
  const box = createSecretBox(masterKey(config), previousMasterKeys(config))
  const jwtKeys = await createJwtKeySet({ db, box, configured: config.jwtSecret })
  const auth = createAuthService({ db, box, jwtKey: jwtKeys, tokenTtlS: config.tokenTtlS })
  // Wallet ids found once per process, shared by the swap and every other flow (src/ledger/ledger.ts).
  const walletIds = createWalletIds()
  const accounts = createAccountsService({ db, walletCurrencies: config.walletCurrencies, walletIds })
  const provider =
    config.ratesProvider === 'live'
      ? liveRateProvider({ url: config.ratesLiveUrl })
      : staticRateProvider(config.ratesFile)
  const rates = createRatesService({ provider, maxAgeMs: config.ratesMaxAgeS * 1000, log })
  const metrics = createMetrics()
  const operatorsConfig = operatorsConfigFromEnv(config.env)
  const operators = createOperatorsService({ db, box, config: operatorsConfig })
  // Made (and checked) first: a kind with a missing fact stops the service here, at start.
  const kinds = serviceKinds()
  registerStuckGauge(metrics, { db, kinds, settings: config.railOps, log })
  const reconcileBrake = brakeSettings(config.env)
  // Screening (issue 31): a gate of every send, a review check of the approval gate, and the
  // deposit watcher's look at who paid.
  const screening = wireScreening({ env: config.env, db, kinds, metrics, log, resolveHost: opts.resolveHost })
  // After a restore, the recovery period holds every rail's sends on top of the reconciliation
  // brake (src/reconcile/recovery.ts).
  const brake = recoveryBrake(createSendsBrake(reconcileBrake))
  const reconcileInterval = reconcileIntervalMs(config.env)
  const reconcileWindow = reconcileWindowMs(config.env)
  // The writes of transactions, built once with the webhook variant and the clock of their outbox
  // events, and handed to the service and to every flow that writes transactions.
  const repository = createTxnRepository({ webhookVariant: config.webhookVariant, now: Date.now, kinds })
  // The flows reach the transactions service lazily, for worker-side transitions, because the
  // service is built from this list of flows.
  const lazyTransactions = (): TransactionsService => transactions
  const payments = wirePayments({
    config,
    db,
    log,
    accounts,
    rates,
    repository,
    brake,
    transactions: lazyTransactions,
    ...(opts.creditSink ? { creditSink: opts.creditSink } : {}),
  })
  const btc = await wireBitcoin({
    config,
    db,
    box,
    log,
    accounts,
    rates,
    repository,
    brake,
    releasedAt: approvedAt,
    depositScreening: screening,
    transactions: lazyTransactions,
    ...(opts.lnurlClient ? { lnurlClient: opts.lnurlClient } : {}),
  })
  const flows: Flow[] = [swapFlow({ config, rates, walletIds }), ...payments.flows, ...btc.flows]
  const { payins, payoutRails, bankRail, bankChecked, bankCredits } = payments
  const { bitcoin, lightningAddresses } = btc
  // The checks in front of a confirm, in order: the brake refuses first, then the limits (which
  // refuse, and count what passes) and screening (which refuses a listed destination), then
  // approval may hold (a threshold, a hot-wallet cap, or a screening outcome sent for review).
  const limits = limitsGate({ config: config.limits, kinds, rates, metrics })
  const hotWallet = hotWalletCheck(railCaps(config.limits, kinds), kinds, metrics)
  const gates = [
    brakeGate(reconcileBrake, kinds),
    limits,
    screening.gate,
    approvalGate(config, kinds, [hotWallet, screening.review]),
  ]
  const transactions = createTransactionsService({ db, config, rates, flows, repository, kinds, gates, log })
  const approvals = createApprovalsService({ db, transactions, brake, kinds })
  const webhooks = createWebhooksService({
    db,
    box,
    allowHttp: config.allowHttpWebhooks,
    allowPrivate: config.allowPrivateWebhooks,
    ...(opts.resolveHost ? { resolveHost: opts.resolveHost } : {}),
  })
  const { redis, rateLimiter } = await wireRateLimits(config, metrics, log)
  return {
    transactions,
    kinds,
    approvals,
    screening,
    bitcoin,
    payins,
    lightningAddresses,
    rateLimiter,
    redis,
    notifier,
    webhooks,
    verifyBankNotification: payoutRails.verifyBankNotification,
    bankCredits,
    bankAccounts: bankRail,
    ...wireRailOps({
      config,
      db,
      metrics,
      log,
      railCurrencies: kinds.railCurrencies,
      bitcoinRails: btc.rails,
      payoutRails,
      bankChecked,
      windowMs: reconcileWindow,
      brake: reconcileBrake,
    }),
    reconcileBrake,
    recoveryRails: { tron: payoutRails.tron },
    reconcileIntervalMs: reconcileInterval,
    resolveHost: opts.resolveHost,
    operators,
    operatorsConfig,
    config,
    db,
    box,
    jwtKeys,
    adminToken: adminToken(config),
    auth,
    accounts,
    rates,
    metrics,
    log,
    async close() {
      rateLimiter.close()
      redis?.disconnect()
      await notifier.close()
      if (!opts.db) await db.close()
    },
  }
}
