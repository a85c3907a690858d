import { DELIVERY_CHANNEL, WAKE_CHANNEL } from './events/channels.js'
import type { Container } from './container.js'
import { startLoop, type Loop } from './shared/loop.js'
import { runDueTransactions } from './transactions/worker.js'
import { runDueAddresses } from './onchain/deposits.js'
import { scaledRetryDelay, startDeliveryWorker, type DeliveryWorkerDeps } from './events/delivery-worker.js'
import { runScheduledReconciliation } from './reconcile/schedule.js'
import { runRecoveryCheck } from './reconcile/recovery.js'
import { runBankCreditPoll } from './payouts/vnd/bank-credit-poll.js'

/** The least time between two looks for due webhook deliveries that commits ask for. */
export const DELIVERY_WAKE_SPACING_MS = 25

/** How often an open recovery period is checked against the rails. */
export const RECOVERY_CHECK_MS = 60_000

export interface Workers {
  wake(): void
  stop(): Promise<void>
}

/** The loops that move money forward without a request. Each is safe to run on many instances. */
export function startWorkers(c: Container): Workers {
  const loops: Loop[] = [
    startLoop({
      name: 'transactions',
      idleMs: 1_000,
      step: () =>
        runDueTransactions({ db: c.db, transactions: c.transactions, log: c.log, railOps: c.config.railOps }),
      log: c.log,
    }),
    // The on-chain deposit watcher: sweeps due addresses for new payments (see onchain/deposits.ts).
    startLoop({
      name: 'onchain-addresses',
      idleMs: 1_000,
      step: () => runDueAddresses({ ...c.bitcoin, log: c.log }),
      log: c.log,
    }),
  ]
  // Reconciliation on a schedule (RECONCILE_INTERVAL_S; src/reconcile/schedule.ts), one run at a time
  // across instances.
  if (c.reconcileIntervalMs > 0)
    loops.push(
      startLoop({
        name: 'reconcile',
        idleMs: Math.min(c.reconcileIntervalMs, 5_000),
        step: () =>
          runScheduledReconciliation({
            db: c.db,
            intervalMs: c.reconcileIntervalMs,
            leaseMs: c.config.railsCheckTimeoutMs * 2 + 30_000,
            // The scheduled run is the one that counts towards the brake (docs/reconciliation.md).
            reconcile: () => c.reconcile({ record: {} }),
            log: c.log,
          }),
        log: c.log,
      }),
    )
  let lastRecoveryCheck = 0
  // Recovery after a restore (src/reconcile/recovery.ts): while a period is open, every minute the
  // rails are reconciled with the restored database and the sends they already made taken up.
  loops.push(
    startLoop({
      name: 'recovery',
      idleMs: RECOVERY_CHECK_MS,
      step: async () => {
        // Woken with the other loops by every commit: a check (a reconciliation) once a minute at most.
        if (Date.now() - lastRecoveryCheck < RECOVERY_CHECK_MS) return false
        lastRecoveryCheck = Date.now()
        await runRecoveryCheck({
          db: c.db,
          reconcile: () => c.reconcile(),
          tron: c.recoveryRails.tron,
          transactions: () => c.transactions,
          now: Date.now,
          log: c.log,
        })
        return false
      },
      log: c.log,
    }),
  )
  // The bank partner's statement of incoming transfers (BANK_CREDITS_POLL_S; src/payouts/vnd/
  // bank-credit-poll.ts), one poll at a time across instances: finds credits not notified.
  const credits = c.bankCredits
  if (credits && credits.pollMs > 0)
    loops.push(
      startLoop({
        name: 'bank-credits',
        idleMs: Math.min(credits.pollMs, 5_000),
        step: () =>
          runBankCreditPoll({
            db: c.db,
            list: credits.list,
            sink: credits.sink,
            intervalMs: credits.pollMs,
            log: c.log,
          }),
        log: c.log,
      }),
    )
  // Webhook delivery (src/events/delivery-worker.ts): woken by every committed state change, on any
  // instance, so that an event goes out within milliseconds of its commit.
  const webhookAttempts = c.metrics.counter(
    'svcpay_webhook_attempts_total',
    'Webhook delivery attempts by result',
    ['result'],
  )
  const deliveries = startDeliveryWorker({
    ...deliverySettingsOf(c),
    onAttempt: (outcome) => webhookAttempts.inc({ result: outcome.result }),
    log: c.log,
  })
  loops.push(deliveries)
  // --- Wake spacing (bench/README.md). Each commit that enqueued webhook deliveries wakes the loop,
  // and each wake costs a look for due deliveries (two queries): under a load of such commits the
  // loop would look without pause. Looks are spaced at least DELIVERY_WAKE_SPACING_MS apart, the
  // first at once, so a quiet service delivers without delay and a busy one does not spin.
  let lastDeliveryWake = 0
  let deliveryWakeTimer: NodeJS.Timeout | undefined
  const wakeDeliveries = (): void => {
    if (deliveryWakeTimer) return
    const waitMs = lastDeliveryWake + DELIVERY_WAKE_SPACING_MS - Date.now()
    if (waitMs <= 0) {
      lastDeliveryWake = Date.now()
      deliveries.wake()
      return
    }
    deliveryWakeTimer = setTimeout(() => {
      deliveryWakeTimer = undefined
      lastDeliveryWake = Date.now()
      deliveries.wake()
    }, waitMs)
  }
  // --- end of wake spacing.
  const stopWaking = c.db
    .listen(DELIVERY_CHANNEL, () => wakeDeliveries(), { onReconnect: () => wakeDeliveries() })
    .catch((err) => {
      c.log.warn({ error: (err as Error).message }, 'LISTEN failed; webhook deliveries poll instead')
      return undefined
    })
  const unlisten = c.db
    .listen(WAKE_CHANNEL, () => loops.forEach((l) => l.wake()), {
      onReconnect: () => loops.forEach((l) => l.wake()),
    })
    .catch((err) => {
      c.log.warn({ error: (err as Error).message }, 'LISTEN failed; the worker polls instead')
      return undefined
    })
  return {
    wake: () => loops.forEach((l) => l.wake()),
    async stop() {
      clearTimeout(deliveryWakeTimer)
      await (
        await unlisten
      )?.()
      ;(await stopWaking)?.()
      await Promise.all(loops.map((l) => l.stop()))
    },
  }
}

/** What the webhook delivery worker takes from the configuration (the tests' helpers too). */
export function deliverySettingsOf(c: Container): Omit<DeliveryWorkerDeps, 'log'> {
  return {
    db: c.db,
    box: c.box,
    variant: c.config.webhookVariant,
    timeoutMs: c.config.webhookTimeoutMs,
    allowPrivate: c.config.allowPrivateWebhooks,
    allowLoopback: c.config.allowHttpWebhooks,
    concurrency: c.config.webhookConcurrency,
    retryDelayMs: scaledRetryDelay(c.config.webhookBackoffBaseMs),
    ...(c.resolveHost ? { lookup: c.resolveHost } : {}),
  }
}
