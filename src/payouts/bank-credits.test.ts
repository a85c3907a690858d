import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../app.js'
import { loadConfig } from '../config/config.js'
import { createContainer, type Container } from '../container.js'
import type { Db } from '../db/db.js'
import { createLogger } from '../logger.js'
import type { BankCredit, CreditSink } from './vnd/bank-credit.js'
import { startWorkers } from '../worker.js'
import { OVERLAP_MS, runBankCreditPoll } from './vnd/bank-credit-poll.js'
import { createTestDb } from '../../test/helpers/harness.js'
import { startBankStandin, type BankStandin } from '../../test/standins/bank.js'

/**
 * Incoming bank transfers (issue 20) through the real service: the bank partner played by the
 * stand-in (test/standins/bank.ts) on a real socket, its credit notifications posted to our app
 * listening on another, and the statement poll run as the worker runs it, on PGlite or PostgreSQL.
 *
 * The sink stands for the VND pay-in's recorder (src/payins, built apart from this part): it is the
 * boundary of what is tested here, so the test plays it, recording each credit once by `bankRef` in
 * a table of its own with a unique key, as the pay-in's table does. `calls` is every hand-over.
 */
const API_KEY = 'partner-key-credits'
const NOTIFY_SECRET = 'partner-notify-secret-credits'
const SIGNING_SECRET = 'svcpay-signing-secret-credits'

describe('incoming bank credits: notifications and the statement poll', () => {
  let partner: BankStandin
  let db: Db
  let drop: () => Promise<void>
  let c: Container
  let app: FastifyInstance
  let dataDir: string
  const calls: BankCredit[] = []
  let sinkFailures = 0
  let failRef: string | undefined
  const sink: CreditSink = async (credit) => {
    calls.push(credit)
    if (sinkFailures > 0 || credit.bankRef === failRef) {
      sinkFailures = Math.max(sinkFailures - 1, 0)
      if (credit.bankRef === failRef) failRef = undefined
      throw new Error('the recorder is down')
    }
    await db.query(
      `INSERT INTO test_recorded_credits (bank_ref, amount, memo) VALUES ($1, $2, $3)
       ON CONFLICT (bank_ref) DO NOTHING`,
      [credit.bankRef, credit.amountMinor.toString(), credit.memo],
    )
  }
  const recorded = async () =>
    (
      await db.query<{ bank_ref: string; amount: string }>(
        'SELECT bank_ref, amount::text AS amount FROM test_recorded_credits ORDER BY bank_ref',
      )
    ).rows
  const warnings: object[] = []
  const log = { warn: (obj: object) => void warnings.push(obj) }
  // The poll's own clock, moved an hour per poll so that each one is due (backoff tops at 15 min).
  let clock = Date.now()
  const poll = (container: Container = c, at = (clock += 3_600_000)) =>
    runBankCreditPoll({
      db,
      list: container.bankCredits!.list,
      sink: container.bankCredits!.sink,
      intervalMs: container.bankCredits!.pollMs,
      log,
      now: () => at,
    })
  const creditListings = () => partner.seen.filter((s) => s.path.startsWith('/v1/credits'))

  const makeContainer = async (sharedDir: string) => {
    const config = loadConfig({
      DATA_DIR: sharedDir,
      MASTER_KEY: masterKey,
      ADMIN_TOKEN: 'adm_' + randomBytes(16).toString('hex'),
      LOG_LEVEL: 'silent',
      PUBLIC_BASE_URL: 'http://localhost:8080',
      RATE_LIMITS_ENABLED: 'false',
      VND: 'bank-http',
      BANK_PAYOUT_URL: partner.url,
      BANK_PAYOUT_API_KEY: API_KEY,
      BANK_PAYOUT_WEBHOOK_SECRET: NOTIFY_SECRET,
      BANK_PAYOUT_SIGNING_SECRET: SIGNING_SECRET,
      BANK_CREDITS_POLL_S: '1',
    })
    return createContainer(config, createLogger(config.logLevel), { db, creditSink: sink })
  }
  const masterKey = randomBytes(32).toString('hex')

  beforeAll(async () => {
    partner = await startBankStandin({
      apiKey: API_KEY,
      signingSecret: SIGNING_SECRET,
      notifySecret: NOTIFY_SECRET,
    })
    ;({ db, drop } = await createTestDb())
    dataDir = mkdtempSync(join(tmpdir(), 'svcpay-credits-'))
    c = await makeContainer(dataDir)
    await db.query(
      'CREATE TABLE test_recorded_credits (bank_ref text PRIMARY KEY, amount numeric NOT NULL, memo text NOT NULL)',
    )
    app = await buildApp(c)
    await app.listen({ port: 0, host: '127.0.0.1' })
    partner.creditNotifyUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/partners/bank/credits`
  }, 120_000)
  afterAll(async () => {
    await app?.close()
    await c?.close()
    await db?.close()
    await drop?.()
    await partner?.stop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  })

  it('a signed notification hands the sink the exact credit, and is answered only once it is recorded', async () => {
    const { credit, statuses } = await partner.receiveCredit({
      amount: 1_250_000n,
      description: 'SVC7KQ2 thanh toan don hang',
      payer: { bankBin: '970436', accountNumber: '0011004567890', name: 'NGUYEN VAN AN' },
    })
    expect(statuses).toEqual([200])
    expect(calls.at(-1)).toStrictEqual({
      bankRef: credit.id,
      amountMinor: 1_250_000n,
      memo: 'SVC7KQ2 thanh toan don hang',
      bookedAtMs: credit.bookedAt,
      payer: { bankBin: '970436', accountNumber: '0011004567890', name: 'NGUYEN VAN AN' },
    })
    expect(await recorded()).toContainEqual({ bank_ref: credit.id, amount: '1250000' })
  })

  it('refuses a bad signature (401), a malformed credit (400) and an oversized body (413), recording nothing', async () => {
    const before = calls.length
    const post = (body: string, signature: string) =>
      fetch(partner.creditNotifyUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-partner-signature': signature },
        body,
      })
    const good = {
      type: 'credit',
      id: 'CRX1',
      amount: '5000',
      currency: 'VND',
      description: 'x',
      bookedAt: 1,
    }
    const signed = (o: object) => partner.creditNotification(o as never)
    const forged = signed(good)
    const wrongSecret = (
      await post(
        forged.body,
        forged.signature.replace(/^./, (d) => (d === '0' ? '1' : '0')),
      )
    ).status
    expect(wrongSecret).toBe(401)
    expect((await post(forged.body, '')).status).toBe(401)
    for (const bad of [
      { ...good, amount: '0' },
      { ...good, amount: '12.5' },
      { ...good, currency: 'USD' },
      { ...good, id: 'has space' },
      { ...good, type: undefined },
      { ...good, bookedAt: 'yesterday' },
    ]) {
      const { body, signature } = signed(bad)
      const res = await post(body, signature)
      expect(res.status, JSON.stringify(bad)).toBe(400)
      expect((await res.json()).error).toBe('invalid_request')
    }
    const huge = signed({ ...good, description: 'x'.repeat(70 * 1024) })
    expect((await post(huge.body, huge.signature)).status).toBe(413)
    expect(calls.length).toBe(before)
    expect((await recorded()).map((r) => r.bank_ref)).not.toContain('CRX1')
  })

  it('a notification sent twice reaches the sink twice and is recorded once', async () => {
    const before = calls.length
    const { credit, statuses } = await partner.receiveCredit(
      { amount: 300_000n, description: 'SVCDUP1' },
      'twice',
    )
    expect(statuses).toEqual([200, 200])
    expect(calls.slice(before).map((x) => x.bankRef)).toEqual([credit.id, credit.id])
    expect((await recorded()).filter((r) => r.bank_ref === credit.id)).toHaveLength(1)
  })

  it('a sink that cannot record answers 503, so the partner sends again, and the retry is recorded', async () => {
    sinkFailures = 1
    const { credit, statuses } = await partner.receiveCredit(
      { amount: 42_000n, description: 'SVCRETRY' },
      'held',
    )
    expect(statuses).toEqual([])
    expect(await partner.releaseHeld()).toEqual([503])
    expect((await recorded()).map((r) => r.bank_ref)).not.toContain(credit.id)
    // The partner's retry.
    const { body, signature } = partner.creditNotification(credit)
    const res = await fetch(partner.creditNotifyUrl!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-partner-signature': signature },
      body,
    })
    expect(res.status).toBe(200)
    expect((await recorded()).map((r) => r.bank_ref)).toContain(credit.id)
  })

  it('notifications sent out of order are each recorded', async () => {
    const a = await partner.receiveCredit({ amount: 10_000n, description: 'SVCORD1' }, 'held')
    const b = await partner.receiveCredit({ amount: 20_000n, description: 'SVCORD2' }, 'held')
    expect(await partner.releaseHeld('newest-first')).toEqual([200, 200])
    expect((await recorded()).map((r) => r.bank_ref)).toEqual(
      expect.arrayContaining([a.credit.id, b.credit.id]),
    )
  })

  it('the poll finds the credits never notified, reads every page, and leaves out a malformed item without its details', async () => {
    const silent = await partner.receiveCredit(
      { amount: 777_000n, description: 'SVCSILENT', payer: { name: 'TRAN THI B' } },
      'none',
    )
    partner.listRaw({
      id: 'CRBAD1',
      amount: '-5',
      currency: 'VND',
      description: 'secret memo',
      bookedAt: Date.now(),
      payer: { name: 'LE VAN C' },
    })
    // More than one page (200 a page), none notified.
    for (let i = 0; i < 205; i++)
      await partner.receiveCredit({ amount: BigInt(1000 + i), description: `SVCPAGE${i}` }, 'none')
    const listingsBefore = creditListings().length
    expect(await poll()).toBe(false)
    const listings = creditListings().slice(listingsBefore)
    expect(listings.length).toBeGreaterThanOrEqual(2)
    expect(listings[1]!.path).toContain('cursor=')
    expect(listings.every((l) => l.status === 200)).toBe(true)
    const refs = new Set((await recorded()).map((r) => r.bank_ref))
    const booked = partner.credits.filter((x) => x.id !== 'CRBAD1').map((x) => String(x.id))
    expect(booked.filter((id) => !refs.has(id))).toEqual([])
    expect(calls.find((x) => x.bankRef === silent.credit.id)).toMatchObject({
      amountMinor: 777_000n,
      memo: 'SVCSILENT',
      payer: { name: 'TRAN THI B' },
    })
    expect(refs.has('CRBAD1')).toBe(false)
    expect(warnings).toContainEqual({ id: 'CRBAD1', problem: 'amount' })
    expect(JSON.stringify(warnings)).not.toMatch(/secret memo|LE VAN C|-5/)
    // The position moved to the newest credit handed on, less the overlap.
    const newest = Math.max(...partner.credits.map((x) => Number(x.bookedAt)))
    const { rows } = await db.query<{ since_ms: string }>(
      'SELECT since_ms::text AS since_ms FROM bank_credit_cursor',
    )
    expect(Number(rows[0]!.since_ms)).toBe(newest - OVERLAP_MS)
  })

  it('a new worker instance carries on from the stored position', async () => {
    const { rows } = await db.query<{ since_ms: string }>(
      'SELECT since_ms::text AS since_ms FROM bank_credit_cursor',
    )
    const late = await partner.receiveCredit({ amount: 55_000n, description: 'SVCRESTART' }, 'none')
    const second = await makeContainer(dataDir)
    try {
      const listingsBefore = creditListings().length
      // Its worker, as started in production; the stored schedule is made due at once.
      await db.query('UPDATE bank_credit_cursor SET next_run_at = 0')
      const workers = startWorkers(second)
      try {
        await expect
          .poll(async () => (await recorded()).map((r) => r.bank_ref), { timeout: 5_000, interval: 50 })
          .toContain(late.credit.id)
      } finally {
        await workers.stop()
      }
      expect(creditListings()[listingsBefore]!.path).toContain(`since=${rows[0]!.since_ms}&`)
    } finally {
      await second.close()
    }
  })

  it('two pollers at once: one reads the statement, the other stands aside', async () => {
    await partner.receiveCredit({ amount: 9_000n, description: 'SVCTWO' }, 'none')
    const listingsBefore = creditListings().length
    const callsBefore = calls.length
    const at = (clock += 3_600_000)
    await Promise.all([poll(c, at), poll(c, at)])
    // The overlap holds more than a page: one poll reads each page once; a second would read them again.
    const paths = creditListings()
      .slice(listingsBefore)
      .map((l) => l.path)
    expect(paths.length).toBeGreaterThan(0)
    expect(new Set(paths).size).toBe(paths.length)
    const handed = calls.slice(callsBefore).map((x) => x.bankRef)
    expect(new Set(handed).size).toBe(handed.length)
  })

  it('a partner that is down is tried again after a pause, and the rails check shows it meanwhile', async () => {
    const missed = await partner.receiveCredit({ amount: 61_000n, description: 'SVCDOWN' }, 'none')
    partner.failNext({ status: 503 })
    const at = (clock += 3_600_000)
    expect(await poll(c, at)).toBe(false)
    expect((await recorded()).map((r) => r.bank_ref)).not.toContain(missed.credit.id)
    expect(warnings.at(-1)).toMatchObject({ error: 'bank_http_503', failures: 1 })
    const bank = (await c.checkRails()).rails.find((r) => r.rail === 'bank')!
    expect(bank.problems.join('\n')).toMatch(/could not be read 1 time\(s\) in a row \(bank_http_503\)/)
    // Not before the pause (the poll interval, doubling with each failure).
    const listingsBefore = creditListings().length
    expect(await poll(c, at + 10)).toBe(false)
    expect(creditListings().length).toBe(listingsBefore)
    await poll(c, at + 1_000)
    expect((await recorded()).map((r) => r.bank_ref)).toContain(missed.credit.id)
    const after = (await c.checkRails()).rails.find((r) => r.rail === 'bank')!
    expect(after.problems.join('\n')).not.toMatch(/incoming credits/)
  })

  it('a sink that fails during a poll keeps the position before that credit, and the next poll hands it on', async () => {
    // Two credits an hour apart, both after everything above: the sink cannot record the older one.
    const older = await partner.receiveCredit(
      { amount: 70_000n, description: 'SVCSINKDOWN', bookedAt: Date.now() + 3_600_000 },
      'none',
    )
    const newer = await partner.receiveCredit(
      { amount: 71_000n, description: 'SVCAFTER', bookedAt: Date.now() + 7_200_000 },
      'none',
    )
    failRef = older.credit.id
    await poll()
    const { rows } = await db.query<{ since_ms: string; last_error: string }>(
      'SELECT since_ms::text AS since_ms, last_error FROM bank_credit_cursor',
    )
    expect(rows[0]!.last_error).toBe('credit_not_recorded')
    expect(Number(rows[0]!.since_ms)).toBeLessThanOrEqual(older.credit.bookedAt)
    await poll()
    expect((await recorded()).map((r) => r.bank_ref)).toEqual(
      expect.arrayContaining([older.credit.id, newer.credit.id]),
    )
  })
})
