import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createTestDb, ENGINE } from '../../test/helpers/harness.js'
import { openSession, type Db } from '../db/db.js'
import { parseDbUrl } from '../db/hosts.js'
import { TXN_CHANNEL } from './channels.js'
import { createNotifier } from './notifier.js'

const quiet = { warn: () => {} }

const until = async (check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

// A notification sent while the LISTEN connection is down (a restart, a failover) is lost; the
// outbox is the source of truth, so once the connection is back every listener is woken to re-read
// it. PostgreSQL only: the embedded engine's listener is in the process and cannot break.
describe.skipIf(ENGINE !== 'postgres')('the notifier after its LISTEN connection was lost', () => {
  let made: Awaited<ReturnType<typeof createTestDb>>
  let db: Db
  beforeAll(async () => {
    made = await createTestDb()
    db = made.db
  })
  afterAll(async () => {
    await db?.close()
    await made?.drop()
  })

  it('wakes every listener once it listens again, for the change it did not hear', async () => {
    const hub = createNotifier({ db, listenersMax: 10, log: quiet })
    const woken: string[] = []
    const any: string[] = []
    const stop = await hub.subscribe('txn_missed', () => woken.push('txn_missed'))
    const stopOther = await hub.subscribe('txn_quiet', () => woken.push('txn_quiet'))
    const stopAny = await hub.onAny((txnId) => any.push(txnId))
    const name = new URL(made.url!).pathname.slice(1)
    // A session of the test database opened before new ones are refused: it commits the change
    // that nobody hears.
    const writer = (await openSession(parseDbUrl(made.url!))).client
    const admin = (await openSession(parseDbUrl(made.url!.replace(`/${name}`, '/postgres')))).client
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'`,
        [name],
      )
      expect(rowCount).toBe(1)
      await new Promise((r) => setTimeout(r, 300))
      await writer.query(`SELECT pg_notify($1, 'txn_missed')`, [TXN_CHANNEL])
      await new Promise((r) => setTimeout(r, 500))
      expect(woken).toEqual([])
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
      await until(() => woken.length === 2, 'the listeners to be woken')
      expect(woken.sort()).toEqual(['txn_missed', 'txn_quiet'])
      expect(any).toEqual([''])
      // And it hears what comes next.
      await db.tx((q) => q.notify(TXN_CHANNEL, 'txn_missed'))
      await until(() => woken.length === 3, 'the next notification')
      expect(any).toEqual(['', 'txn_missed'])
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {})
      await admin.end()
      await writer.end()
      stop()
      stopOther()
      stopAny()
      await hub.close()
    }
  })
})
