import { createHmac, randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { createPgliteDb, createPostgresDb, type Db } from '../../src/db/db.js'
import { startReceiver, type Receiver } from '../helpers/webhooks.js'
import { finishCase } from '../helpers/invariants.js'
import {
  createServiceStore,
  serviceClient,
  sleep,
  startServiceProcess,
  type ServiceProcess,
  type ServiceStore,
} from '../helpers/service-process.js'

/**
 * Secrets never reach the logs: the real server process runs at LOG_LEVEL=trace (everything debug
 * logs and more) while a client exercises every kind of request, credential and payout, good and
 * bad; then the whole log is searched for API secrets, token signatures, access tokens, the admin
 * token, the master key, webhook secrets and KYC data.
 */

const WEBHOOK_SECRET = 'whsec-log-test-' + randomBytes(12).toString('hex')
const LEGAL_NAME = 'Trần Thị Bí Mật Logcheck'
const BANK_ACCOUNT = '0071000999888777'

describe('secrets in logs', () => {
  let store: ServiceStore | undefined
  let server: ServiceProcess | undefined
  let receiver: Receiver | undefined
  afterAll(async () => {
    await server?.stop()
    await receiver?.close()
    await store?.cleanup()
  })

  it('writes no secret, credential or KYC detail to a trace-level log', { timeout: 180_000 }, async () => {
    receiver = await startReceiver(WEBHOOK_SECRET)
    // Every other delivery is refused, so that failures and retries are logged too.
    receiver.respond = (i) => (i % 2 ? 500 : 200)
    store = await createServiceStore({
      LOG_LEVEL: 'trace',
      ALLOW_HTTP_WEBHOOKS: 'true',
      WEBHOOK_BACKOFF_BASE_MS: '20',
      SANDBOX_PAYOUT_DELAY_MS: '0',
      RATE_LIMITS_ENABLED: 'true',
    })
    server = await startServiceProcess(store.env)
    const client = serviceClient(server.base, store.adminToken)
    let ops = 0
    // Paced below the premium tier's 20 requests a second; the burst below is sent at once.
    const call = async (method: string, path: string, token?: string, body?: unknown) => {
      ops++
      await sleep(60)
      return client.call(method, path, token, body)
    }

    // A is premium so that the test's own requests stay under its limits; B meets the limiter.
    const a = await client.createAccount('Log A', 'premium')
    const b = await client.createAccount('Log B')
    const secrets: Record<string, string> = {
      'admin token': store.adminToken,
      'master key': store.env.MASTER_KEY!,
      'webhook secret': WEBHOOK_SECRET,
      'KYC legal name': LEGAL_NAME,
      'bank account number': BANK_ACCOUNT,
    }
    for (const [name, acct] of [
      ['A', a],
      ['B', b],
    ] as const) {
      secrets[`API secret ${name}`] = acct.apiSecret
      secrets[`access token ${name}`] = acct.token
      secrets[`access token signature ${name}`] = acct.token.split('.')[2]!
    }
    // A second key, its secret printed once by the operator API, then revoked.
    const key = await client.admin('POST', '/admin/keys', { accountId: a.accountId })
    secrets['second API secret'] = key.apiSecret
    const second = await client.token(key.apiKey, key.apiSecret)
    secrets['second access token'] = second
    await client.admin('POST', `/admin/keys/${key.apiKey}/revoke`)
    expect((await call('GET', '/api/v2/rate', second)).status).toBe(401)

    // Token exchanges, good and bad; the signatures sent are secrets of a kind too (replayable once).
    for (let i = 0; i < 3; i++) {
      const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
      const signature = createHmac('sha256', a.apiSecret).update(`${a.apiKey}&payload=${body}`).digest('hex')
      secrets[`token request signature ${i}`] = signature
      const headers = {
        'content-type': 'application/json',
        'x-api-key': a.apiKey,
        'x-api-signature': signature,
      }
      const url = `${server.base}/api/v2/authentication/token-signature`
      ops += 2
      const got = await fetch(url, { method: 'POST', headers, body })
      expect(got.status).toBe(200)
      secrets[`fresh access token ${i}`] = ((await got.json()) as any).accessToken
      // The same signature again (reused) and with the body changed (invalid).
      expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(401)
      expect((await fetch(url, { method: 'POST', headers, body: body.replace('{', '{ ') })).status).toBe(401)
      ops++
    }
    expect((await call('GET', '/api/v2/rate', a.token.slice(0, -4) + 'AAAA')).status).toBe(401)

    // Webhooks: registered, changed and used; deliveries succeed and fail.
    expect(
      (await call('POST', '/api/v2/webhook', a.token, { callback: receiver.url, secret: WEBHOOK_SECRET }))
        .status,
    ).toBe(200)
    const rotated = WEBHOOK_SECRET + '-rotated'
    secrets['rotated webhook secret'] = rotated
    const hooks = (await call('GET', '/api/v2/webhook', a.token)).body.data
    expect((await call('PUT', `/api/v2/webhook/${hooks[0].id}`, a.token, { secret: rotated })).status).toBe(
      200,
    )
    expect(
      (await call('PUT', `/api/v2/webhook/${hooks[0].id}`, a.token, { secret: WEBHOOK_SECRET })).status,
    ).toBe(200)
    expect(
      (
        await call('POST', '/api/v2/webhook', b.token, {
          callback: 'http://10.0.0.1/x',
          secret: 'refused-secret-0123456789',
        })
      ).status,
    ).toBe(400)
    secrets['refused webhook secret'] = 'refused-secret-0123456789'

    // Money: swaps, a Lightning receive paid and a send, a VND payout with KYC, and errors.
    await client.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy: 'BTC', amount: '0.1' })
    await client.admin('POST', '/admin/sandbox/fund', {
      accountId: a.accountId,
      ccy: 'VND',
      amount: '5000000',
    })
    const swap = await call('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    })
    expect((await call('PUT', `/api/v2/transaction/${swap.body.txnId}/confirm`, a.token)).body.txnState).toBe(
      'completed',
    )
    const receive = await call('POST', '/api/v2/transaction', b.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
    })
    const invoice = (await call('PUT', `/api/v2/transaction/${receive.body.txnId}/confirm`, b.token)).body
    const send = await call('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'BTC',
        method: 'lightning',
        reqDetails: { paymentRequest: invoice.sourceReq.reqDetails.paymentRequest },
      },
    })
    expect((await call('PUT', `/api/v2/transaction/${send.body.txnId}/confirm`, a.token)).body.txnState).toBe(
      'completed',
    )
    const banks = (await call('GET', '/api/v2/fiat/institutions?ccy=VND', a.token)).body.data
    const payoutBody = (acct: string) => ({
      sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: 500000,
        reqDetails: { bankAcctNum: acct, institutionCode: banks[0].code },
        kyc: { type: 'individual', details: { legalFullName: LEGAL_NAME, countryCode: 'VN' } },
      },
      sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
    })
    const payouts = []
    // A payout that completes, one the bank rejects (…0000) and one that fails (…1111).
    for (const acct of [
      BANK_ACCOUNT,
      BANK_ACCOUNT.slice(0, -4) + '0000',
      BANK_ACCOUNT.slice(0, -4) + '1111',
    ]) {
      const q = await call('POST', '/api/v2/transaction', a.token, payoutBody(acct))
      expect(q.status, JSON.stringify(q.body)).toBe(200)
      expect((await call('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)).status).toBe(200)
      payouts.push(q.body.txnId)
    }
    const missingKyc = payoutBody(BANK_ACCOUNT)
    missingKyc.destReq.kyc.details.countryCode = 'not a country'
    expect((await call('POST', '/api/v2/transaction', a.token, missingKyc)).status).toBe(400)
    expect((await call('POST', '/api/v2/transaction', a.token, '{"broken": ')).status).toBe(400)
    expect((await call('GET', `/api/v2/transaction/${swap.body.txnId}`, b.token)).status).toBe(404)
    // A burst beyond the standard tier's per-second limit, for the rate limiter's own logging.
    const burst = await Promise.all(
      Array.from({ length: 8 }, () => client.call('GET', '/api/v2/rate', b.token)),
    )
    ops += burst.length
    expect(burst.some((r) => r.status === 429)).toBe(true)

    // Wait for the payouts to end and the deliveries (retried after each refusal) to go out.
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(300)) {
      await sleep(1_100)
      const states = await Promise.all(payouts.map((id) => call('GET', `/api/v2/transaction/${id}`, a.token)))
      const pending = await call(
        'GET',
        `/api/v2/webhook/${hooks[0].id}/deliveries?status=pending&limit=1`,
        a.token,
      )
      if (
        states.every((s) => ['completed', 'rejected', 'failed'].includes(s.body.txnState)) &&
        pending.body.pagination?.total === 0
      )
        break
    }
    await server.stop('SIGTERM')
    const log = server.output()
    server = undefined
    expect(log.length).toBeGreaterThan(10_000)
    expect(log).toMatch(/"level":30/)
    const lines = log.split('\n')
    for (const [name, secret] of Object.entries(secrets)) {
      const leak = lines.find((line) => line.includes(secret))
      expect(leak, `${name} appears in the log: ${leak?.slice(0, 300)}`).toBeUndefined()
    }
    // No log record carries an Authorization header's value. (The first-run banner, plain text
    // and not a log record, shows how to send one, and the demo account's secret, once.)
    const records = lines.filter((line) => line.startsWith('{'))
    expect(records.length).toBeGreaterThan(100)
    expect(records.filter((line) => /Bearer /.test(line))).toEqual([])
    const db: Db = store.databaseUrl
      ? createPostgresDb(store.databaseUrl)
      : await createPgliteDb(store.dataDir)
    try {
      await finishCase('secrets in logs', db, {
        ops,
        detail: `${lines.length} log lines searched for ${Object.keys(secrets).length} secrets, ${receiver.received.length} webhook requests`,
      })
    } finally {
      await db.close()
    }
  })
})
