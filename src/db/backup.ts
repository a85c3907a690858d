import { createHash, randomBytes } from 'node:crypto'
import {
  cpSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs'
import { createWriteStream } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
import type { Db } from './db.js'
import { sql } from './sql.js'

/**
 * Backups of the embedded engine (issue 32; docs/operations.md "Backup and restore").
 *
 * A consistent copy while the service runs: PGlite is one connection in the service's process,
 * and a transaction of it holds that connection exclusively. Inside one, a CHECKPOINT writes every
 * changed page to the data directory, and the cluster's files are then copied as they stand: no
 * statement can run until the copy is done, so the copy is the database at one instant (a restore
 * of it is a clean start from that checkpoint). The copy goes to a directory beside the data, on
 * the same file system, and the service answers again as soon as it is made; the archive is
 * written from that copy afterwards.
 *
 * The archive: gzip of a header line (JSON), then each entry as a JSON line followed by the
 * file's bytes, then a trailer line with the SHA-256 of every byte of every file, so a truncated
 * or altered archive is refused before anything is restored.
 */
export const BACKUP_FORMAT = 'svcpay-pglite-backup'
const BACKUP_VERSION = 1
/** The entries of a PostgreSQL cluster directory; DATA_DIR's own files (the admin token) are not. */
const CLUSTER_ENTRY = /^(PG_VERSION|pg_[a-z_]+|global|base|postgresql(\.auto)?\.conf|postmaster\.opts)$/
/** Files in the cluster never copied: the running engine's lock. */
const NOT_COPIED = new Set(['postmaster.pid'])
/** An archive's lines (header, entries) are short; a longer one is not ours. */
const LINE_MAX = 4_096
/** The largest file an archive may hold (PostgreSQL's segments are 1 GB). */
const FILE_MAX = 2 ** 31

export interface BackupHeader {
  format: typeof BACKUP_FORMAT
  version: number
  engine: 'pglite'
  /** Epoch ms at which the copy was made. */
  takenAt: number
  pgVersion: string
  files: number
  bytes: number
}

function clusterEntries(dataDir: string): string[] {
  return readdirSync(dataDir).filter((n) => CLUSTER_ENTRY.test(n) && !NOT_COPIED.has(n))
}

function walk(root: string, dir: string, out: Array<{ path: string; dir: boolean; size: number }>): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, e.name)
    const rel = relative(root, full).split(sep).join('/')
    if (e.isDirectory()) {
      out.push({ path: rel, dir: true, size: 0 })
      walk(root, full, out)
    } else if (e.isFile()) out.push({ path: rel, dir: false, size: statSync(full).size })
  }
}

/**
 * Writes a backup of the running embedded database in `dataDir` (opened as `db`) to `write`.
 * Returns the header; `pausedMs` is how long the database answered nothing (the copy).
 */
export async function backupPglite(
  db: Db,
  dataDir: string,
  write: (archive: Readable) => Promise<void>,
): Promise<BackupHeader & { pausedMs: number }> {
  if (db.engine !== 'pglite') throw new Error('backupPglite needs the embedded engine')
  const copy = join(dataDir, `.backup-${randomBytes(6).toString('hex')}`)
  mkdirSync(copy)
  try {
    let takenAt = 0
    let pausedMs = 0
    await db.tx(async (q) => {
      const start = Date.now()
      await q.query(sql`CHECKPOINT`)
      for (const name of clusterEntries(dataDir))
        cpSync(join(dataDir, name), join(copy, name), {
          recursive: true,
          filter: (src) => !NOT_COPIED.has(relative(dataDir, src)),
        })
      takenAt = Date.now()
      pausedMs = takenAt - start
    })
    const entries: Array<{ path: string; dir: boolean; size: number }> = []
    walk(copy, copy, entries)
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      engine: 'pglite',
      takenAt,
      pgVersion: readFileSync(join(copy, 'PG_VERSION'), 'utf8').trim(),
      files: entries.filter((e) => !e.dir).length,
      bytes: entries.reduce((n, e) => n + e.size, 0),
    }
    async function* lines(): AsyncGenerator<Buffer> {
      const hash = createHash('sha256')
      yield Buffer.from(JSON.stringify(header) + '\n')
      for (const e of entries) {
        yield Buffer.from(
          JSON.stringify(e.dir ? { path: e.path, dir: true } : { path: e.path, size: e.size }) + '\n',
        )
        if (e.dir) continue
        let seen = 0
        for await (const chunk of createReadStream(join(copy, ...e.path.split('/')))) {
          seen += (chunk as Buffer).length
          hash.update(chunk as Buffer)
          yield chunk as Buffer
        }
        if (seen !== e.size) throw new Error(`${e.path} changed size while it was archived`)
      }
      yield Buffer.from(JSON.stringify({ end: true, sha256: hash.digest('hex') }) + '\n')
    }
    await write(Readable.from(lines()).pipe(createGzip({ level: 3 })))
    return { ...header, pausedMs }
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
}

/** Writes a backup archive to a file, through a temporary name, so that a partial file never has its name. */
export async function writeArchiveFile(archive: Readable, file: string): Promise<void> {
  const partial = `${file}.partial-${randomBytes(4).toString('hex')}`
  try {
    await pipeline(archive, createWriteStream(partial, { flags: 'wx', mode: 0o600 }))
    renameSync(partial, file)
  } catch (err) {
    rmSync(partial, { force: true })
    throw err
  }
}

export class BackupError extends Error {
  override name = 'BackupError'
}

/** Reads an archive into the empty directory `into`, checking every entry and the trailer's digest. */
async function unpack(archive: Readable, into: string): Promise<BackupHeader> {
  const stream = archive.pipe(createGunzip())
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  let buf: Buffer = Buffer.alloc(0)
  let done = false
  const fill = async (): Promise<boolean> => {
    if (done) return false
    const next = await iterator.next()
    if (next.done) {
      done = true
      return false
    }
    buf = buf.length ? Buffer.concat([buf, next.value]) : next.value
    return true
  }
  const line = async (): Promise<any> => {
    for (;;) {
      const at = buf.indexOf(10)
      if (at >= 0) {
        if (at > LINE_MAX) throw new BackupError('not a svcpay backup (a line is too long)')
        const text = buf.subarray(0, at).toString('utf8')
        buf = buf.subarray(at + 1)
        try {
          return JSON.parse(text)
        } catch {
          throw new BackupError('not a svcpay backup (a line is not JSON)')
        }
      }
      if (buf.length > LINE_MAX) throw new BackupError('not a svcpay backup (a line is too long)')
      if (!(await fill())) throw new BackupError('the backup is truncated')
    }
  }
  let header: BackupHeader
  try {
    header = await line()
  } catch (err) {
    if (err instanceof BackupError) throw err
    throw new BackupError(`not a svcpay backup: ${(err as Error).message}`)
  }
  if (header?.format !== BACKUP_FORMAT || header.version !== BACKUP_VERSION)
    throw new BackupError('not a svcpay backup of the embedded engine (or of a later version)')
  const hash = createHash('sha256')
  let files = 0
  for (;;) {
    const e = await line()
    if (e?.end === true) {
      if (e.sha256 !== hash.digest('hex')) throw new BackupError('the backup is damaged (its digest differs)')
      if (files !== header.files) throw new BackupError('the backup is incomplete')
      return header
    }
    const path = typeof e?.path === 'string' ? e.path : ''
    const parts = path.split('/')
    if (
      !path ||
      parts.some((p: string) => p === '' || p === '.' || p === '..') ||
      !CLUSTER_ENTRY.test(parts[0]!)
    )
      throw new BackupError(`the backup names a path outside a database cluster: ${path.slice(0, 100)}`)
    const target = join(into, ...parts)
    if (e.dir === true) {
      mkdirSync(target, { recursive: true })
      continue
    }
    const size = e.size
    if (!Number.isSafeInteger(size) || size < 0 || size > FILE_MAX)
      throw new BackupError('a file size is not valid')
    const out = createWriteStream(target, { flags: 'wx', mode: 0o600 })
    let left = size
    try {
      while (left > 0) {
        if (buf.length === 0 && !(await fill())) throw new BackupError('the backup is truncated')
        const piece = buf.subarray(0, Math.min(left, buf.length))
        buf = buf.subarray(piece.length)
        left -= piece.length
        hash.update(piece)
        if (!out.write(piece)) await new Promise<void>((r) => out.once('drain', () => r()))
      }
    } finally {
      await new Promise<void>((r, j) => out.end((err?: Error | null) => (err ? j(err) : r())))
    }
    files++
  }
}

/**
 * Restores an archive into `dataDir`, whose service must be stopped: the archive is unpacked and
 * checked beside the data first; only then is the current cluster moved aside (into
 * `.before-restore-<time>`, kept for the operator to delete) and the restored one put in its
 * place. Returns the archive's header and where the old cluster went (undefined when there was none).
 */
export async function restorePglite(
  archive: Readable,
  dataDir: string,
  now: number,
): Promise<{ header: BackupHeader; movedAside: string | undefined }> {
  mkdirSync(dataDir, { recursive: true })
  const staging = join(dataDir, `.restore-${randomBytes(6).toString('hex')}`)
  mkdirSync(staging)
  try {
    const header = await unpack(archive, staging)
    const current = clusterEntries(dataDir)
    const lock = join(dataDir, 'postmaster.pid')
    let movedAside: string | undefined
    if (current.length || existsSync(lock)) {
      movedAside = join(dataDir, `.before-restore-${now}`)
      mkdirSync(movedAside)
      for (const name of current) renameSync(join(dataDir, name), join(movedAside, name))
      if (existsSync(lock)) renameSync(lock, join(movedAside, 'postmaster.pid'))
    }
    for (const name of readdirSync(staging)) renameSync(join(staging, name), join(dataDir, name))
    return { header, movedAside }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}
