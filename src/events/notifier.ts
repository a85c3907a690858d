import { Redis } from 'ioredis'

import type { Db, Queryable } from '../db/db.js'
import { TXN_CHANNEL } from './channels.js'

/** The Redis channel that mirrors {@link TXN_CHANNEL} when `REDIS_URL` is set. */
export const REDIS_TXN_CHANNEL = 'svcpay:txn'

/** Stops one subscription; calling it twice is harmless. */
export type Unsubscribe = () => void

/** Thrown by {@link Notifier.subscribe} when the process already serves its maximum of listeners. */
export class NotifierFullError extends Error {
  override name = 'NotifierFullError'
}

/**
 * The in-process hub of committed transaction state changes. Each process subscribes once to
 * the fan-out (PostgreSQL LISTEN on `svcpay_txn`, and Redis pub/sub as well when `REDIS_URL` is
 * set) and hands every notification to the listeners registered here, so a change committed by
 * any instance reaches every status stream and wakes every delivery worker.
 *
 * A notification only says "something about this transaction committed"; it carries no state.
 * Listeners read what changed from the database (the `events` outbox), which makes a lost or a
 * doubled notification harmless: the next one, or a periodic re-check, catches up.
 */
export interface Notifier {
  /**
   * Calls `onChange` after every committed change of `txnId`, on any instance. Resolves once the
   * process is listening, so a change committed after it resolves is not missed. Rejects with
   * {@link NotifierFullError} when the process already has `listenersMax` listeners. Also called
   * once after the database's LISTEN connection was lost and made again, for what it missed.
   */
  subscribe(txnId: string, onChange: () => void): Promise<Unsubscribe>
  /**
   * Calls `onChange` after every committed change of any transaction (the delivery worker's
   * wake-up). `txnId` is `''` after the database's LISTEN connection was lost and made again (a
   * restart or a failover): any transaction may have changed meanwhile.
   */
  onAny(onChange: (txnId: string) => void): Promise<Unsubscribe>
  /** Per-transaction listeners now registered in this process. */
  readonly listenerCount: number
  /** Whether notifications also travel over Redis (then commits must be mirrored: {@link mirrorTxnNotifies}). */
  readonly redisEnabled: boolean
  /** Announces a committed change over Redis; a no-op without Redis. Never throws. */
  publish(txnId: string): void
  close(): Promise<void>
}

export interface NotifierDeps {
  /** The database whose NOTIFYs are listened to. */
  db: Db
  /** Also fan out over Redis pub/sub. */
  redisUrl?: string | undefined
  /** The bound on per-transaction listeners in this process. */
  listenersMax: number
  log: { warn(obj: object, msg: string): void }
}

export function createNotifier(deps: NotifierDeps): Notifier {
  const byTxn = new Map<string, Set<() => void>>()
  const anyListeners = new Set<(txnId: string) => void>()
  let listenerCount = 0
  let started: Promise<void> | undefined
  let stopPg: (() => Promise<void>) | undefined
  let subscriber: Redis | undefined
  let publisher: Redis | undefined
  let closed = false

  const dispatch = (txnId: string): void => {
    for (const listener of anyListeners) safely(() => listener(txnId))
    const listeners = byTxn.get(txnId)
    if (!listeners) return
    // A copy, so that a listener that unsubscribes while being called does not disturb the loop.
    for (const listener of [...listeners]) safely(() => listener())
  }

  const safely = (fn: () => void): void => {
    try {
      fn()
    } catch (err) {
      deps.log.warn({ error: (err as Error).message }, 'a transaction listener failed')
    }
  }

  // After the LISTEN connection was lost and made again (a database restart or failover), every
  // listener is woken once: what it missed is in the outbox, and it re-reads from there.
  const catchUp = (): void => {
    for (const listener of anyListeners) safely(() => listener(''))
    for (const listeners of [...byTxn.values()])
      for (const listener of [...listeners]) safely(() => listener())
  }

  async function start(): Promise<void> {
    stopPg = await deps.db.listen(TXN_CHANNEL, dispatch, { onReconnect: catchUp })
    if (deps.redisUrl && !closed) {
      // The subscriber queues its SUBSCRIBE until it is connected and renews it after every
      // reconnect, so an unreachable Redis delays nothing: PostgreSQL carries the events meanwhile.
      subscriber = new Redis(deps.redisUrl, { lazyConnect: true, maxRetriesPerRequest: null })
      subscriber.on('error', () => {})
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === REDIS_TXN_CHANNEL) dispatch(message)
      })
      subscriber.subscribe(REDIS_TXN_CHANNEL).catch((err: Error) => {
        deps.log.warn(
          { error: err.message },
          'Redis SUBSCRIBE failed; status events travel over PostgreSQL only',
        )
      })
    }
  }

  /** Starts listening on first use; a failed start is retried by the next caller. */
  function ensureStarted(): Promise<void> {
    started ??= start().catch((err: unknown) => {
      started = undefined
      throw err
    })
    return started
  }

  let unpublished: string[] = []
  const publishQueued = (): void => {
    const txnIds = unpublished
    unpublished = []
    if (!publisher || closed || txnIds.length === 0) return
    if (txnIds.length === 1) {
      publisher.publish(REDIS_TXN_CHANNEL, txnIds[0]!).catch(() => {})
      return
    }
    const pipeline = publisher.pipeline()
    for (const txnId of txnIds) pipeline.publish(REDIS_TXN_CHANNEL, txnId)
    pipeline.exec().catch(() => {})
  }

  if (deps.redisUrl) {
    publisher = new Redis(deps.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 500,
    })
    publisher.on('error', () => {})
    publisher.connect().catch(() => {})
  }

  return {
    get listenerCount() {
      return listenerCount
    },
    redisEnabled: deps.redisUrl !== undefined,

    async subscribe(txnId, onChange) {
      if (listenerCount >= deps.listenersMax) {
        throw new NotifierFullError(`this process already serves ${deps.listenersMax} status listeners`)
      }
      // Counted before the first await, so that concurrent callers cannot overshoot the bound.
      listenerCount++
      let set = byTxn.get(txnId)
      if (!set) byTxn.set(txnId, (set = new Set()))
      // Each subscription is its own entry, even when one function is registered twice.
      const entry = (): void => onChange()
      set.add(entry)
      let active = true
      const unsubscribe: Unsubscribe = () => {
        if (!active) return
        active = false
        listenerCount--
        set.delete(entry)
        if (set.size === 0 && byTxn.get(txnId) === set) byTxn.delete(txnId)
      }
      try {
        await ensureStarted()
      } catch (err) {
        unsubscribe()
        throw err
      }
      return unsubscribe
    },

    async onAny(onChange) {
      const entry = (txnId: string): void => onChange(txnId)
      anyListeners.add(entry)
      try {
        await ensureStarted()
      } catch (err) {
        anyListeners.delete(entry)
        throw err
      }
      return () => {
        anyListeners.delete(entry)
      }
    },

    publish(txnId) {
      if (!publisher || closed) return
      // Commits that finish in the same turn of the event loop are announced with one write to
      // Redis (a pipeline) instead of one each: under load a write per commit was a tenth of the
      // process's time. A lost publish is tolerated: PostgreSQL also carries the notification, and
      // listeners re-check on their own timers.
      unpublished.push(txnId)
      if (unpublished.length === 1) setImmediate(publishQueued)
    },

    async close() {
      closed = true
      await started?.catch(() => {})
      await stopPg?.().catch(() => {})
      subscriber?.disconnect()
      publisher?.disconnect()
      byTxn.clear()
      anyListeners.clear()
      listenerCount = 0
    },
  }
}

/**
 * Wraps a Db so that every notification on {@link TXN_CHANNEL} is also published over Redis once
 * its database transaction has committed (and never when it rolls back). PostgreSQL's own NOTIFY
 * is commit-bound already; Redis is told afterwards by the committing process. Everything else
 * passes straight through.
 */
export function mirrorTxnNotifies(db: Db, publish: (txnId: string) => void): Db {
  return {
    engine: db.engine,
    query: (sql, params) => db.query(sql, params),
    async notify(channel, payload = '') {
      await db.notify(channel, payload)
      if (channel === TXN_CHANNEL) publish(payload)
    },
    async tx(fn) {
      let notified: string[] = []
      const result = await db.tx((q) => {
        // The inner tx may run `fn` again after a serialization failure; only the last run commits.
        notified = []
        const watched: Queryable = {
          query: (sql, params) => q.query(sql, params),
          async notify(channel, payload = '') {
            await q.notify(channel, payload)
            if (channel === TXN_CHANNEL) notified.push(payload)
          },
        }
        return fn(watched)
      })
      for (const txnId of notified) publish(txnId)
      return result
    },
    listen: (channel, onPayload, options) => db.listen(channel, onPayload, options),
    close: () => db.close(),
  }
}
