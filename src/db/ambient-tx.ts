import { ScopedStorage } from '../shared/scoped-storage.js'
import type { Db, Queryable } from './db.js'
import { sql } from './sql.js'

/**
 * One database transaction around work that calls services built on the shared `Db`. Inside
 * `inOneTransaction(db, fn)`, every `db.query` made by `fn` (directly or through any service) runs
 * in that transaction, and a `db.tx` nested in it becomes a savepoint. The operator API uses it so
 * that an admin action and its audit row commit or fail together without every service taking a
 * transaction argument.
 *
 * A scope is closed when its transaction ends: work started inside it that outlives it (a timer, a
 * callback) falls back to the shared pool instead of a finished transaction.
 */
interface Scope {
  q: Queryable
  open: boolean
  savepoints: number
}

// Enabled only while an ambient transaction is open, so that the API's requests pay nothing for it.
const scopes = new ScopedStorage<Scope>()

function currentScope(): Scope | undefined {
  const scope = scopes.getStore()
  return scope?.open ? scope : undefined
}

/** Wraps the shared `Db` so that its calls join the caller's ambient transaction when there is one. */
export function joinAmbientTransactions(db: Db): Db {
  return {
    engine: db.engine,
    query: (statement, params) => (currentScope()?.q ?? db).query(statement, params),
    notify: (channel, payload) => (currentScope()?.q ?? db).notify(channel, payload),
    async tx(fn) {
      const scope = currentScope()
      if (!scope) return db.tx(fn)
      const name = sql.ident(`ambient_${++scope.savepoints}`)
      await scope.q.query(sql`SAVEPOINT ${name}`)
      try {
        const result = await fn(scope.q)
        await scope.q.query(sql`RELEASE SAVEPOINT ${name}`)
        return result
      } catch (err) {
        await scope.q.query(sql`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {})
        throw err
      }
    },
    listen: (channel, onPayload, options) => db.listen(channel, onPayload, options),
    close: () => db.close(),
  }
}

/** Runs `fn` in one transaction that every service call inside it joins (see above). */
export function inOneTransaction<T>(db: Db, fn: (q: Queryable) => Promise<T>): Promise<T> {
  return db.tx(async (q) => {
    const scope: Scope = { q, open: true, savepoints: 0 }
    try {
      return await scopes.run(scope, () => fn(q))
    } finally {
      scope.open = false
    }
  })
}
