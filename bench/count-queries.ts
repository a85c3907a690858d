/**
 * Database round trips per API operation: builds the service in this process on a fresh
 * PostgreSQL database (or PGlite with --pglite), counts every statement it sends while one swap is
 * quoted and confirmed and one transaction is read, and prints them. The count of round trips is
 * what bounds a swap's speed once the CPU is shared with PostgreSQL.
 *
 *   npx tsx bench/count-queries.ts [--pglite] [--verbose]
 *
 * The last figure runs the background workers too (as the server does) and counts everything the
 * process sends to the database during 40 swaps made one after another: what each swap costs
 * besides its own requests (the webhook delivery worker woken by every commit, for one).
 */
import { startWorkers } from '../src/worker.js'
import { createPgliteDb, createPostgresDb, type Db, type Queryable } from '../src/db/db.js'
import { toQuery } from '../src/db/sql.js'
import { startInProcess } from './lib/in-process.js'
import { dropDatabase, recreateDatabase } from './lib/pg.js'
import { SWAP_BODY } from './scenarios/swaps.js'

const verbose = process.argv.includes('--verbose')
const pglite = process.argv.includes('--pglite')
const DB_NAME = 'svcpay_bench_count'

interface Counter {
  statements: string[]
  transactions: number
  notifications: number
}
const counter: Counter = { statements: [], transactions: 0, notifications: 0 }
let counting = false

function counted(db: Db): Db {
  const wrap = (q: Queryable): Queryable => ({
    async query(sql, params) {
      const text = typeof sql === 'string' ? sql : toQuery(sql).text
      if (counting) counter.statements.push(text.replace(/\s+/g, ' ').trim().slice(0, 100))
      return q.query(sql, params)
    },
    async notify(channel, payload) {
      // On PostgreSQL a notification is not a round trip of its own: the database layer sends it
      // after the commit, batched with others, from its own connection (db.ts). On PGlite it is a
      // statement in the transaction.
      if (counting && db.engine === 'postgres') counter.notifications++
      if (counting && db.engine === 'pglite')
        counter.statements.push('(notification, sent in the transaction)')
      return q.notify(channel, payload)
    },
  })
  return {
    engine: db.engine,
    ...wrap(db),
    async tx(fn) {
      if (counting) {
        counter.transactions++
        // BEGIN and COMMIT are round trips too.
        counter.statements.push('BEGIN')
      }
      const result = await db.tx((q) => fn(wrap(q)))
      if (counting) counter.statements.push('COMMIT')
      return result
    },
    listen: (channel, fn) => db.listen(channel, fn),
    close: () => db.close(),
  }
}

async function main(): Promise<void> {
  const base = pglite
    ? await createPgliteDb(undefined)
    : createPostgresDb(await recreateDatabase(DB_NAME), { poolMax: 4 })
  const service = await startInProcess(counted(base))
  const { c, call, token } = service
  try {
    // One swap first, so that caches (keys, rates) are warm as they are under load.
    const warm = await call('POST', '/api/v2/transaction', token, JSON.parse(SWAP_BODY))
    await call('PUT', `/api/v2/transaction/${warm.txnId}/confirm`, token)

    const measure = async (label: string, fn: () => Promise<void>) => {
      counter.statements = []
      counter.transactions = 0
      counter.notifications = 0
      counting = true
      await fn()
      counting = false
      console.log(
        `${label}: ${counter.statements.length} round trips, ${counter.transactions} database transactions` +
          (counter.notifications ? `, ${counter.notifications} notifications sent after commit` : ''),
      )
      if (verbose) for (const s of counter.statements) console.log(`    ${s}`)
    }
    let txnId = ''
    await measure('swap create', async () => {
      txnId = (await call('POST', '/api/v2/transaction', token, JSON.parse(SWAP_BODY))).txnId
    })
    await measure('swap confirm', async () => {
      await call('PUT', `/api/v2/transaction/${txnId}/confirm`, token)
    })
    await measure('GET transaction', async () => {
      await call('GET', `/api/v2/transaction/${txnId}`, token)
    })
    await measure('GET transaction list', async () => {
      await call('GET', '/api/v2/transaction?txnStatuses=completed', token)
    })
    const workers = startWorkers(c)
    const SWAPS = 40
    counter.statements = []
    counting = true
    for (let i = 0; i < SWAPS; i++) {
      const q = await call('POST', '/api/v2/transaction', token, JSON.parse(SWAP_BODY))
      await call('PUT', `/api/v2/transaction/${q.txnId}/confirm`, token)
    }
    // Whatever the workers were woken to do by the last commits.
    await new Promise((r) => setTimeout(r, 200))
    counting = false
    await workers.stop()
    const perSwap = counter.statements.length / SWAPS
    console.log(`with the workers running: ${perSwap.toFixed(1)} round trips per swap, everything included`)
    if (verbose) {
      const kinds = new Map<string, number>()
      for (const s of counter.statements) kinds.set(s.slice(0, 60), (kinds.get(s.slice(0, 60)) ?? 0) + 1)
      for (const [k, n] of [...kinds].sort((a, b) => b[1] - a[1]))
        console.log(`    ${(n / SWAPS).toFixed(2)}  ${k}`)
    }
  } finally {
    await service.close()
    await base.close()
    if (!pglite) await dropDatabase(DB_NAME)
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
