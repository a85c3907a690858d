import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDb } from '../../test/helpers/harness.js'
import type { Db } from './db.js'

// On PostgreSQL statements are prepared once per connection and reused; these hold that a table
// changing shape under a prepared statement (a migration applied by another instance) and a
// statement failing at its first preparation leave every later query working.
describe('the database layer, statements reused across queries', () => {
  let db: Db
  let drop: () => Promise<void>
  beforeAll(async () => {
    ;({ db, drop } = await createTestDb())
    await db.query('CREATE TABLE shapes (id integer PRIMARY KEY, a text NOT NULL)')
    await db.query(`INSERT INTO shapes (id, a) VALUES (1, 'one'), (2, 'two')`)
  })
  afterAll(async () => {
    await db?.close()
    await drop?.()
  })

  it('answers a SELECT * again after a column is added under it, outside and inside a transaction', async () => {
    const read = () =>
      db.query<{ id: number; a: string; b?: string }>('SELECT * FROM shapes WHERE id = $1', [1])
    // Several times, so that every pooled connection has prepared it.
    for (let i = 0; i < 12; i++) expect((await read()).rows).toEqual([{ id: 1, a: 'one' }])
    await Promise.all(Array.from({ length: 12 }, () => read()))
    await db.query(`ALTER TABLE shapes ADD COLUMN b text NOT NULL DEFAULT 'new'`)
    for (let i = 0; i < 12; i++) expect((await read()).rows).toEqual([{ id: 1, a: 'one', b: 'new' }])
    await db.query(`ALTER TABLE shapes ADD COLUMN c integer`)
    const inTx = await db.tx(async (q) => {
      const first = await q.query('SELECT * FROM shapes WHERE id = $1', [2])
      await q.query('UPDATE shapes SET a = $2 WHERE id = $1', [2, 'deux'])
      return first.rows[0]
    })
    expect(inTx).toEqual({ id: 2, a: 'two', b: 'new', c: null })
    expect((await read()).rows[0]).toEqual({ id: 1, a: 'one', b: 'new', c: null })
  })

  it('keeps working after a statement that fails, with its parameters typed as each use needs', async () => {
    await expect(db.query('SELECT no_such_column FROM shapes WHERE id = $1', [1])).rejects.toThrow()
    await expect(db.query('SELECT no_such_column FROM shapes WHERE id = $1', [1])).rejects.toThrow()
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM shapes WHERE id = ANY($1::int[])',
      [[1, 2]],
    )
    expect(rows).toEqual([{ n: 2 }])
    const r = await db.query('UPDATE shapes SET a = $2 WHERE id = $1', [1, 'uno'])
    expect(r.rowCount).toBe(1)
  })

  it('sends a notification only after its transaction commits, never after a rollback, and every one of many', async () => {
    const seen: string[] = []
    const stop = await db.listen('db_test_channel', (payload) => seen.push(payload))
    const until = async (check: () => boolean) => {
      const deadline = Date.now() + 5_000
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out; seen ${JSON.stringify(seen)}`)
        await new Promise((r) => setTimeout(r, 10))
      }
    }
    try {
      await expect(
        db.tx(async (q) => {
          await q.notify('db_test_channel', 'rolled back')
          throw new Error('roll back')
        }),
      ).rejects.toThrow('roll back')
      await db.tx(async (q) => {
        await q.notify('db_test_channel', 'committed')
        await new Promise((r) => setTimeout(r, 100))
        expect(seen).toEqual([])
      })
      await until(() => seen.includes('committed'))
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          i % 2 ? db.notify('db_test_channel', `n${i}`) : db.tx((q) => q.notify('db_test_channel', `n${i}`)),
        ),
      )
      await until(() => seen.length === 51)
      expect(new Set(seen)).toEqual(new Set(['committed', ...Array.from({ length: 50 }, (_, i) => `n${i}`)]))
    } finally {
      await stop()
    }
  })
})
