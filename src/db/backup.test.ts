import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { gunzipSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backupPglite, restorePglite, writeArchiveFile, BackupError } from './backup.js'
import { createPgliteDb, type Db } from './db.js'
import { sql } from './sql.js'

/**
 * The embedded engine's archive: a copy made while the database is open holds every committed row
 * and is restored into a directory that opens as the same database; an archive that is truncated,
 * altered or names a path outside a cluster is refused before anything in the data directory
 * changes.
 */
describe('backup archives of the embedded engine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svcpay-archive-'))
  const data = join(dir, 'data')
  const file = join(dir, 'one.backup')
  let db: Db

  beforeAll(async () => {
    db = await createPgliteDb(data)
    await db.query(sql`CREATE TABLE kept (n int8 PRIMARY KEY)`)
    for (let i = 1; i <= 50; i++) await db.query(sql`INSERT INTO kept VALUES (${i})`)
    const header = await backupPglite(db, data, (archive) => writeArchiveFile(archive, file))
    expect(header).toMatchObject({
      format: 'svcpay-pglite-backup',
      engine: 'pglite',
      files: expect.any(Number),
    })
    // Written after the copy: not in it.
    await db.query(sql`INSERT INTO kept VALUES (51)`)
    await db.close()
  }, 120_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const bytes = () => gunzipSync(readFileSync(file))
  const restore = (raw: Buffer) => restorePglite(Readable.from([gzipSync(raw)]), data, Date.now())
  const clusterNow = () =>
    readdirSync(data)
      .filter((n) => !n.startsWith('.'))
      .sort()

  it('refuses a truncated, altered or foreign archive and leaves the data directory as it was', async () => {
    const before = clusterNow()
    const raw = bytes()
    const altered = Buffer.from(raw)
    altered[altered.length - 200] = altered[altered.length - 200]! ^ 1
    const evil = Buffer.concat([
      raw.subarray(0, raw.indexOf(10) + 1),
      Buffer.from(JSON.stringify({ path: '../outside', size: 1 }) + '\nx'),
    ])
    for (const [what, archive, message] of [
      ['truncated', raw.subarray(0, Math.floor(raw.length / 2)), /truncated/],
      ['altered', altered, /damaged|not JSON|truncated/],
      ['outside', evil, /outside a database cluster/],
      ['foreign', Buffer.from('{"format":"tar"}\n'), /not a svcpay backup/],
    ] as const) {
      const err = await restore(archive as Buffer).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err, what).toBeInstanceOf(BackupError)
      expect((err as Error).message, what).toMatch(message as RegExp)
      expect(clusterNow(), what).toEqual(before)
      expect(
        readdirSync(data).filter((n) => n.startsWith('.')),
        what,
      ).toEqual([])
    }
    expect(existsSync(join(dir, 'outside'))).toBe(false)
  })

  it('restores the copy: every row committed before it, none after, the old cluster moved aside', async () => {
    writeFileSync(join(data, 'admin-token'), 'kept')
    const { movedAside } = await restorePglite(Readable.from([readFileSync(file)]), data, 42)
    expect(movedAside).toBe(join(data, '.before-restore-42'))
    expect(readFileSync(join(data, 'admin-token'), 'utf8')).toBe('kept')
    const reopened = await createPgliteDb(data)
    try {
      const { rows } = await reopened.query(sql`SELECT count(*)::int8 AS n, max(n) AS top FROM kept`)
      expect(rows[0]).toEqual({ n: 50n, top: 50n })
    } finally {
      await reopened.close()
    }
  }, 120_000)
})
