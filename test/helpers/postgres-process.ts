import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from './service-process.js'

/**
 * A PostgreSQL cluster of the test's own, in a temporary directory on a free loopback port, made
 * with the installed server's initdb and driven with its pg_ctl. A suite can restart and stop it
 * under load without touching the shared server on 5432 that every other test file uses at the same
 * time. Test code only.
 */
export interface PostgresCluster {
  port: number
  /** The URL of a database in the cluster (created by {@link createDatabase}). */
  url(database: string): string
  createDatabase(name: string): Promise<string>
  /** `pg_ctl restart -m fast`: sessions are terminated, the server comes back on the same port. */
  restart(): Promise<void>
  stop(): Promise<void>
  start(): Promise<void>
  /** Stops it if running and removes its files. */
  destroy(): Promise<void>
}

const run = promisify(execFile)

/** The newest installed server's bin directory, or undefined when there is none. */
function serverBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).sort((a, b) => Number(a) - Number(b))
  for (const v of versions.reverse()) {
    const bin = join(root, v, 'bin')
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin
  }
  return undefined
}

/** The newest installed server's bin directory (the replicated pair uses it too). */
export const serverBinDir = (): string | undefined => serverBin()

/** Whether a private cluster can be made here. */
export const canRunPostgresCluster = (): boolean => serverBin() !== undefined

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = serverBin()
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql')
  const dir = mkdtempSync(join(tmpdir(), 'svcpay-pg-'))
  const data = join(dir, 'data')
  const port = await freePort()
  // The server refuses to run as root; as root, it runs as the postgres user that owns its files.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()))
  }
  const exec = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { timeout: 120_000 })
      : run(join(bin, tool), args, { timeout: 120_000 })
  await exec('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'])
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=200`
  const ctl = (action: string, extra: string[] = []) =>
    exec('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', ...extra, action])
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  const cluster: PostgresCluster = {
    port,
    url,
    async createDatabase(name) {
      const admin = new pg.Client({ connectionString: url('postgres') })
      await admin.connect()
      try {
        await admin.query(`CREATE DATABASE ${name}`)
      } finally {
        await admin.end()
      }
      return url(name)
    },
    restart: async () => void (await ctl('restart', ['-m', 'fast', '-o', options])),
    stop: async () => void (await ctl('stop', ['-m', 'fast'])),
    start: async () => void (await ctl('start', ['-o', options])),
    async destroy() {
      await ctl('stop', ['-m', 'immediate']).catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await cluster.start()
  return cluster
}
