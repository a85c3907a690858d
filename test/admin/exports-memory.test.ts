import { readFileSync } from 'node:fs'
import { get } from 'node:http'
import { afterAll, describe, expect, it } from 'vitest'
import { createPgliteDb, createPostgresDb } from '../../src/db/db.js'
import { migrate } from '../../src/db/migrate.js'
import { ENGINE } from '../helpers/harness.js'
import { seedExportRows } from '../helpers/export-seed.js'
import {
  createServiceStore,
  sleep,
  startServiceProcess,
  type ServiceProcess,
  type ServiceStore,
} from '../helpers/service-process.js'

/**
 * 100,000 rows exported from a server running as a process of its own, whose resident memory is
 * read from /proc while it streams them: the download pauses for a while after its first chunk (a
 * slow client), and the server must wait rather than read ahead, then the rest comes through.
 * Holding the rows would cost far more than the bound (see RSS_GROWTH_MAX). Both exports' row counts and sample rows are checked.
 */
const N = 100_000
const A = 'acc_exportmem'
const baseMs = Date.UTC(2026, 0, 1)
// Growth of the server's resident memory during an export, over its level after a warm-up export. Measured on this
// test's machine: streaming grew it by some 25 MB on PostgreSQL and 45 to 50 MB on PGlite (whose
// WebAssembly memory grows too), the garbage of the batches not yet collected; the same export
// reading all rows in one query (the batch size set above the row count) grew it by 190 MB.
const RSS_GROWTH_MAX = 88 * 1024 * 1024

describe(`admin exports of ${N} rows with bounded server memory (${ENGINE})`, () => {
  let store: ServiceStore | undefined
  let server: ServiceProcess | undefined
  afterAll(async () => {
    await server?.stop()
    await store?.cleanup()
  })

  const rss = (pid: number): number => {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return Number(kb) * 1024
  }

  /** The server's resident memory once it has been idle a moment. */
  const settledRss = async () => {
    await sleep(500)
    return rss(server!.proc.pid!)
  }

  /** Downloads `path`, pausing after the first chunk; counts lines, keeps those `keep` selects. */
  async function download(
    path: string,
    keep: (line: string) => boolean,
    pauseMs: number,
  ): Promise<{ status: number; lines: number; bytes: number; kept: string[]; peakRss: number }> {
    const pid = server!.proc.pid!
    let peakRss = rss(pid)
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rss(pid))), 25)
    try {
      return await new Promise((done, fail) => {
        const req = get(
          `${server!.base}${path}`,
          { headers: { authorization: `Bearer ${store!.adminToken}` } },
          (res) => {
            let rest = ''
            let lines = 0
            let bytes = 0
            let paused = false
            const kept: string[] = []
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => {
              bytes += Buffer.byteLength(chunk)
              const parts = (rest + chunk).split('\r\n')
              rest = parts.pop()!
              lines += parts.length
              for (const l of parts) if (keep(l)) kept.push(l)
              if (!paused && pauseMs > 0) {
                paused = true
                res.pause()
                setTimeout(() => res.resume(), pauseMs)
              }
            })
            res.on('end', () => done({ status: res.statusCode!, lines, bytes, kept, peakRss }))
            res.on('error', fail)
          },
        )
        req.on('error', fail)
      })
    } finally {
      clearInterval(sampler)
    }
  }

  it('streams both exports, every row, without holding them', { timeout: 600_000 }, async () => {
    store = await createServiceStore(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {})
    // The rows go in before the server starts: the embedded database has one owner at a time.
    const db = store.databaseUrl ? createPostgresDb(store.databaseUrl) : await createPgliteDb(store.dataDir)
    try {
      await migrate(db)
      await seedExportRows(db, { accountId: A, n: N, baseMs })
    } finally {
      await db.close()
    }
    server = await startServiceProcess(store.env)
    const range = `from=2026-01-01&to=2026-01-03`

    // A warm-up: the code paths compiled, the database's caches and the server's buffers in use.
    for (const kind of ['transactions', 'ledger-entries'])
      for (let i = 0; i < 2; i++) {
        const warm = await download(
          `/admin/exports/${kind}.csv?from=2026-01-01&to=${baseMs + 5_000_000}`,
          () => false,
          0,
        )
        expect(warm.status).toBe(200)
      }
    let baseline = await settledRss()

    const sample = (g: number) => `txn_exp${String(g).padStart(20, '0')},`
    const txns = await download(
      `/admin/exports/transactions.csv?accountId=${A}&${range}`,
      (l) => [1, 50_000, 100_000].some((g) => l.startsWith(sample(g))),
      3_000,
    )
    expect(txns.status).toBe(200)
    expect(txns.lines).toBe(1 + N)
    expect(txns.bytes).toBeGreaterThan(15_000_000)
    expect(txns.kept).toEqual([
      `txn_exp00000000000000000001,2026-01-01T00:00:01.000Z,2026-01-01T00:00:01.000Z,${A},"ref,1",swap,` +
        'completed,BTC,svcpay,0.00123457,0.00000001,0,,USD,svcpay,0.01,0.01,0.0001,,',
      `txn_exp00000000000000050000,2026-01-01T13:53:20.000Z,2026-01-01T13:53:20.000Z,${A},"ref,50000",swap,` +
        "completed,BTC,svcpay,61.7285,0.00000006,0,,USD,svcpay,500,500,0.0001,,'=1+50000",
      `txn_exp00000000000000100000,2026-01-02T03:46:40.000Z,2026-01-02T03:46:40.000Z,${A},"ref,100000",swap,` +
        "completed,BTC,svcpay,123.457,0.00000005,0,,USD,svcpay,1000,1000,0.0001,,'=1+100000",
    ])
    const txnGrowth = txns.peakRss - baseline
    expect(txnGrowth, `RSS grew ${txnGrowth} bytes for a ${txns.bytes}-byte export`).toBeLessThan(
      RSS_GROWTH_MAX,
    )

    baseline = await settledRss()
    const postings = await download(
      `/admin/exports/ledger-entries.csv?${range}`,
      (l) => l.includes(',txn_exp00000000000000050000,'),
      3_000,
    )
    expect(postings.status).toBe(200)
    expect(postings.lines).toBe(1 + N)
    expect(postings.kept.map((l) => l.split(',').slice(2).join(','))).toEqual([
      `2026-01-01T13:53:20.000Z,txn_exp00000000000000050000,export_test,wal_export_${A},${A},wallet,BTC,0.50000001`,
      '2026-01-01T13:53:20.000Z,txn_exp00000000000000050000,export_test,sys:sandbox-funding:BTC,,system,BTC,-0.50000001',
    ])
    const postingGrowth = postings.peakRss - baseline
    expect(postingGrowth, `RSS grew ${postingGrowth} bytes for a ${postings.bytes}-byte export`).toBeLessThan(
      RSS_GROWTH_MAX,
    )
    console.log(
      `exports of ${N} rows: RSS growth ${(txnGrowth / 2 ** 20).toFixed(1)} MiB (transactions, ` +
        `${(txns.bytes / 2 ** 20).toFixed(1)} MiB of CSV), ${(postingGrowth / 2 ** 20).toFixed(1)} MiB (postings, ` +
        `${(postings.bytes / 2 ** 20).toFixed(1)} MiB)`,
    )
  })
})
