import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createTestDb } from '../../test/helpers/harness.js'
import { loadConfig } from '../config/config.js'
import { createContainer, type Container } from '../container.js'
import { buildApp } from '../app.js'
import { createLogger } from '../logger.js'
import { startWorkers, type Workers } from '../worker.js'
import { fundWallet } from '../sandbox/fund.js'
import { checkBooks } from '../ledger/ledger.js'
import { tronAddressFromPrivateKey } from './tron/address.js'
import type { Db } from '../db/db.js'

const LEGAL_NAME = 'Phạm Quốc Hùng'
const ACCOUNT_NUMBER = '0987654321'
const FAILING_TRON = tronAddressFromPrivateKey(new Uint8Array(32).fill(9))

/**
 * The payouts with the real worker loops running, as a deployment runs them: the sandbox settles
 * after its delay and nothing but the worker moves the transactions on. Everything the process logs
 * meanwhile, at debug level, is captured to show that no personal data reaches the log.
 */
describe('payouts under the running worker', () => {
  let c: Container
  let app: FastifyInstance
  let workers: Workers
  let db: Db
  let drop: () => Promise<void>
  let dataDir: string
  let token: string
  let accountId: string
  const logged: string[] = []

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svcpay-payouts-'))
    ;({ db, drop } = await createTestDb())
    const config = loadConfig({
      DATA_DIR: dataDir,
      MASTER_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: 'adm_' + randomBytes(16).toString('hex'),
      LOG_LEVEL: 'debug',
      SANDBOX_PAYOUT_DELAY_MS: '300',
      SANDBOX_TRON_FAIL: FAILING_TRON,
      // The test polls like an impatient client; the rate limits are not what it is about.
      RATE_LIMITS_ENABLED: 'false',
    })
    const sink = new Writable({
      write(chunk, _enc, done) {
        logged.push(String(chunk))
        done()
      },
    })
    c = await createContainer(config, createLogger(config.logLevel, sink), { db })
    app = await buildApp(c)
    await app.ready()
    workers = startWorkers(c)

    const account = await c.accounts.create({ displayName: 'Worker payer', parentId: null })
    accountId = account.id
    const key = await c.auth.createKey(accountId)
    const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
    const signature = createHmac('sha256', key.apiSecret)
      .update(`${key.apiKey}&payload=${body}`)
      .digest('hex')
    const res = await app.inject({
      method: 'POST',
      url: '/api/v2/authentication/token-signature',
      headers: { 'content-type': 'application/json', 'x-api-key': key.apiKey, 'x-api-signature': signature },
      payload: body,
    })
    token = JSON.parse(res.body).accessToken
    await fundWallet(c, { accountId, ccy: 'BTC', amount: '0.01' })
    await fundWallet(c, { accountId, ccy: 'USDT', amount: '100' })
  }, 120_000)

  afterAll(async () => {
    await workers?.stop()
    await app?.close()
    await c?.close()
    await db?.close()
    await drop?.()
    rmSync(dataDir, { recursive: true, force: true })
  })

  async function call(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) {
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    })
    return { status: res.statusCode, body: JSON.parse(res.body) }
  }

  /** Poll the transaction as a client would, recording every state it is seen in. */
  async function watch(txnId: string, timeoutMs = 15_000) {
    const seen: string[] = []
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const r = await call('GET', `/api/v2/transaction/${txnId}`)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const t = r.body
      if (seen.at(-1) !== t.txnState) seen.push(t.txnState)
      if (['completed', 'failed', 'rejected', 'error'].includes(t.txnState) || Date.now() > deadline)
        return { t, seen }
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  it('pays out 500,000 VND from a BTC wallet to a listed bank and watches it reach completed', async () => {
    const banks = (await call('GET', '/api/v2/fiat/institutions?ccy=VND')).body.data
    const vietcombank = banks.find((b: any) => b.shortName === 'Vietcombank')
    const q = await call('POST', '/api/v2/transaction', {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: 500000,
        reqDetails: { bankAcctNum: ACCOUNT_NUMBER, institutionCode: vietcombank.code },
        kyc: { type: 'individual', details: { legalFullName: LEGAL_NAME, countryCode: 'VN' } },
      },
      sourceOfFunds: { purpose: 1, source: 3, relationship: 2 },
    })
    expect(q.status).toBe(200)
    const confirmed = await call('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`)
    expect(confirmed.body.txnState).toBe('srccreated')
    const { t, seen } = await watch(q.body.txnId)
    expect(t.txnState).toBe('completed')
    expect(t.destReq.amtSettled).toBe(500000)
    expect(t.destReq.reqDetails.bankRef).toMatch(/^SBX/)
    // The sandbox holds the payout at destsent for its delay, long enough for the client to see it.
    expect(seen).toContain('destsent')
    expect((await checkBooks(c.db)).ok).toBe(true)
  })

  it('watches a TRON payout to a failing address end failed with its funds back', async () => {
    const q = await call('POST', '/api/v2/transaction', {
      sourceReq: { ccy: 'USDT', method: 'svcpay', amtRequested: 10, reqDetails: {} },
      destReq: { ccy: 'USDT', method: 'tron', reqDetails: { address: FAILING_TRON } },
    })
    await call('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`)
    const { t } = await watch(q.body.txnId)
    expect([t.txnState, t.msg]).toEqual(['failed', 'transfer_reverted'])
    const usdt = (await call('GET', `/api/v2/account/${accountId}/wallet/`)).body.data.find(
      (w: any) => w.ccy === 'USDT',
    )
    expect([usdt.amount, usdt.availableBalance]).toEqual([100, 100])
    expect((await checkBooks(c.db)).ok).toBe(true)
  })

  it('never wrote the KYC or the bank account into the log', () => {
    const text = logged.join('')
    expect(text.length).toBeGreaterThan(0)
    expect(text).not.toContain(LEGAL_NAME)
    expect(text).not.toContain(ACCOUNT_NUMBER)
  })
})
