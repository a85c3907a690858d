import type { Container } from './container.js'
import { startLoop, type Loop } from './shared/loop.js'
import { runDueTransactions } from './transactions/worker.js'
import { runDueAddresses } from './transactions/deposits.js'

/** The NOTIFY channel that wakes workers at once (rail events, new work), instead of at the next poll. */
export const WAKE_CHANNEL = 'svcpay_wake'

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
      step: () => runDueTransactions({ db: c.db, transactions: c.transactions, log: c.log }),
      log: c.log,
    }),
    // The on-chain deposit watcher: sweeps due addresses for new payments (see transactions/deposits.ts).
    startLoop({
      name: 'onchain-addresses',
      idleMs: 1_000,
      step: () => runDueAddresses({ ...c.bitcoin, log: c.log }),
      log: c.log,
    }),
  ]
  const unlisten = c.db.listen(WAKE_CHANNEL, () => loops.forEach((l) => l.wake())).catch((err) => {
    c.log.warn({ error: (err as Error).message }, 'LISTEN failed; the worker polls instead')
    return undefined
  })
  return {
    wake: () => loops.forEach((l) => l.wake()),
    async stop() {
      await (await unlisten)?.()
      await Promise.all(loops.map((l) => l.stop()))
    },
  }
}
