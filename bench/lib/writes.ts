import type pg from 'pg'
import { roundTo } from './stats.js'

/**
 * What a load wrote to the bench database, per operation: rows, index entries, WAL records and
 * bytes, commits. Two sources, both read before and after the measured run:
 *
 * - PostgreSQL's statistics: `pg_stat_user_tables` (n_tup_ins, n_tup_upd, n_tup_hot_upd per table)
 *   and `pg_stat_database.xact_commit` of the bench database, `pg_stat_wal` (wal_records,
 *   wal_bytes) and `pg_current_wal_lsn()` of the whole server. Index entries are estimated from
 *   them as (inserts + non-HOT updates) x the table's indexes, an upper bound (a partial index
 *   takes no entry for a row outside its predicate). The server's statistics are the cluster's:
 *   other databases on it (the tests of other work) write WAL too.
 * - The WAL itself, through `pg_walinspect` (PostgreSQL 15's contrib, created in the bench database
 *   when it can be): every record between the two LSNs whose block references name a relation of
 *   the bench database, and the commit records of the transactions that wrote them. Exact counts
 *   by record type (a btree INSERT_LEAF is one index entry), attributed to each table and index,
 *   and untouched by other databases.
 *
 * `pg_stat_statements` is read too when it is loaded (it needs shared_preload_libraries, which the
 * bench does not change): the calls of `pg_notify`, each its own commit on the notifier's
 * connection. Without it, that figure is reported as unavailable.
 */
export interface TableCounters {
  ins: number
  upd: number
  hotUpd: number
  del: number
  /** Indexes on the table, and how many of them are partial. */
  indexes: number
  partialIndexes: number
}

export interface StatsSnapshot {
  lsn: string
  tables: Record<string, TableCounters>
  xactCommit: number
  xactRollback: number
  /** pg_stat_wal (server-wide); undefined where the view is missing (before PostgreSQL 14). */
  wal?: { records: number; bytes: number; fpi: number }
  /** Calls of statements that notify, from pg_stat_statements; undefined when it is not loaded. */
  notifyCalls?: number
}

/** One group of WAL records: a record type on one relation of the bench database (or none: commits). */
export interface WalGroup {
  rmgr: string
  type: string
  /** The relation named by the record's first block reference, as table or `index (table)`; '' for none. */
  relation: string
  /** The table the relation belongs to (itself, an index's table, a TOAST table's owner). */
  table: string
  kind: 'table' | 'index' | 'toast' | 'other' | ''
  /** A btree split of a leaf page (it carries the new entry). */
  leafSplit: boolean
  count: number
  bytes: number
  fpiBytes: number
}

export interface WritesPerOp {
  ops: number
  /** From pg_stat_user_tables. */
  rowsInserted: number
  rowsUpdated: number
  rowsHotUpdated: number
  rowsDeleted: number
  /** (n_tup_ins + n_tup_upd - n_tup_hot_upd) x indexes of the table, summed: an upper bound. */
  indexEntriesEstimated: number
  /** pg_stat_database.xact_commit: every commit, read-only statements outside a transaction included. */
  commits: number
  rollbacks: number
  /** Server-wide: pg_stat_wal and the LSN difference (other databases' WAL included). */
  serverWalRecords?: number
  serverWalBytes?: number
  serverWalFpi?: number
  serverLsnBytes: number
  notifyCalls?: number
  /** From the WAL (pg_walinspect), the bench database only. */
  wal?: {
    records: number
    bytes: number
    fpiBytes: number
    heapInserts: number
    heapUpdates: number
    heapHotUpdates: number
    rowLocks: number
    indexEntries: number
    /** COMMIT records of the transactions that wrote the bench database. */
    writeCommits: number
  }
  /** Per table, per operation: rows and index entries, and its WAL (table, TOAST and indexes together). */
  byTable: Array<{
    table: string
    ins: number
    upd: number
    hotUpd: number
    indexes: number
    partialIndexes: number
    indexEntriesEstimated: number
    walRecords?: number
    walBytes?: number
    walIndexEntries?: number
    /** Heap INSERT, UPDATE (non-HOT) and HOT_UPDATE records of the table in the WAL. */
    walIns?: number
    walUpd?: number
    walHotUpd?: number
  }>
  /** Where the WAL figures came from, or why they are missing. */
  walSource: string
  notifySource: string
}

/** The bytes between two LSNs (`X/Y`, both hexadecimal halves of a 64-bit position). */
export function lsnBytes(from: string, to: string): number {
  return Number(lsnToBigint(to) - lsnToBigint(from))
}

export function lsnToBigint(lsn: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn)
  if (!m) throw new Error(`not an LSN: ${lsn}`)
  return (BigInt('0x' + m[1]) << 32n) + BigInt('0x' + m[2])
}

const HEAP_INSERT = new Set(['INSERT', 'INSERT+INIT'])
const HEAP_UPDATE = new Set(['UPDATE', 'UPDATE+INIT'])
const HEAP_HOT = new Set(['HOT_UPDATE', 'HOT_UPDATE+INIT'])
/** Btree records that add one entry: a leaf insert, an insert into a posting list, a leaf split (with its new item). */
const BTREE_ENTRY = new Set(['INSERT_LEAF', 'INSERT_POST'])

/** The per-operation figures from two snapshots and the WAL groups read between them. */
export function writesPerOp(input: {
  before: StatsSnapshot
  after: StatsSnapshot
  ops: number
  walGroups?: WalGroup[]
  walSource: string
}): WritesPerOp | undefined {
  const { before, after, ops } = input
  if (!(ops > 0)) return undefined
  const per = (n: number) => roundTo(n / ops, 2)
  const byTable = new Map<string, WritesPerOp['byTable'][number]>()
  let ins = 0
  let upd = 0
  let hot = 0
  let del = 0
  let entries = 0
  for (const [table, a] of Object.entries(after.tables)) {
    const b = before.tables[table] ?? { ins: 0, upd: 0, hotUpd: 0, del: 0 }
    const dIns = a.ins - b.ins
    const dUpd = a.upd - b.upd
    const dHot = a.hotUpd - b.hotUpd
    const dDel = a.del - b.del
    const dEntries = (dIns + dUpd - dHot) * a.indexes
    ins += dIns
    upd += dUpd
    hot += dHot
    del += dDel
    entries += dEntries
    if (dIns || dUpd || dDel)
      byTable.set(table, {
        table,
        ins: per(dIns),
        upd: per(dUpd),
        hotUpd: per(dHot),
        indexes: a.indexes,
        partialIndexes: a.partialIndexes,
        indexEntriesEstimated: per(dEntries),
      })
  }
  let wal: WritesPerOp['wal']
  if (input.walGroups) {
    const w = {
      records: 0,
      bytes: 0,
      fpiBytes: 0,
      heapInserts: 0,
      heapUpdates: 0,
      heapHotUpdates: 0,
      rowLocks: 0,
      indexEntries: 0,
      writeCommits: 0,
    }
    const tableWal = new Map<
      string,
      { records: number; bytes: number; entries: number; ins: number; upd: number; hot: number }
    >()
    for (const g of input.walGroups) {
      w.records += g.count
      w.bytes += g.bytes
      w.fpiBytes += g.fpiBytes
      const heap = g.rmgr === 'Heap'
      const ins = heap && HEAP_INSERT.has(g.type) ? g.count : 0
      const upd = heap && HEAP_UPDATE.has(g.type) ? g.count : 0
      const hot = heap && HEAP_HOT.has(g.type) ? g.count : 0
      w.heapInserts += ins
      w.heapUpdates += upd
      w.heapHotUpdates += hot
      if ((heap && g.type === 'LOCK') || (g.rmgr === 'Heap2' && g.type === 'LOCK_UPDATED'))
        w.rowLocks += g.count
      const entry =
        g.rmgr === 'Btree' && (BTREE_ENTRY.has(g.type) || (g.type.startsWith('SPLIT_') && g.leafSplit))
      if (entry) w.indexEntries += g.count
      if (g.rmgr === 'Transaction' && g.type.startsWith('COMMIT')) w.writeCommits += g.count
      if (g.table) {
        const t = tableWal.get(g.table) ?? { records: 0, bytes: 0, entries: 0, ins: 0, upd: 0, hot: 0 }
        t.records += g.count
        t.bytes += g.bytes
        if (entry) t.entries += g.count
        t.ins += ins
        t.upd += upd
        t.hot += hot
        tableWal.set(g.table, t)
      }
    }
    wal = {
      records: per(w.records),
      bytes: Math.round(w.bytes / ops),
      fpiBytes: Math.round(w.fpiBytes / ops),
      heapInserts: per(w.heapInserts),
      heapUpdates: per(w.heapUpdates),
      heapHotUpdates: per(w.heapHotUpdates),
      rowLocks: per(w.rowLocks),
      indexEntries: per(w.indexEntries),
      writeCommits: per(w.writeCommits),
    }
    for (const [table, t] of tableWal) {
      const row = byTable.get(table) ?? {
        table,
        ins: 0,
        upd: 0,
        hotUpd: 0,
        indexes: after.tables[table]?.indexes ?? 0,
        partialIndexes: after.tables[table]?.partialIndexes ?? 0,
        indexEntriesEstimated: 0,
      }
      row.walRecords = per(t.records)
      row.walBytes = Math.round(t.bytes / ops)
      row.walIndexEntries = per(t.entries)
      row.walIns = per(t.ins)
      row.walUpd = per(t.upd)
      row.walHotUpd = per(t.hot)
      byTable.set(table, row)
    }
  }
  const diff = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? undefined : a - b
  const serverWalRecords = diff(after.wal?.records, before.wal?.records)
  const serverWalBytes = diff(after.wal?.bytes, before.wal?.bytes)
  const serverWalFpi = diff(after.wal?.fpi, before.wal?.fpi)
  const notify = diff(after.notifyCalls, before.notifyCalls)
  return {
    ops,
    rowsInserted: per(ins),
    rowsUpdated: per(upd),
    rowsHotUpdated: per(hot),
    rowsDeleted: per(del),
    indexEntriesEstimated: per(entries),
    commits: per(after.xactCommit - before.xactCommit),
    rollbacks: per(after.xactRollback - before.xactRollback),
    ...(serverWalRecords !== undefined ? { serverWalRecords: per(serverWalRecords) } : {}),
    ...(serverWalBytes !== undefined ? { serverWalBytes: Math.round(serverWalBytes / ops) } : {}),
    ...(serverWalFpi !== undefined ? { serverWalFpi: per(serverWalFpi) } : {}),
    serverLsnBytes: Math.round(lsnBytes(before.lsn, after.lsn) / ops),
    ...(notify !== undefined ? { notifyCalls: per(notify) } : {}),
    ...(wal ? { wal } : {}),
    byTable: [...byTable.values()].sort((x, y) => (y.walRecords ?? 0) - (x.walRecords ?? 0) || y.ins - x.ins),
    walSource: input.walSource,
    notifySource:
      notify !== undefined
        ? 'pg_stat_statements: calls of the statements that call the notify function, bench database'
        : 'unavailable: pg_stat_statements is not loaded (shared_preload_libraries); not changed by the bench',
  }
}

/** The extensions the counting uses, in the bench database, where the server allows them. */
export async function prepareWriteCounting(
  c: pg.Client,
): Promise<{ walinspect: boolean; statements: boolean; notes: string[] }> {
  const notes: string[] = []
  const tryCreate = async (ext: string) => {
    try {
      await c.query(`CREATE EXTENSION IF NOT EXISTS ${ext}`)
      return true
    } catch (err) {
      notes.push(`${ext}: ${(err as Error).message}`)
      return false
    }
  }
  const walinspect = await tryCreate('pg_walinspect')
  let statements = await tryCreate('pg_stat_statements')
  if (statements) {
    try {
      await c.query('SELECT 1 FROM pg_stat_statements LIMIT 1')
    } catch (err) {
      // The extension's objects exist, but the module is not loaded: its view refuses to answer.
      notes.push(`pg_stat_statements: ${(err as Error).message}`)
      statements = false
    }
  }
  return { walinspect, statements, notes }
}

/** The statistics of the bench database (and the server's WAL position) right now. */
export async function statsSnapshot(c: pg.Client, opts: { statements: boolean }): Promise<StatsSnapshot> {
  const lsn = (await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn
  const tables: Record<string, TableCounters> = {}
  const t = await c.query<{
    relname: string
    ins: string
    upd: string
    hot: string
    del: string
    indexes: string
    partial: string
  }>(
    `SELECT s.relname, s.n_tup_ins AS ins, s.n_tup_upd AS upd, s.n_tup_hot_upd AS hot, s.n_tup_del AS del,
            count(i.indexrelid) AS indexes, count(i.indexrelid) FILTER (WHERE i.indpred IS NOT NULL) AS partial
       FROM pg_stat_user_tables s LEFT JOIN pg_index i ON i.indrelid = s.relid
      GROUP BY s.relname, s.n_tup_ins, s.n_tup_upd, s.n_tup_hot_upd, s.n_tup_del`,
  )
  for (const r of t.rows)
    tables[r.relname] = {
      ins: Number(r.ins),
      upd: Number(r.upd),
      hotUpd: Number(r.hot),
      del: Number(r.del),
      indexes: Number(r.indexes),
      partialIndexes: Number(r.partial),
    }
  const d = await c.query<{ commit: string; rollback: string }>(
    `SELECT xact_commit AS commit, xact_rollback AS rollback FROM pg_stat_database WHERE datname = current_database()`,
  )
  let wal: StatsSnapshot['wal']
  try {
    const w = await c.query<{ records: string; bytes: string; fpi: string }>(
      'SELECT wal_records AS records, wal_bytes AS bytes, wal_fpi AS fpi FROM pg_stat_wal',
    )
    wal = {
      records: Number(w.rows[0]!.records),
      bytes: Number(w.rows[0]!.bytes),
      fpi: Number(w.rows[0]!.fpi),
    }
  } catch {
    wal = undefined
  }
  let notifyCalls: number | undefined
  if (opts.statements) {
    const n = await c.query<{ calls: string }>(
      `SELECT coalesce(sum(calls), 0) AS calls FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query ILIKE '%pg\\_notify%'`,
    )
    notifyCalls = Number(n.rows[0]!.calls)
  }
  return {
    lsn,
    tables,
    xactCommit: Number(d.rows[0]!.commit),
    xactRollback: Number(d.rows[0]!.rollback),
    ...(wal ? { wal } : {}),
    ...(notifyCalls !== undefined ? { notifyCalls } : {}),
  }
}

/**
 * The WAL records between two LSNs that belong to the bench database, grouped by type and
 * relation. The end is held to the WAL flushed so far (pg_walinspect refuses a "future end LSN":
 * `to` is an insert position, and another backend's records before it may not be flushed yet; the
 * load's own commits were flushed before they were answered). Records whose block references
 * name one of its relations (`rel <tablespace>/<db oid>/<relfilenode>`), and the transaction
 * records (commits) of the transactions that wrote them.
 */
export async function walGroups(c: pg.Client, from: string, to: string): Promise<WalGroup[]> {
  const oid = (
    await c.query<{ oid: string }>('SELECT oid FROM pg_database WHERE datname = current_database()')
  ).rows[0]!.oid
  const like = `%rel %/${oid}/%`
  const r = await c.query<{
    rmgr: string
    type: string
    filenode: string | null
    leaf: boolean
    count: string
    bytes: string
    fpi: string
  }>(
    `WITH r AS MATERIALIZED (
       SELECT xid, resource_manager, record_type, record_length, fpi_length, description, block_ref
         FROM pg_get_wal_records_info($1::pg_lsn, LEAST($2::pg_lsn, pg_current_wal_flush_lsn()))),
     mine AS (SELECT DISTINCT xid FROM r WHERE xid <> 0 AND block_ref LIKE $3)
     SELECT resource_manager AS rmgr, record_type AS type,
            substring(block_ref FROM ('rel [0-9]+/' || $4 || '/([0-9]+)')) AS filenode,
            coalesce(description LIKE 'level 0,%', false) AS leaf,
            count(*) AS count, sum(record_length) AS bytes, sum(fpi_length) AS fpi
       FROM r
      WHERE block_ref LIKE $3 OR (resource_manager = 'Transaction' AND xid IN (SELECT xid FROM mine))
      GROUP BY 1, 2, 3, 4`,
    [from, to, like, oid],
  )
  // Relation names by file node, now (a relation rewritten during the run keeps its old node unnamed).
  const names = await c.query<{ filenode: string; relname: string; kind: string; tbl: string }>(
    `SELECT pg_relation_filenode(c.oid)::text AS filenode, c.relname,
            CASE c.relkind WHEN 'r' THEN 'table' WHEN 'i' THEN 'index' WHEN 't' THEN 'toast' ELSE 'other' END AS kind,
            coalesce(t.relname, o.relname, c.relname) AS tbl
       FROM pg_class c
       LEFT JOIN pg_index i ON i.indexrelid = c.oid
       LEFT JOIN pg_class t ON t.oid = i.indrelid
       LEFT JOIN pg_class o ON o.reltoastrelid = c.oid
      WHERE pg_relation_filenode(c.oid) IS NOT NULL`,
  )
  const byNode = new Map(names.rows.map((n) => [n.filenode, n]))
  return r.rows.map((g) => {
    const n = g.filenode ? byNode.get(g.filenode) : undefined
    return {
      rmgr: g.rmgr,
      type: g.type,
      relation: n ? n.relname : g.filenode ? `filenode ${g.filenode}` : '',
      table: n ? n.tbl : g.filenode ? `filenode ${g.filenode}` : '',
      kind: n ? (n.kind as WalGroup['kind']) : g.filenode ? 'other' : '',
      leafSplit: g.leaf,
      count: Number(g.count),
      bytes: Number(g.bytes),
      fpiBytes: Number(g.fpi),
    }
  })
}
