import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { createTestDb } from '../../test/helpers/harness.js'
import type { Db } from '../db/db.js'
import { createNotifier, mirrorTxnNotifies, NotifierFullError, type Notifier } from './notifier.js'
import { TXN_CHANNEL, WAKE_CHANNEL } from './channels.js'
import { untilRedisCarries } from '../../test/helpers/webhooks.js'

const quiet = { warn: () => {} }
const REDIS_URL = 'redis://127.0.0.1:6379'

const until = async (check: () => boolean, timeoutMs = 3_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('the notifier hub', () => {
  const cleanups: Array<() => Promise<void>> = []
  // One database for the tests that need only one; each test has hubs of its own on it.
  let shared: Awaited<ReturnType<typeof createTestDb>>
  beforeAll(async () => {
    shared = await createTestDb()
  })
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  afterAll(async () => {
    await shared?.db.close()
    await shared?.drop()
  })

  async function setup(opts: { listenersMax?: number } = {}): Promise<{ db: Db; hub: Notifier }> {
    const hub = createNotifier({ db: shared.db, listenersMax: opts.listenersMax ?? 100, log: quiet })
    cleanups.push(() => hub.close())
    return { db: shared.db, hub }
  }

  it('hands a committed NOTIFY to the listeners of that transaction and to every any-listener, not before commit', async () => {
    const { db, hub } = await setup()
    const seenA: number[] = []
    const seenB: number[] = []
    const any: string[] = []
    await hub.subscribe('txn_a', () => seenA.push(Date.now()))
    await hub.subscribe('txn_b', () => seenB.push(Date.now()))
    await hub.onAny((txnId) => any.push(txnId))

    await expect(
      db.tx(async (q) => {
        await q.notify(TXN_CHANNEL, 'txn_a')
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    await db.tx(async (q) => {
      await q.notify(TXN_CHANNEL, 'txn_a')
      await new Promise((r) => setTimeout(r, 50))
      // Nothing is announced while the transaction is open.
      expect(seenA).toEqual([])
    })
    await until(() => seenA.length === 1)
    await new Promise((r) => setTimeout(r, 50))
    expect(seenA).toHaveLength(1)
    expect(seenB).toEqual([])
    expect(any).toEqual(['txn_a'])
  })

  it('bounds the listeners, frees a slot on unsubscribe, and stops calling an unsubscribed listener', async () => {
    const { db, hub } = await setup({ listenersMax: 2 })
    let calls = 0
    const first = await hub.subscribe('txn_x', () => calls++)
    await hub.subscribe('txn_x', () => calls++)
    expect(hub.listenerCount).toBe(2)
    await expect(hub.subscribe('txn_y', () => {})).rejects.toBeInstanceOf(NotifierFullError)
    expect(hub.listenerCount).toBe(2)
    first()
    first()
    expect(hub.listenerCount).toBe(1)
    await hub.subscribe('txn_y', () => {})
    await db.notify(TXN_CHANNEL, 'txn_x')
    await until(() => calls === 1)
    await new Promise((r) => setTimeout(r, 50))
    expect(calls).toBe(1)
  })

  it(
    'carries notifications over Redis alone: the listener’s own database never sees the commit',
    { timeout: 90_000 },
    async () => {
      // Two processes' views: the committing one publishes after commit; the listening one watches a
      // different database, so whatever it receives came through Redis.
      // Two databases: on PostgreSQL a NOTIFY never crosses from one database to another.
      const committingDb = await createTestDb()
      const elsewhereDb = await createTestDb()
      const committing = committingDb.db
      const elsewhere = elsewhereDb.db
      const publisherHub = createNotifier({
        db: committing,
        redisUrl: REDIS_URL,
        listenersMax: 10,
        log: quiet,
      })
      const listenerHub = createNotifier({ db: elsewhere, redisUrl: REDIS_URL, listenersMax: 10, log: quiet })
      cleanups.push(async () => {
        await publisherHub.close()
        await listenerHub.close()
        await committing.close()
        await elsewhere.close()
        await committingDb.drop()
        await elsewhereDb.drop()
      })
      const mirrored = mirrorTxnNotifies(committing, publisherHub.publish)
      const txnId = `txn_redis_${Date.now()}`
      let calls = 0
      await listenerHub.subscribe(txnId, () => calls++)
      // The subscription reaches Redis in the background; a fixed wait could end before it does.
      await untilRedisCarries(publisherHub, listenerHub)

      await expect(
        mirrored.tx(async (q) => {
          await q.notify(TXN_CHANNEL, txnId)
          throw new Error('roll back')
        }),
      ).rejects.toThrow()
      await new Promise((r) => setTimeout(r, 200))
      expect(calls).toBe(0)

      await mirrored.tx(async (q) => {
        await q.notify(TXN_CHANNEL, txnId)
      })
      await until(() => calls === 1)
      await mirrored.notify(TXN_CHANNEL, txnId)
      await until(() => calls === 2)
      // Other NOTIFYs are not mirrored.
      await mirrored.notify(WAKE_CHANNEL, txnId)
      await new Promise((r) => setTimeout(r, 200))
      expect(calls).toBe(2)
    },
  )
})
