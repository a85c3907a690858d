// The bench's arithmetic (bench/lib/stats.ts, writes.ts, rounds.ts): per-operation rates, the
// normalisation by a control, the spread of rounds and the per-swap write counts. No database: the
// snapshots are built here as PostgreSQL's views would give them.
import { describe, expect, it } from 'vitest'
import { roundsRows, roundsTable } from '../bench/lib/rounds.js'
import type { ScenarioResult } from '../bench/lib/report.js'
import { compare, cpuDelta, normalise, perOp, spreadOf } from '../bench/lib/stats.js'
import { lsnBytes, writesPerOp, type StatsSnapshot, type WalGroup } from '../bench/lib/writes.js'

describe('perOp and normalise', () => {
  it('divides the difference by the operations, and refuses what cannot be divided', () => {
    expect(perOp(1000, 2500, 1000)).toBe(1.5)
    expect(perOp(0, 1, 3)).toBe(0.333)
    expect(perOp(0, 1, 3, 4)).toBe(0.3333)
    expect(perOp(undefined, 5, 1)).toBeUndefined()
    expect(perOp(1, 5, 0)).toBeUndefined()
  })

  it('divides a figure by its control from the same run', () => {
    // 1.2 ms of server CPU per swap against 0.04 ms of client CPU per request: 30 client requests.
    expect(normalise(1.2, 0.04)).toBe(30)
    // A machine twice as slow doubles both, and the quotient stays.
    expect(normalise(2.4, 0.08)).toBe(30)
    expect(normalise(1.2, 0)).toBeUndefined()
    expect(normalise(undefined, 0.04)).toBeUndefined()
    expect(normalise(1.2, undefined)).toBeUndefined()
  })
})

describe('cpuDelta', () => {
  it('adds what each process spent between the readings, a new one whole, an ended one not at all', () => {
    const before = new Map([
      [10, 1000],
      [11, 500],
      [12, 70],
    ])
    const after = new Map([
      [10, 1600],
      [11, 500],
      [13, 40],
    ])
    // 600 + 0 + 40 (pid 13 started in between); pid 12 ended and takes nothing away.
    expect(cpuDelta(before, after)).toBe(640)
    expect(cpuDelta(new Map(), new Map())).toBe(0)
  })
})

describe('spread and comparison of rounds', () => {
  it('gives the mean and min–max of the values there are', () => {
    const s = spreadOf([10, undefined, 14, 12])!
    expect(s.values).toEqual([10, 14, 12])
    expect(s.mean).toBe(12)
    expect(s.min).toBe(10)
    expect(s.max).toBe(14)
    expect(s.relSpread).toBeCloseTo(4 / 12, 10)
    expect(spreadOf([undefined])).toBeUndefined()
  })

  it('pairs each round of after with its before, and says when the ranges do not overlap', () => {
    const c = compare([1.0, 1.2, 1.1], [0.8, 0.9, 0.88])!
    expect(c.ratio).toBeCloseTo((0.8 + 0.9 + 0.88) / 3 / 1.1, 10)
    expect(c.pairRatios.map((r) => Number(r.toFixed(4)))).toEqual([0.8, 0.75, 0.8])
    expect(c.ratioMin).toBeCloseTo(0.75, 10)
    expect(c.ratioMax).toBeCloseTo(0.8, 10)
    expect(c.outsideSpread).toBe(true)
    const within = compare([1.0, 1.2], [1.1, 1.15])!
    expect(within.outsideSpread).toBe(false)
    // A round missing on one side drops out of the pairs, not out of the means.
    const gap = compare([1, 2], [undefined, 3])!
    expect(gap.pairRatios).toEqual([1.5])
    expect(gap.before.mean).toBe(1.5)
    expect(compare([0], [1])).toBeUndefined()
  })

  it('builds one row per scenario and figure, rounds in order', () => {
    const result = (throughput: number, serverCpuNorm: number): ScenarioResult => ({
      id: 'swap-many',
      title: 'swaps',
      status: 'ok',
      unit: 'swaps/s',
      throughput,
      serverCpuNorm,
    })
    const rows = roundsRows(
      [
        { side: 'before', round: 1, results: [result(500, 30)] },
        { side: 'after', round: 1, results: [result(600, 27)] },
        { side: 'before', round: 2, results: [result(400, 31)] },
        { side: 'after', round: 2, results: [result(520, 26)] },
      ],
      'compare',
    )
    const norm = rows.find((r) => r.figure === 'server CPU norm')!
    expect(norm.before).toEqual([30, 31])
    expect(norm.after).toEqual([27, 26])
    expect(norm.comparison!.ratio).toBeCloseTo(26.5 / 30.5, 10)
    expect(norm.comparison!.outsideSpread).toBe(true)
    const tput = rows.find((r) => r.figure === 'throughput swaps/s')!
    expect(tput.comparison!.pairRatios).toEqual([1.2, 1.3])
    expect(rows.some((r) => r.figure === 'DB CPU ms/op')).toBe(false)
    expect(roundsTable(rows, 'compare')).toContain(
      '| swap-many | server CPU norm | 30.00, 31.00 | 30.50 | 30.00–31.00 |',
    )
    const repeat = roundsRows(
      [
        { side: 'only', round: 1, results: [result(500, 30)] },
        { side: 'only', round: 2, results: [result(400, 32)] },
      ],
      'repeat',
    )
    const r = repeat.find((x) => x.figure === 'server CPU norm')!
    expect(r.spread!.mean).toBe(31)
    expect(roundsTable(repeat, 'repeat')).toContain(
      '| swap-many | server CPU norm | 30.00, 32.00 | 31.00 | 30.00–32.00 | ±3.2% |',
    )
  })
})

describe('writes per operation', () => {
  it('reads an LSN as a 64-bit position', () => {
    expect(lsnBytes('0/16B3740', '0/16B3748')).toBe(8)
    expect(lsnBytes('0/FFFFFFF8', '1/8')).toBe(16)
    expect(() => lsnBytes('nonsense', '0/1')).toThrow(/not an LSN/)
  })

  const snapshot = (
    lsn: string,
    tables: StatsSnapshot['tables'],
    xactCommit: number,
    wal?: StatsSnapshot['wal'],
  ): StatsSnapshot => ({ lsn, tables, xactCommit, xactRollback: 0, ...(wal ? { wal } : {}) })
  const counters = (ins: number, upd: number, hotUpd: number, indexes: number) => ({
    ins,
    upd,
    hotUpd,
    del: 0,
    indexes,
    partialIndexes: 0,
  })

  it('divides the statistics deltas by the operations, index entries estimated per table', () => {
    const before = snapshot(
      '0/1000000',
      { transactions: counters(100, 50, 10, 6), holds: counters(100, 100, 0, 2) },
      1000,
      { records: 5000, bytes: 400_000, fpi: 3 },
    )
    const after = snapshot(
      '0/1010000',
      {
        transactions: counters(300, 250, 30, 6),
        holds: counters(300, 300, 0, 2),
        postings: counters(800, 0, 0, 3),
      },
      1500,
      { records: 18_000, bytes: 1_700_000, fpi: 3 },
    )
    const w = writesPerOp({ before, after, ops: 200, walSource: 'none' })!
    // transactions: +200 ins, +200 upd of which +20 HOT; holds +200/+200; postings +800 (new table).
    expect(w.rowsInserted).toBe(6)
    expect(w.rowsUpdated).toBe(2)
    expect(w.rowsHotUpdated).toBe(0.1)
    // (200 + 200 - 20) x 6 + (200 + 200) x 2 + 800 x 3 = 2280 + 800 + 2400 = 5480 entries.
    expect(w.indexEntriesEstimated).toBe(27.4)
    expect(w.commits).toBe(2.5)
    expect(w.serverWalRecords).toBe(65)
    expect(w.serverWalBytes).toBe(6500)
    expect(w.serverLsnBytes).toBe(Math.round(0x10000 / 200))
    expect(w.wal).toBeUndefined()
    expect(w.notifyCalls).toBeUndefined()
    expect(w.notifySource).toMatch(/unavailable/)
    const tx = w.byTable.find((t) => t.table === 'transactions')!
    expect(tx).toMatchObject({ ins: 1, upd: 1, hotUpd: 0.1, indexes: 6, indexEntriesEstimated: 11.4 })
    expect(writesPerOp({ before, after, ops: 0, walSource: 'none' })).toBeUndefined()
  })

  it('counts the WAL by record type: rows, HOT updates, index entries, commits, bytes', () => {
    const g = (
      rmgr: string,
      type: string,
      table: string,
      count: number,
      bytes: number,
      leafSplit = false,
    ): WalGroup => ({
      rmgr,
      type,
      relation: table,
      table,
      kind: table ? 'table' : '',
      leafSplit,
      count,
      bytes,
      fpiBytes: 0,
    })
    const groups = [
      g('Heap', 'INSERT', 'transactions', 100, 20_000),
      g('Heap', 'INSERT+INIT', 'postings', 10, 1_000),
      g('Heap', 'HOT_UPDATE', 'wallets', 300, 30_000),
      g('Heap', 'UPDATE', 'transactions', 100, 15_000),
      g('Heap', 'LOCK', 'transactions', 100, 5_400),
      g('Btree', 'INSERT_LEAF', 'transactions', 700, 50_000),
      g('Btree', 'INSERT_POST', 'transactions', 46, 3_000),
      g('Btree', 'SPLIT_R', 'transactions', 4, 30_000, true),
      g('Btree', 'SPLIT_L', 'transactions', 1, 8_000, false),
      g('Btree', 'DEDUP', 'transactions', 5, 1_000),
      g('Transaction', 'COMMIT', '', 200, 6_800),
    ]
    const s = snapshot('0/0', {}, 0)
    const w = writesPerOp({ before: s, after: s, ops: 100, walGroups: groups, walSource: 'walinspect' })!
    expect(w.wal).toEqual({
      records: 15.66,
      bytes: 1_702,
      fpiBytes: 0,
      heapInserts: 1.1,
      heapUpdates: 1,
      heapHotUpdates: 3,
      rowLocks: 1,
      // INSERT_LEAF + INSERT_POST + the leaf split (an upper-level split adds no entry; DEDUP none).
      indexEntries: 7.5,
      writeCommits: 2,
    })
    const tx = w.byTable.find((t) => t.table === 'transactions')!
    expect(tx.walIndexEntries).toBe(7.5)
    expect(tx.walRecords).toBe(10.56)
    expect(tx).toMatchObject({ walIns: 1, walUpd: 1, walHotUpd: 0 })
    expect(w.byTable.find((t) => t.table === 'wallets')).toMatchObject({ walHotUpd: 3, walIns: 0 })
    expect(w.byTable.some((t) => t.table === '')).toBe(false)
  })
})
