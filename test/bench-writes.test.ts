// The bench's write counting (bench/lib/writes.ts) against a real PostgreSQL: known writes to a
// scratch database, counted from the WAL (pg_walinspect) and from the statistics views. Runs when
// TEST_DATABASE_URL points at a PostgreSQL 15 with its contrib modules (the suite's PostgreSQL run).
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  prepareWriteCounting,
  statsSnapshot,
  walGroups,
  writesPerOp,
  type StatsSnapshot,
  type WalGroup,
} from '../bench/lib/writes.js'

const BASE = process.env.TEST_DATABASE_URL

describe.skipIf(!BASE)('bench write counting on PostgreSQL', () => {
  const name = `svcpay_bw_${randomBytes(6).toString('hex')}`
  let c: pg.Client
  let walinspect = false
  let before: StatsSnapshot
  let after: StatsSnapshot
  let groups: WalGroup[]

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: BASE })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    await admin.end()
    const url = new URL(BASE!)
    url.pathname = `/${name}`
    c = new pg.Client({ connectionString: url.toString() })
    await c.connect()
    // Half-full pages leave room for updates in place (HOT).
    await c.query(
      'CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL, w int NOT NULL, x int) WITH (fillfactor = 50)',
    )
    await c.query('CREATE INDEX t_v ON t (v)')
    // A partial index no row of the test meets: it takes no entry.
    await c.query('CREATE INDEX t_w_negative ON t (w) WHERE w < 0')
    const counting = await prepareWriteCounting(c)
    walinspect = counting.walinspect
    before = await statsSnapshot(c, counting)
    // Three transactions: 1,000 inserts (splitting leaf pages of both full indexes), 100 updates of
    // an unindexed column (HOT), 10 updates of an indexed one (not HOT: an entry in every index
    // whose predicate the row meets, the primary key and t_v).
    await c.query('INSERT INTO t (id, v, w) SELECT g, g, g FROM generate_series(1, 1000) g')
    await c.query('UPDATE t SET x = 1 WHERE id <= 100')
    await c.query('UPDATE t SET v = v + 5000 WHERE id > 990')
    // This backend's statistics reach the shared views at its next report; force that one.
    await c.query('SELECT pg_stat_force_next_flush()')
    after = await statsSnapshot(c, counting)
    groups = walinspect ? await walGroups(c, before.lsn, after.lsn) : []
  })

  afterAll(async () => {
    await c?.end()
    const admin = new pg.Client({ connectionString: BASE })
    await admin.connect()
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  })

  it('counts rows, HOT updates, index entries and commits from the WAL', () => {
    expect(walinspect).toBe(true)
    const w = writesPerOp({ before, after, ops: 10, walGroups: groups, walSource: 'test' })!
    expect(groups.some((g) => g.rmgr === 'Btree' && g.type.startsWith('SPLIT_') && g.leafSplit)).toBe(true)
    expect(w.wal).toMatchObject({
      heapInserts: 100,
      heapHotUpdates: 10,
      heapUpdates: 1,
      // (1,000 inserts + 10 non-HOT updates) x 2 indexes; the partial index none.
      indexEntries: 202,
      writeCommits: 0.3,
    })
    const t = w.byTable.find((r) => r.table === 't')!
    expect(t).toMatchObject({ walIns: 100, walHotUpd: 10, walUpd: 1, walIndexEntries: 202 })
    expect(t.indexes).toBe(3)
    expect(t.partialIndexes).toBe(1)
  })

  it('counts the same rows from the statistics views, index entries as an upper bound', () => {
    const w = writesPerOp({ before, after, ops: 10, walSource: 'test' })!
    expect(w.rowsInserted).toBe(100)
    expect(w.rowsUpdated).toBe(11)
    expect(w.rowsHotUpdated).toBe(10)
    // (1,000 + 110 - 100) x 3 indexes: the partial one counted as if it took entries.
    expect(w.indexEntriesEstimated).toBe(303)
    expect(w.serverLsnBytes).toBeGreaterThan(0)
  })
})
