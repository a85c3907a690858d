import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDb, ENGINE } from '../../test/helpers/harness.js'
import { freePort } from '../../test/helpers/service-process.js'
import { createPostgresDb, isDbUnavailableError, openSession, type Db } from './db.js'
import { parseDbUrl, withDatabase } from './hosts.js'

describe('database URLs with several hosts, read as libpq reads them', () => {
  it('splits the hosts in order, each with its own port, and keeps the other parameters', () => {
    const parsed = parseDbUrl(
      'postgres://app:s%40cret@db1:5432,db2:5433,[::1]/pay?target_session_attrs=read-write&sslmode=disable',
      {},
    )
    expect(parsed.targetSessionAttrs).toBe('read-write')
    expect(parsed.database).toBe('pay')
    expect(parsed.hosts.map((h) => [h.host, h.port, h.label])).toEqual([
      ['db1', 5432, 'db1:5432'],
      ['db2', 5433, 'db2:5433'],
      ['::1', 5432, '[::1]:5432'],
    ])
    expect(parsed.hosts[1]!.url).toBe('postgres://app:s%40cret@db2:5433/pay?sslmode=disable')
    expect(parsed.hosts[2]!.url).toBe('postgres://app:s%40cret@[::1]:5432/pay?sslmode=disable')
    // Labels never carry the credentials.
    expect(parsed.hosts.map((h) => h.label).join()).not.toMatch(/cret|app/)
  })

  it('defaults to any (also from PGTARGETSESSIONATTRS), takes host and port parameters, refuses the unknown', () => {
    expect(parseDbUrl('postgres://u@h/db', {}).targetSessionAttrs).toBe('any')
    expect(parseDbUrl('postgres://u@h/db', { PGTARGETSESSIONATTRS: 'primary' }).targetSessionAttrs).toBe(
      'primary',
    )
    for (const v of ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby']) {
      expect(parseDbUrl(`postgresql://h/db?target_session_attrs=${v}`, {}).targetSessionAttrs).toBe(v)
    }
    expect(() => parseDbUrl('postgres://h/db?target_session_attrs=master', {})).toThrow(
      'invalid target_session_attrs value: "master"',
    )
    const byParams = parseDbUrl('postgres:///db?host=a,b&port=1,2', {})
    expect(byParams.hosts.map((h) => `${h.host}:${h.port}`)).toEqual(['a:1', 'b:2'])
    expect(() => parseDbUrl('postgres:///db?host=a,b&port=1,2,3', {})).toThrow(/3 port numbers to 2 hosts/)
    expect(() => parseDbUrl('postgres://h:99999/db', {})).toThrow(/invalid port/)
    expect(() => parseDbUrl('mysql://h/db', {})).toThrow()
    // Other parameters pass as written, not re-encoded.
    expect(
      parseDbUrl('postgres://h/db?options=-c%20search_path%3Dx&target_session_attrs=any&sslmode=require', {})
        .hosts[0]!.url,
    ).toBe('postgres://h:5432/db?options=-c%20search_path%3Dx&sslmode=require')
    expect(withDatabase('postgres://u@h1:1,h2:2/test?target_session_attrs=primary', 'other')).toBe(
      'postgres://u@h1:1,h2:2/other?target_session_attrs=primary',
    )
  })
})

describe.skipIf(ENGINE !== 'postgres')('several hosts against a real server', () => {
  let url: string
  let drop: () => Promise<void>
  let deadPort: number
  const dbs: Db[] = []
  beforeAll(async () => {
    const made = await createTestDb()
    await made.db.close()
    url = made.url!
    drop = made.drop
    deadPort = await freePort()
  })
  afterAll(async () => {
    await Promise.all(dbs.map((d) => d.close()))
    await drop?.()
  })
  const hostsUrl = (attrs: string) => {
    const u = new URL(url)
    return `postgres://${u.username}@127.0.0.1:${deadPort},${u.hostname}:${u.port || 5432}${u.pathname}?target_session_attrs=${attrs}`
  }

  it('skips a host that does not answer and one of the wrong kind, and says why when none fits', async () => {
    const db = createPostgresDb(hostsUrl('read-write'))
    dbs.push(db)
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    await expect(openSession(parseDbUrl(hostsUrl('standby')))).rejects.toThrow(
      /127\.0\.0\.1:\d+: .*ECONNREFUSED|connect ECONNREFUSED/,
    )
    const standbyOnly = createPostgresDb(hostsUrl('standby'))
    dbs.push(standbyOnly)
    const err = await standbyOnly.query('SELECT 1').catch((e: unknown) => e)
    expect(String((err as Error).message)).toMatch(/server is not in hot standby mode/)
    // The contract's 503, not a 500.
    expect(isDbUnavailableError(err)).toBe(true)
    const readOnly = await openSession(parseDbUrl(hostsUrl('read-only'))).catch((e: Error) => e)
    expect(String(readOnly)).toMatch(/session is not read-only/)
  })

  it('leaves a primary that turned read-only and takes it again once writable, without a new Db', async () => {
    const db = createPostgresDb(hostsUrl('read-write'))
    dbs.push(db)
    await db.query('CREATE TABLE t (n int)')
    await db.query('INSERT INTO t VALUES (1)')
    const name = new URL(url).pathname.slice(1)
    const admin = (await openSession(parseDbUrl(withDatabase(url, 'postgres')))).client
    try {
      // What a demoted primary looks like to its clients: every session read-only, old ones gone.
      await admin.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`)
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name],
      )
      const refused = await db.query('INSERT INTO t VALUES (2)').catch((e: unknown) => e)
      expect(isDbUnavailableError(refused), String(refused)).toBe(true)
      await admin.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`)
      await new Promise((r) => setTimeout(r, 300))
      await db.tx(async (q) => void (await q.query('INSERT INTO t VALUES (3)')))
      expect((await db.query<{ n: number }>('SELECT n FROM t ORDER BY n')).rows).toEqual([{ n: 1 }, { n: 3 }])
    } finally {
      await admin.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`).catch(() => {})
      await admin.end()
    }
  })

  it('answers a write refused as read-only (25006) as unavailable, and leaves that connection', async () => {
    // One connection, made read-only under the pool: what a session on a demoted primary answers.
    const db = createPostgresDb(hostsUrl('read-write'), { poolMax: 1 })
    dbs.push(db)
    await db.query('CREATE TABLE ro (n int)')
    await db.query('SET SESSION default_transaction_read_only = on')
    const refused = await db.tx((q) => q.query('INSERT INTO ro VALUES (1)')).catch((e: unknown) => e)
    expect((refused as { code?: string }).code).toBe('25006')
    expect(isDbUnavailableError(refused)).toBe(true)
    // The next write runs on a fresh connection, found again, and succeeds.
    await db.tx((q) => q.query('INSERT INTO ro VALUES (2)'))
    expect((await db.query('SELECT n FROM ro')).rows).toEqual([{ n: 2 }])
  })

  it('makes the LISTEN connection again after it was cut and refused for a while, and says so', async () => {
    const db = createPostgresDb(hostsUrl('read-write'))
    dbs.push(db)
    const seen: string[] = []
    let reconnects = 0
    await db.listen('hosts_test', (p) => seen.push(p), { onReconnect: () => reconnects++ })
    const until = async (check: () => boolean, what: string) => {
      for (const deadline = Date.now() + 10_000; !check();) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; seen ${seen}`)
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    await db.tx(async (q) => q.notify('hosts_test', 'before'))
    await until(() => seen.includes('before'), 'the first notification')
    const name = new URL(url).pathname.slice(1)
    const admin = (await openSession(parseDbUrl(withDatabase(url, 'postgres')))).client
    try {
      // Connections refused for longer than one retry: the listener keeps trying.
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name],
      )
      await new Promise((r) => setTimeout(r, 1_500))
      expect(reconnects).toBe(0)
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {})
      await admin.end()
    }
    await until(() => reconnects === 1, 'the reconnect')
    await db.tx(async (q) => q.notify('hosts_test', 'after'))
    await until(() => seen.includes('after'), 'a notification after the reconnect')
  })
})
