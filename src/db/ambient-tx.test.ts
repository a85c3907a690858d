import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDb, ENGINE } from '../../test/helpers/harness.js'
import { inOneTransaction, joinAmbientTransactions } from './ambient-tx.js'
import type { Db } from './db.js'

describe(`one ambient transaction (${ENGINE})`, () => {
  let base: { db: Db; drop(): Promise<void> }
  let db: Db
  const count = async () => Number((await db.query('SELECT count(*) AS n FROM ambient_t')).rows[0].n)

  beforeAll(async () => {
    base = await createTestDb()
    db = joinAmbientTransactions(base.db)
    await db.query('CREATE TABLE ambient_t (v text PRIMARY KEY)')
  })
  afterAll(async () => {
    await base.db.close()
    await base.drop()
  })

  it('commits or undoes together every query and nested transaction of the work', async () => {
    await expect(
      inOneTransaction(db, async () => {
        await db.query(`INSERT INTO ambient_t VALUES ('a')`)
        await db.tx((q) => q.query(`INSERT INTO ambient_t VALUES ('b')`))
        throw new Error('the work fails after both')
      }),
    ).rejects.toThrow('the work fails')
    expect(await count()).toBe(0)
    await inOneTransaction(db, async (q) => {
      await db.query(`INSERT INTO ambient_t VALUES ('a')`)
      await db.tx((t) => t.query(`INSERT INTO ambient_t VALUES ('b')`))
      await q.query(`INSERT INTO ambient_t VALUES ('c')`)
    })
    expect(await count()).toBe(3)
  })

  it('makes a nested transaction a savepoint: its failure undoes only itself', async () => {
    await inOneTransaction(db, async () => {
      await db.query(`INSERT INTO ambient_t VALUES ('d')`)
      // A duplicate key inside the nested transaction: caught by the work, which goes on.
      await expect(db.tx((q) => q.query(`INSERT INTO ambient_t VALUES ('a')`))).rejects.toThrow()
      await db.query(`INSERT INTO ambient_t VALUES ('e')`)
    })
    expect((await db.query(`SELECT v FROM ambient_t ORDER BY v`)).rows.map((r) => r.v)).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
    ])
  })

  it('lets work outliving its transaction use the pool, not the finished transaction', async () => {
    let later: Promise<unknown> | undefined
    await inOneTransaction(db, async () => {
      later = new Promise((resolve) => setTimeout(resolve, 20)).then(() =>
        db.query(`INSERT INTO ambient_t VALUES ('late')`),
      )
    })
    await later
    expect((await db.query(`SELECT v FROM ambient_t WHERE v = 'late'`)).rows).toHaveLength(1)
  })
})
