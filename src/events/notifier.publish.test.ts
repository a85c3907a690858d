import { afterAll, describe, expect, it } from 'vitest'

import { createTestDb } from '../../test/helpers/harness.js'
import { createNotifier, type Notifier } from './notifier.js'
import { untilRedisCarries } from '../../test/helpers/webhooks.js'

const quiet = { warn: () => {} }
const REDIS_URL = 'redis://127.0.0.1:6379'

// publish() gathers the announcements made in one turn of the event loop into one pipeline; every
// one of them must still reach a listener that hears only Redis.
describe('the notifier hub, announcing many commits at once over Redis', () => {
  const cleanups: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  it(
    'delivers each of many announcements made together, and later single ones',
    { timeout: 60_000 },
    async () => {
      // Two databases, so that the listener cannot hear PostgreSQL's own notifications.
      const publishingDb = await createTestDb()
      const listeningDb = await createTestDb()
      const publisher: Notifier = createNotifier({
        db: publishingDb.db,
        redisUrl: REDIS_URL,
        listenersMax: 100,
        log: quiet,
      })
      const listener: Notifier = createNotifier({
        db: listeningDb.db,
        redisUrl: REDIS_URL,
        listenersMax: 100,
        log: quiet,
      })
      cleanups.push(async () => {
        await publisher.close()
        await listener.close()
        await publishingDb.db.close()
        await listeningDb.db.close()
        await publishingDb.drop()
        await listeningDb.drop()
      })
      const prefix = `txn_batch_${Date.now()}_`
      const heard = new Map<string, number>()
      await listener.onAny((txnId) => {
        if (txnId.startsWith(prefix)) heard.set(txnId, (heard.get(txnId) ?? 0) + 1)
      })
      // The subscription and the publisher's connection are made in the background; a fixed wait
      // could end before they are.
      await untilRedisCarries(publisher, listener)

      const ids = Array.from({ length: 40 }, (_, i) => `${prefix}${i}`)
      for (const id of ids) publisher.publish(id)
      const deadline = Date.now() + 5_000
      while (heard.size < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      expect([...heard.keys()].sort()).toEqual([...ids].sort())
      expect([...heard.values()].every((n) => n === 1)).toBe(true)

      publisher.publish(`${prefix}single`)
      const until = Date.now() + 5_000
      while (!heard.has(`${prefix}single`) && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
      expect(heard.get(`${prefix}single`)).toBe(1)
    },
  )
})
