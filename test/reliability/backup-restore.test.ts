import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/config.js'
import { createContainer, type Container } from '../../src/container.js'
import { createPgliteDb, createPostgresDb, type Db } from '../../src/db/db.js'
import { createLogger } from '../../src/logger.js'
import { ATTENTION_SECTIONS } from '../../src/console/attention.js'
import { runDueTransactions } from '../../src/transactions/worker.js'
import { ENGINE } from '../helpers/harness.js'
import { runCli } from '../helpers/cli.js'
import { historyProblems, moneyProblems } from '../helpers/invariants.js'
import { startBankStandin, type BankStandin } from '../standins/bank.js'
import { startLndStandIn, type LndStandIn } from '../standins/lnd.js'
import { tronHexOfKey, TronGridStandIn } from '../standins/trongrid.js'
import { base58Of } from '../standins/trongrid-v1.js'

/**
 * Backups that restore without paying twice (issue 32). The rails are the stand-ins of LND,
 * TronGrid and the bank partner, run as real HTTP servers with their own memory of what they paid,
 * outside the database that is backed up and restored (on the sandbox rails that memory would be in
 * the same database and be rolled back with it). The service makes payments, is backed up under
 * load (swaps and sends at the same moment), makes more payments after the backup, is stopped and
 * restored from the backup, and starts again: no payment is made twice, and every one is
 * accounted for (completed in the restored database, or listed for an operator). The embedded
 * engine is backed up and restored by `svcpay backup` / `svcpay restore`; PostgreSQL by pg_dump and
 * pg_restore, then `svcpay recovery begin`.
 *
 * With RECOVERY_OFF=1 in the environment the restored service is started with its recovery period
 * ended at once (recovery switched off): the test then fails, a TRON payout paid twice.
 */
const HOT_KEY = sha256(utf8ToBytes('svcpay backup stand-in hot wallet'))
const HOT_HEX = tronHexOfKey(HOT_KEY)
const OPERATOR_HEX = '41' + bytesToHex(sha256(utf8ToBytes('backup operator treasury'))).slice(0, 40)
const recipientHex = (i: number) =>
  '41' + bytesToHex(sha256(utf8ToBytes(`backup payout recipient ${i}`))).slice(0, 40)
const USDT = 1_000_000n
const TRX = 1_000_000n
const BANK_KEY = 'partner-key-backup-restore'
const BANK_SIGNING = 'backup-restore-signing-secret-0123'
const BANK_NOTIFY = 'backup-restore-notify-secret-0123'

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** A command of the PostgreSQL client tools, without blocking the service that runs beside it. */
function run(command: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', fail)
    child.on('exit', (code) => done({ code, stderr }))
  })
}

interface Service {
  c: Container
  app: FastifyInstance
  url: string
  close(): Promise<void>
}

describe(`backup and restore without paying twice (${ENGINE})`, () => {
  let lnd: LndStandIn
  let node: TronGridStandIn
  let bank: BankStandin
  const dir = mkdtempSync(join(tmpdir(), 'svcpay-backup-'))
  const dataDir = join(dir, 'data')
  const backupFile = join(dir, ENGINE === 'pglite' ? 'svcpay.backup' : 'svcpay.pgdump')
  const adminToken = 'adm_' + randomBytes(16).toString('hex')
  const masterKey = randomBytes(32).toString('hex')
  const databases: string[] = []
  const baseUrl = process.env.TEST_DATABASE_URL
  let clock = Date.now()

  const env = () => ({
    DATA_DIR: dataDir,
    MASTER_KEY: masterKey,
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'http://localhost:8080',
    RATE_LIMITS_ENABLED: 'false',
    LIGHTNING: 'lnd',
    LND_REST_URL: lnd.url,
    LND_MACAROON_HEX: lnd.macaroonHex,
    LND_TLS_CERT_PATH: lnd.certPath,
    LND_TIMEOUT_MS: '2000',
    TRON: 'trongrid',
    TRONGRID_URL: node.url,
    TRON_HOT_WALLET_PRIVATE_KEY: bytesToHex(HOT_KEY),
    VND: 'bank-http',
    BANK_PAYOUT_URL: bank.url,
    BANK_PAYOUT_API_KEY: BANK_KEY,
    BANK_PAYOUT_SIGNING_SECRET: BANK_SIGNING,
    BANK_PAYOUT_WEBHOOK_SECRET: BANK_NOTIFY,
    RAILS_CHECK_TIMEOUT_MS: '3000',
  })

  const dbUrl = (name: string) => {
    const u = new URL(baseUrl!)
    u.pathname = `/${name}`
    return u.toString()
  }
  const adminSql = async (text: string) => {
    const client = new pg.Client({ connectionString: baseUrl })
    await client.connect()
    try {
      await client.query(text)
    } finally {
      await client.end()
    }
  }
  const newPostgres = async (): Promise<string> => {
    const name = `svcpay_bk_${randomBytes(6).toString('hex')}`
    await adminSql(`CREATE DATABASE ${name}`)
    databases.push(name)
    return name
  }

  const start = async (db: Db): Promise<Service> => {
    const config = loadConfig(env())
    const c = await createContainer(config, createLogger('silent'), { db })
    const app = await buildApp(c)
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    return {
      c,
      app,
      url,
      async close() {
        await app.close()
        await c.close()
        await db.close()
      },
    }
  }

  const call = async (s: Service, method: string, url: string, token: string, body?: unknown) => {
    const res = await s.app.inject({
      method: method as any,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined || method === 'PUT' ? { 'content-type': 'application/json' } : {}),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined }
  }
  const admin = async (s: Service, method: string, url: string, body?: unknown) => {
    const r = await call(s, method, url, adminToken, body ?? (method === 'GET' ? undefined : {}))
    if (r.status !== 200) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }
  /** One pass of the worker, a minute after the last (every poll interval has passed). */
  const work = async (s: Service) => {
    clock += 60_000
    await runDueTransactions({
      db: s.c.db,
      transactions: s.c.transactions,
      log: s.c.log,
      now: () => clock,
      railOps: s.c.config.railOps,
    })
  }
  /** The chain moves on: new blocks, the last one solidified. */
  const mine = () => {
    node.produceBlocks(1)
    node.solidify()
  }

  let account: { accountId: string; token: string }
  const txn = async (s: Service, id: string) =>
    (await call(s, 'GET', `/api/v2/transaction/${id}`, account.token)).body
  const confirmed = async (s: Service, body: unknown): Promise<string> => {
    const q = await call(s, 'POST', '/api/v2/transaction', account.token, body)
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await call(s, 'PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, account.token)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    return q.body.txnId as string
  }
  /** Each Lightning send's invoice, by transaction id. */
  const invoices = new Map<string, { hash: string; paymentRequest: string }>()
  const lnSend = async (s: Service, amountMsat: bigint) => {
    const invoice = lnd.outsideInvoice({ amountMsat, expirySeconds: 86_400 })
    const id = await confirmed(s, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest: invoice.paymentRequest } },
    })
    invoices.set(id, invoice)
    return id
  }
  const tronPayout = (s: Service, i: number) =>
    confirmed(s, {
      sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'USDT',
        method: 'tron',
        amtRequested: 100,
        reqDetails: { address: base58Of(recipientHex(i)) },
      },
    })
  const vndPayout = (s: Service, i: number) =>
    confirmed(s, {
      sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: 200000,
        reqDetails: { bankAcctNum: `00990000${String(i).padStart(4, '0')}`, institutionCode: '970415' },
        kyc: { type: 'business', details: { legalFullName: 'Công ty TNHH Ví Dụ', countryCode: 'vn' } },
      },
      sourceOfFunds: { purpose: 3, source: 2, relationship: 6 },
    })
  const swap = (s: Service) =>
    confirmed(s, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
    })
  /** Completes every bank payout the partner holds. */
  const bankPays = () => {
    for (const p of bank.byId.values())
      if (p.status === 'pending' || p.status === 'processing') p.status = 'completed'
  }

  // What the rails did, from their own memory.
  /** How many SendPaymentV2 requests paid the invoice of this send. */
  const lndSends = (txnId: string) =>
    lnd.seen.filter(
      (x) =>
        x.method === 'POST' &&
        x.path === '/v2/router/send' &&
        (x.body as { payment_request?: string } | undefined)?.payment_request ===
          invoices.get(txnId)!.paymentRequest,
    ).length
  const usdtPaidTo = (i: number) => node.usdt.get(recipientHex(i)) ?? 0n
  const bankPayoutsTo = (i: number) =>
    [...bank.byId.values()].filter((p) =>
      JSON.stringify(p.body).includes(`00990000${String(i).padStart(4, '0')}`),
    ).length

  beforeAll(async () => {
    lnd = await startLndStandIn()
    lnd.localBalanceMsat = 10_000_000_000n
    lnd.policy = () => ({ succeed: true })
    node = new TronGridStandIn()
    node.produceBlocks(30)
    node.account(OPERATOR_HEX).balance = 500n * TRX
    node.usdt.set(OPERATOR_HEX, 5_000n * USDT)
    node.account(HOT_HEX).balance = 300n * TRX
    node.transferSignedElsewhere(OPERATOR_HEX, HOT_HEX, 2_000n * USDT)
    mine()
    await node.start()
    bank = await startBankStandin({
      apiKey: BANK_KEY,
      signingSecret: BANK_SIGNING,
      notifySecret: BANK_NOTIFY,
      balance: '0',
    })
    bank.deposit(50_000_000n)
  }, 60_000)
  afterAll(async () => {
    await lnd?.close()
    await node?.stop()
    await bank?.stop()
    for (const name of databases)
      await adminSql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  })

  it('backs up under load, restores, reconciles in recovery and pays nothing twice', async () => {
    const t0 = Date.now()
    const phase = (name: string) => console.log(`[backup ${ENGINE}] ${name} at ${Date.now() - t0} ms`)
    const first = ENGINE === 'pglite' ? null : await newPostgres()
    let s = await start(
      first ? createPostgresDb(dbUrl(first), { poolMax: 5 }) : await createPgliteDb(dataDir),
    )
    const made = await admin(s, 'POST', '/admin/accounts', { name: 'Backed-up payer' })
    const token = await (async () => {
      const { createHmac } = await import('node:crypto')
      const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
      const signature = createHmac('sha256', made.apiSecret)
        .update(`${made.apiKey}&payload=${body}`)
        .digest('hex')
      const r = await s.app.inject({
        method: 'POST',
        url: '/api/v2/authentication/token-signature',
        headers: {
          'content-type': 'application/json',
          'x-api-key': made.apiKey,
          'x-api-signature': signature,
        },
        payload: body,
      })
      return JSON.parse(r.body).accessToken as string
    })()
    account = { accountId: made.accountId, token }
    for (const [ccy, amount] of [
      ['BTC', '0.5'],
      ['USDT', '1500'],
      ['VND', '5000000'],
    ])
      await admin(s, 'POST', '/admin/sandbox/fund', { accountId: account.accountId, ccy, amount })

    phase('funded')
    // Before the backup: one of each paid and completed; one TRON and one bank payout handed to
    // the rail (destsent) and not final yet.
    const lnDone = await lnSend(s, 20_000_000n)
    const tronDone = await tronPayout(s, 1)
    const vndDone = await vndPayout(s, 1)
    await work(s)
    mine()
    bankPays()
    await work(s)
    for (const id of [lnDone, tronDone, vndDone]) expect((await txn(s, id)).txnState, id).toBe('completed')
    const tronSent = await tronPayout(s, 2)
    const vndSent = await vndPayout(s, 2)
    await work(s)
    expect((await txn(s, tronSent)).txnState).toBe('destsent')
    expect((await txn(s, vndSent)).txnState).toBe('destsent')

    // Confirmed, not yet handed to any rail (srccreated) at the backup's time.
    const lnWaiting = await lnSend(s, 30_000_000n)
    const tronWaiting = await tronPayout(s, 3)
    const vndWaiting = await vndPayout(s, 3)

    phase('before backup')
    // The backup, under load: swaps and sends confirmed while it is taken.
    // Staggered, so that the backup's instant falls among them: some before it, some after.
    const load = Array.from({ length: 12 }, async (_, i) => {
      await sleep(i * 40)
      return i % 3 === 2 ? lnSend(s, 1_000_000n) : swap(s)
    })
    await sleep(200)
    const startedAt = Date.now()
    let backupMs = 0
    const backup = (async () => {
      if (ENGINE === 'pglite') {
        const saved = { SVCPAY_URL: process.env.SVCPAY_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN }
        process.env.SVCPAY_URL = s.url
        process.env.ADMIN_TOKEN = adminToken
        try {
          const r = await runCli('backup', backupFile)
          expect(r.code, r.out).toBe(0)
        } finally {
          for (const [k, v] of Object.entries(saved)) {
            if (v === undefined) delete process.env[k]
            else process.env[k] = v
          }
        }
      } else {
        const r = await run('pg_dump', ['--format=custom', '--file', backupFile, dbUrl(first!)])
        expect(r.code, r.stderr).toBe(0)
      }
      backupMs = Date.now() - startedAt
    })()
    const loadIds = await Promise.all(load)
    await backup
    const backupTakenAt = startedAt
    console.log(
      `[backup ${ENGINE}] ${loadIds.length} requests during a backup of ${backupMs} ms, all answered`,
    )
    if (ENGINE === 'pglite') {
      const audit = await s.c.db.query(`SELECT after FROM admin_audit WHERE action = 'backup.create'`)
      expect(audit.rows).toHaveLength(1)
      console.log(`[backup pglite] the database answered nothing for ${JSON.stringify(audit.rows[0].after)} `)
    }

    phase('backed up')
    // After the backup: everything moves on, and more is paid.
    const lnAfter = await lnSend(s, 40_000_000n)
    const tronAfter = await tronPayout(s, 4)
    const vndAfter = await vndPayout(s, 4)
    for (let i = 0; i < 3; i++) {
      await work(s)
      mine()
      bankPays()
    }
    await work(s)
    for (const id of [
      lnWaiting,
      tronWaiting,
      vndWaiting,
      tronSent,
      vndSent,
      lnAfter,
      tronAfter,
      vndAfter,
      ...loadIds,
    ])
      expect((await txn(s, id)).txnState, id).toBe('completed')
    const lnSends = [...invoices.keys()]
    const lnHashes = { after: invoices.get(lnAfter)!.hash }
    const refs = {
      tronAfter: (await txn(s, tronAfter)).destReq.reqDetails.txHash as string,
      vndAfter: (await txn(s, vndAfter)).destReq.reqDetails.bankRef as string,
      vndWaiting: (await txn(s, vndWaiting)).destReq.reqDetails.bankRef as string,
    }
    const paidBefore = {
      usdt: [1, 2, 3, 4].map(usdtPaidTo),
      bank: [1, 2, 3, 4].map(bankPayoutsTo),
      lnd: lnSends.map(lndSends),
    }
    expect(paidBefore).toEqual({
      usdt: [100n * USDT, 100n * USDT, 100n * USDT, 100n * USDT],
      bank: [1, 1, 1, 1],
      lnd: lnSends.map(() => 1),
    })
    await s.close()

    phase('stopped')
    // Restore, and start again.
    let restoredDb: Db
    if (ENGINE === 'pglite') {
      const saved = { ...process.env }
      Object.assign(process.env, {
        DATA_DIR: dataDir,
        MASTER_KEY: masterKey,
        ADMIN_TOKEN: adminToken,
        SVCPAY_URL: s.url,
      })
      try {
        const r = await runCli('restore', backupFile)
        expect(r.code, r.out).toBe(0)
        expect(r.out).toContain('starts in recovery')
      } finally {
        for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
        Object.assign(process.env, saved)
      }
      restoredDb = await createPgliteDb(dataDir)
    } else {
      const second = await newPostgres()
      const r = await run('pg_restore', [
        '--no-owner',
        '--exit-on-error',
        '--dbname',
        dbUrl(second),
        backupFile,
      ])
      expect(r.code, r.stderr).toBe(0)
      // The documented procedure's last step, before the service starts.
      const saved = { ...process.env }
      Object.assign(process.env, {
        DATABASE_URL: dbUrl(second),
        MASTER_KEY: masterKey,
        ADMIN_TOKEN: adminToken,
      })
      try {
        const b = await runCli(
          'recovery',
          'begin',
          '--local',
          '--backup-taken-at',
          new Date(backupTakenAt).toISOString(),
        )
        expect(b.code, b.out).toBe(0)
        expect(b.out).toContain('RECOVERY IN PROGRESS')
      } finally {
        for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
        Object.assign(process.env, saved)
      }
      restoredDb = createPostgresDb(dbUrl(second), { poolMax: 5 })
    }
    s = await start(restoredDb)
    if (process.env.RECOVERY_OFF === '1')
      await admin(s, 'POST', '/admin/recovery/end', { note: 'switched off' })
    else expect((await admin(s, 'GET', '/admin/recovery')).active).toBe(true)

    // The restored database knows none of what happened after the backup: of the requests made
    // while it was taken, those before its instant are there and the others are not.
    expect((await call(s, 'GET', `/api/v2/transaction/${lnAfter}`, account.token)).status).toBe(404)
    const inBackup: string[] = []
    const lostLnSends: string[] = []
    for (const id of loadIds) {
      // Created and confirmed before it: there. Quoted before and confirmed after, or created after:
      // as a quote or not at all, and a Lightning send among them was paid after the backup.
      const r = await call(s, 'GET', `/api/v2/transaction/${id}`, account.token)
      if (r.status === 200 && r.body.txnState !== 'quoted') inBackup.push(id)
      else if (invoices.has(id)) lostLnSends.push(id)
    }
    console.log(
      `[backup ${ENGINE}] of the ${loadIds.length} requests during the backup, ${inBackup.length} are in it`,
    )
    expect((await txn(s, tronWaiting)).txnState).toBe('srccreated')
    expect((await txn(s, vndWaiting)).txnState).toBe('srccreated')

    phase('restored and started')
    // The worker runs; a recovery check takes up what the rails already did.
    for (let i = 0; i < 3; i++) {
      await work(s)
      mine()
    }
    const checked =
      process.env.RECOVERY_OFF === '1' ? undefined : await admin(s, 'POST', '/admin/recovery/check')
    for (let i = 0; i < 3; i++) {
      await work(s)
      mine()
    }
    if (process.env.RECOVERY_OFF !== '1') {
      expect(checked!.active).toBe(true)
      const found = checked!.recovery.lastCheck
      expect(found.adopted).toEqual([{ txnId: tronWaiting, rail: 'tron', ref: expect.any(String) }])
      // What the rails paid that the restored database has no transaction for, as the rails said.
      const orphanRefs = found.orphans.filter((o: any) => o.side === 'rail').map((o: any) => o.ref)
      expect(orphanRefs).toEqual(
        expect.arrayContaining([
          lnHashes.after,
          refs.tronAfter,
          refs.vndAfter,
          refs.vndWaiting,
          ...lostLnSends.map((id) => invoices.get(id)!.hash),
        ]),
      )
      // The console's attention list shows them, with what the rail said.
      const section = ATTENTION_SECTIONS.find((x) => x.key === 'recovery')!
      const listed = await section.read(s.c, Date.now(), 50)
      const text = JSON.stringify(listed.rows)
      for (const ref of [lnHashes.after, refs.tronAfter, refs.vndAfter]) expect(text).toContain(ref)
      expect(text).toContain('-200000 VND')
      expect(listed.rows[0]!.state).toBe('recovery')
      // Nothing was sent while in recovery; a bank payout waiting for it is held, its money too.
      expect((await txn(s, vndWaiting)).txnState).toBe('srccreated')
      expect(bankPayoutsTo(3)).toBe(1)
      // And so does `svcpay recovery status`, which exits 1 while in recovery.
      const saved = { SVCPAY_URL: process.env.SVCPAY_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN }
      Object.assign(process.env, { SVCPAY_URL: s.url, ADMIN_TOKEN: adminToken })
      try {
        const status = await runCli('recovery', 'status')
        expect(status.code).toBe(1)
        expect(status.out).toContain('RECOVERY IN PROGRESS')
        expect(status.out).toContain(`taken up: ${tronWaiting} was already paid on tron`)
        expect(status.out).toContain(refs.vndAfter)
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k]
          else process.env[k] = v
        }
      }
      // An operator has seen the list and ends recovery: audited.
      const ended = await admin(s, 'POST', '/admin/recovery/end', {
        note: 'orphans settled with the customer',
      })
      expect(ended.recovery).toMatchObject({
        endedBy: expect.any(String),
        endNote: 'orphans settled with the customer',
      })
      const audit = await s.c.db.query(`SELECT target FROM admin_audit WHERE action = 'recovery.end'`)
      expect(audit.rows).toHaveLength(1)
    }
    // After recovery: the bank payout waiting since the backup is resubmitted under its own
    // idempotency key, which the partner already paid: the same payout, not a second one.
    for (let i = 0; i < 3; i++) {
      await work(s)
      mine()
      bankPays()
    }
    await work(s)

    phase('recovered')
    // Paid exactly once each, by the rails' own memory.
    expect({
      usdt: [1, 2, 3, 4].map(usdtPaidTo),
      bank: [1, 2, 3, 4].map(bankPayoutsTo),
      lnd: lnSends.map(lndSends),
    }).toEqual(paidBefore)
    // And accounted for: every transaction the restored database has is completed.
    for (const id of [
      lnDone,
      tronDone,
      vndDone,
      tronSent,
      vndSent,
      lnWaiting,
      tronWaiting,
      vndWaiting,
      ...inBackup,
    ])
      expect((await txn(s, id)).txnState, id).toBe('completed')
    expect((await txn(s, vndWaiting)).destReq.reqDetails.bankRef).toBe(refs.vndWaiting)
    expect(await moneyProblems(s.c.db)).toEqual([])
    expect(await historyProblems(s.c.db)).toEqual([])
    expect((await admin(s, 'GET', '/admin/ledger/check')).ok).toBe(true)
    await s.close()
  }, 180_000)
})
