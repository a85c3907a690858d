import { execFile } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { canRunPostgresCluster, serverBinDir } from './postgres-process.js'
import { freePort, sleep } from './service-process.js'

/**
 * A primary and a streaming-replication standby of it, both of the test's own, in one temporary
 * directory on two free loopback ports: the primary made with initdb, the standby with
 * `pg_basebackup -R` (which writes standby.signal and primary_conninfo), replication synchronous
 * (`synchronous_standby_names = '*'`, `synchronous_commit = on`) unless asked otherwise. The failover
 * suite stops the primary hard and promotes the standby. Test code only.
 */
export interface ReplicatedPair {
  primaryPort: number
  standbyPort: number
  /** One host's URL of `database`. */
  url(port: number, database: string): string
  /** Both hosts, primary first, as libpq writes them. */
  multiHostUrl(database: string, attrs?: string): string
  createDatabase(name: string): Promise<void>
  /**
   * Makes the standby (`pg_basebackup -R`), starts it, then (unless asynchronous) names it
   * synchronous on the primary, and waits until it streams as such. The primary takes writes
   * before, asynchronously, so that the service can start meanwhile.
   */
  startStandby(timeoutMs?: number): Promise<void>
  /** `pg_ctl stop -m immediate`: the primary's processes end at once, as in a crash. */
  killPrimary(): Promise<void>
  /** `pg_ctl promote -w`: the standby ends recovery and accepts writes. */
  promoteStandby(): Promise<void>
  destroy(): Promise<void>
}

const run = promisify(execFile)

export const canRunReplicatedPair = canRunPostgresCluster

export async function startReplicatedPair(
  opts: {
    /** Commit without waiting for the standby (and, to make the loss certain, for the local WAL flush). */
    asynchronous?: boolean
  } = {},
): Promise<ReplicatedPair> {
  const bin = serverBinDir()
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql')
  const dir = mkdtempSync(join(tmpdir(), 'svcpay-pgha-'))
  const primaryData = join(dir, 'primary')
  const standbyData = join(dir, 'standby')
  const [primaryPort, standbyPort] = [await freePort(), await freePort()]
  // The server refuses to run as root; as root, it runs as the postgres user that owns its files.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const { stdout: uid } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    chownSync(dir, Number(uid.trim()), Number(gid.trim()))
  }
  const exec = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { timeout: 120_000 })
      : run(join(bin, tool), args, { timeout: 120_000 })
  const common = `-c listen_addresses=127.0.0.1 -k ${dir} -c max_connections=200 -c fsync=off`
  const primaryOptions =
    `-p ${primaryPort} ${common} -c wal_level=replica -c max_wal_senders=4 -c wal_keep_size=64MB ` +
    (opts.asynchronous
      ? // The broken set-up the suite shows failing: commits acknowledged before the standby has them,
        // and the WAL writer made lazy so that the last second of commits is surely not there yet.
        `-c synchronous_standby_names='' -c synchronous_commit=off -c wal_writer_delay=10000 -c wal_writer_flush_after=100000`
      : // Synchronous once the standby streams (startStandby sets synchronous_standby_names = '*').
        `-c synchronous_commit=on`)
  const standbyOptions = `-p ${standbyPort} ${common} -c hot_standby=on`
  const ctl = (data: string, log: string, action: string, extra: string[] = []) =>
    exec('pg_ctl', ['-D', data, '-l', join(dir, log), '-w', '-t', '60', ...extra, action])

  await exec('initdb', [
    '-D',
    primaryData,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ])
  await ctl(primaryData, 'primary.log', 'start', ['-o', primaryOptions])
  const url = (port: number, database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  const adminQuery = async (port: number, text: string): Promise<any[]> => {
    const c = new pg.Client({ connectionString: url(port, 'postgres') })
    await c.connect()
    try {
      return (await c.query(text)).rows
    } finally {
      await c.end()
    }
  }
  return {
    primaryPort,
    standbyPort,
    url,
    multiHostUrl: (database, attrs = 'read-write') =>
      `postgres://postgres@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/${database}?target_session_attrs=${attrs}`,
    async createDatabase(name) {
      await adminQuery(primaryPort, `CREATE DATABASE ${name}`)
    },
    async startStandby(timeoutMs = 30_000) {
      await exec('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(primaryPort),
        '-U',
        'postgres',
        '-D',
        standbyData,
        '-R',
        '-X',
        'stream',
        '--no-sync',
        '-c',
        'fast',
      ])
      await ctl(standbyData, 'standby.log', 'start', ['-o', standbyOptions])

      if (!opts.asynchronous) {
        await adminQuery(primaryPort, `ALTER SYSTEM SET synchronous_standby_names = '*'`)
        await adminQuery(primaryPort, 'SELECT pg_reload_conf()')
      }
      const want = opts.asynchronous ? 'async' : 'sync'
      for (const deadline = Date.now() + timeoutMs; ;) {
        const rows = await adminQuery(primaryPort, 'SELECT state, sync_state FROM pg_stat_replication')
        if (rows.some((r) => r.state === 'streaming' && r.sync_state === want)) return
        if (Date.now() > deadline) throw new Error(`standby not streaming (${want}): ${JSON.stringify(rows)}`)
        await sleep(100)
      }
    },
    killPrimary: async () => void (await ctl(primaryData, 'primary.log', 'stop', ['-m', 'immediate'])),
    promoteStandby: async () => void (await ctl(standbyData, 'standby.log', 'promote')),
    async destroy() {
      await ctl(primaryData, 'primary.log', 'stop', ['-m', 'immediate']).catch(() => undefined)
      await ctl(standbyData, 'standby.log', 'stop', ['-m', 'immediate']).catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
