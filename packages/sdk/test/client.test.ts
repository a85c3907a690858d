import { createHmac } from 'node:crypto'
import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  SvcpayClient,
  SvcpayAuthenticationError,
  SvcpayConflictError,
  SvcpayNetworkError,
  SvcpayNotFoundError,
  SvcpayRateLimitError,
  SvcpayValidationError,
  type LightningSendDetails,
  type Transaction,
} from '@svcpay/sdk'
import { countingFetch, startServer, type TestServer } from './server.js'
import { jwtLifetimeMs } from '../src/http.js'

/** A swap quote body: `amount` BTC from the BTC wallet into VND. */
const swap = (amount: string | bigint, extRefId?: string) => ({
  ...(extRefId ? { extRefId } : {}),
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amount, reqDetails: {} },
  destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
})

describe('SvcpayClient against a running service', () => {
  let s: TestServer
  let client: SvcpayClient
  const counted = countingFetch()

  beforeAll(async () => {
    s = await startServer()
    await s.h.fund(s.account.accountId, 'BTC', '1')
    client = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      apiSecret: s.account.apiSecret,
      fetch: counted.fetch,
    })
  })
  afterAll(() => s.close())

  it('signs one token request and reuses the token', async () => {
    const token = await client.authenticate()
    expect(token.accountId).toBe(s.account.accountId)
    expect(token.expiredAt).toBeGreaterThan(Date.now() + 3_000_000)
    await Promise.all([client.listWallets(), client.getRates(), client.getAccount(), client.authenticate()])
    expect(counted.calls.filter((c) => c.path === '/api/v2/authentication/token-signature')).toHaveLength(1)
    // The renewal time is counted from the token's own lifetime (one hour by default), whatever our clock says.
    expect(jwtLifetimeMs(token.accessToken)).toBe(3_600_000)
    expect(jwtLifetimeMs('not-a-jwt')).toBeUndefined()
  })

  it('reads the account, wallets and rates with exact amounts', async () => {
    const account = await client.getAccount()
    expect(account).toMatchObject({
      id: s.account.accountId,
      displayName: 'SDK test',
      parentId: null,
      tier: 'standard',
    })
    const wallets = await client.listWallets()
    const btc = wallets.find((w) => w.ccy === 'BTC')!
    expect(btc).toMatchObject({ amount: '1', availableBalance: '1', accountId: s.account.accountId })
    expect(await client.getWallet(btc.id)).toEqual(btc)
    const rates = await client.getRates()
    expect(typeof rates.BTCUSD).toBe('string')
    expect(rates.BTCUSD).toMatch(/^\d+(\.\d+)?$/)
    expect(Object.keys(rates)).toHaveLength(28)
  })

  it('claims, reads and gives up a Lightning Address', async () => {
    const claimed = await client.setLightningAddress({ username: 'sdk-shop', creditCcy: 'BTC' })
    expect(claimed).toMatchObject({ username: 'sdk-shop', accountId: s.account.accountId, creditCcy: 'BTC' })
    // The test server's PUBLIC_BASE_URL is http with a port: LUD-16 has no port, so no address is
    // advertised (issue 29.8), only the LNURL.
    expect(claimed.address).toBeNull()
    expect(claimed.lnurl).toMatch(/^LNURL1/)
    expect(await client.setLightningAddress({ username: 'sdk-shop', creditCcy: 'BTC' })).toEqual(claimed)
    expect(await client.getLightningAddress()).toEqual(claimed)
    await client.deleteLightningAddress()
    await expect(client.getLightningAddress()).rejects.toBeInstanceOf(SvcpayNotFoundError)
    await expect(client.setLightningAddress({ username: 'Admin', creditCcy: 'BTC' })).rejects.toBeInstanceOf(
      SvcpayValidationError,
    )
  })

  it('creates, confirms, reads and lists a swap with exact amounts', async () => {
    const quote = await client.createTransaction(swap('0.00012345', 'sdk-swap-1'))
    expect(quote.txnState).toBe('quoted')
    expect(quote.sourceReq.amtRequested).toBe('0.00012345')
    expect(typeof quote.fxRate).toBe('string')
    expect(typeof quote.destReq.amtRequested).toBe('string')
    expect(typeof quote.createdAt).toBe('number')
    const done = await client.confirmTransaction(quote.txnId)
    expect(done.txnState).toBe('completed')
    // Confirm is idempotent: again, it answers the transaction unchanged.
    expect((await client.confirmTransaction(quote.txnId)).txnState).toBe('completed')
    expect(await client.getTransaction(quote.txnId)).toEqual(done)
    const list = await client.listTransactions({ limit: 5, txnStatuses: 'completed' })
    expect(list.pagination).toMatchObject({ page: 1, limit: 5 })
    expect(list.data.map((t) => t.txnId)).toContain(quote.txnId)
  })

  it('takes bigint minor units in and gives them out with amounts: minor', async () => {
    const minor = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      apiSecret: s.account.apiSecret,
      amounts: 'minor',
    })
    const quote = await minor.createTransaction(swap(12_345n))
    expect(quote.sourceReq.amtRequested).toBe(12_345n)
    expect(typeof quote.destReq.amtRequested).toBe('bigint')
    expect(typeof quote.sourceReq.svcpayFees).toBe('bigint')
    expect(typeof quote.fxRate).toBe('string')
    const asDecimal = await client.getTransaction(quote.txnId)
    expect(asDecimal.sourceReq.amtRequested).toBe('0.00012345')
    const btc = (await minor.listWallets()).find((w) => w.ccy === 'BTC')!
    expect(typeof btc.amount).toBe('bigint')
    expect(btc.amount - btc.availableBalance).toBeGreaterThan(0n)
    const cancelled: Transaction<'minor'> = await minor.cancelTransaction(quote.txnId)
    expect(cancelled.txnState).toBe('usercanceled')
  })

  it('reports failures as typed errors with the contract code, status and details', async () => {
    const notFound = await client.getTransaction('txn_does_not_exist').catch((e) => e)
    expect(notFound).toBeInstanceOf(SvcpayNotFoundError)
    expect(notFound).toMatchObject({ code: 'not_found', status: 404 })

    const invalid = await client
      .createTransaction({
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: { ccy: 'VND', method: 'svcpay' },
      })
      .catch((e) => e)
    expect(invalid).toBeInstanceOf(SvcpayValidationError)
    expect(invalid.status).toBe(400)
    expect(invalid.code).toBe('invalid_request')

    const badAmount = await client.createTransaction(swap('0.000000001')).catch((e) => e)
    expect(badAmount).toMatchObject({ code: 'invalid_amount', status: 400 })
    expect(badAmount.details[0].field).toContain('amtRequested')

    await client.createTransaction(swap('0.0001', 'sdk-dup'))
    const dup = await client.createTransaction(swap('0.0002', 'sdk-dup')).catch((e) => e)
    expect(dup).toBeInstanceOf(SvcpayConflictError)
    expect(dup.code).toBe('duplicate_ext_ref_id')

    // A float amount never leaves the process.
    const float = await client.createTransaction(swap(0.1 as unknown as string)).catch((e) => e)
    expect(float).toBeInstanceOf(TypeError)
  })

  it('asks the sandbox bank whose account it is, and reports an unknown one as not found', async () => {
    expect(await client.getAccountName('970436', '0011223342')).toEqual({
      institutionCode: '970436',
      bankAcctNum: '0011223342',
      name: 'VO THANH BINH',
    })
    const missing = await client.getAccountName('970436', '0011223404').catch((e) => e)
    expect(missing).toBeInstanceOf(SvcpayNotFoundError)
  })

  it('sends Lightning to an address, and reports a refused one against its field', async () => {
    // A Lightning Address on a private network: refused before any request leaves the service.
    const reqDetails: LightningSendDetails = { lnAddress: 'alice@10.0.0.1', comment: 'hi' }
    const refused = await client
      .createTransaction({
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'lightning', amtRequested: '0.0001', reqDetails },
      })
      .catch((e) => e)
    expect(refused).toBeInstanceOf(SvcpayValidationError)
    expect(refused).toMatchObject({ code: 'invalid_payment_request', status: 400 })
    expect(refused.details[0].field).toBe('destReq.reqDetails.lnAddress')
  })

  it('throws an authentication error for a wrong secret, after signing fresh each time', async () => {
    const wrong = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      apiSecret: 'not-the-secret',
    })
    const err = await wrong.listWallets().catch((e) => e)
    expect(err).toBeInstanceOf(SvcpayAuthenticationError)
    expect(err).toMatchObject({ code: 'invalid_signature', status: 401 })
  })

  it('works without the secret, as in a browser: a backend signs each token request', async () => {
    const signed: string[] = []
    // Stands for the app's backend, the one place that holds the secret.
    const backend = async (message: string) => {
      signed.push(message)
      return createHmac('sha256', s.account.apiSecret).update(message).digest('hex')
    }
    const browser = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      signTokenRequest: backend,
    })
    expect((await browser.listWallets()).length).toBeGreaterThan(0)
    expect(signed).toHaveLength(1)
    expect(signed[0]).toMatch(new RegExp(`^${s.account.apiKey}&payload=\\{"nonce":"[0-9a-f]+"`))
    // One way to sign, never both and never none.
    const both = { baseUrl: s.baseUrl, apiKey: s.account.apiKey, apiSecret: 'x', signTokenRequest: backend }
    expect(() => new SvcpayClient(both)).toThrow(TypeError)
    expect(() => new SvcpayClient({ baseUrl: s.baseUrl, apiKey: s.account.apiKey })).toThrow(TypeError)
  })
})

describe('token renewal', () => {
  it('renews the token once after a 401 (the server restarted with a new signing key)', async () => {
    const first = await startServer({ JWT_SECRET: 'first-signing-key-of-at-least-32-characters' })
    const port = Number(new URL(first.baseUrl).port)
    const counted = countingFetch()
    const client = new SvcpayClient({
      baseUrl: first.baseUrl,
      apiKey: first.account.apiKey,
      apiSecret: first.account.apiSecret,
      fetch: counted.fetch,
    })
    const { createHarness } = await import('../../../test/helpers/harness.js')
    let second: Awaited<ReturnType<typeof createHarness>> | undefined
    try {
      await client.listWallets()
      // The same database and port, another signing key: every token issued before is now refused.
      second = await createHarness(
        { JWT_SECRET: 'second-signing-key-of-at-least-32-characters' },
        { shareDbWith: first.h },
      )
      await first.h.app.close()
      await second.app.listen({ host: '127.0.0.1', port })
      const wallets = await client.listWallets()
      expect(wallets.length).toBeGreaterThan(0)
      expect(counted.calls.map((c) => `${c.status} ${c.path}`)).toEqual([
        '200 /api/v2/authentication/token-signature',
        `200 /api/v2/account/${first.account.accountId}/wallet/`,
        `401 /api/v2/account/${first.account.accountId}/wallet/`,
        '200 /api/v2/authentication/token-signature',
        `200 /api/v2/account/${first.account.accountId}/wallet/`,
      ])
      // A second 401 in a row is not renewed again: another account's wallets stay refused.
      const refused = await client.listWallets('acc_someone_else').catch((e) => e)
      expect(refused).toBeInstanceOf(SvcpayAuthenticationError)
      expect(
        counted.calls.filter((c) => c.path.endsWith('/acc_someone_else/wallet/')).map((c) => c.status),
      ).toEqual([401, 401])
    } finally {
      await second?.close()
      await first.close()
    }
  })
})

describe('retries', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await startServer()
    await s.h.fund(s.account.accountId, 'BTC', '1')
  })
  afterAll(() => s.close())

  /** The platform's fetch, except that the answer to the first matching request is lost on the way back. */
  function losingFetch(match: (method: string, path: string) => boolean) {
    const sent: string[] = []
    let lost = false
    const fetchFn: typeof fetch = async (input, init) => {
      const method = init?.method ?? 'GET'
      const path = new URL(String(input)).pathname
      sent.push(`${method} ${path}`)
      const res = await fetch(input, init)
      if (!lost && match(method, path)) {
        lost = true
        await res.body?.cancel()
        throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } })
      }
      return res
    }
    return { fetch: fetchFn, sent }
  }

  const clientWith = (fetchFn: typeof fetch) =>
    new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      apiSecret: s.account.apiSecret,
      fetch: fetchFn,
    })

  it('retries a create with extRefId whose answer was lost, and gets the one transaction back', async () => {
    const lossy = losingFetch((m, p) => m === 'POST' && p === '/api/v2/transaction')
    const txn = await clientWith(lossy.fetch).createTransaction(swap('0.0001', 'sdk-retry-1'))
    expect(lossy.sent.filter((x) => x === 'POST /api/v2/transaction')).toHaveLength(2)
    const list = await clientWith(fetch).listTransactions({ limit: 100 })
    expect(list.data.filter((t) => t.extRefId === 'sdk-retry-1').map((t) => t.txnId)).toEqual([txn.txnId])
  })

  it('does not retry a create without extRefId: the outcome is unknown, so it says so', async () => {
    const lossy = losingFetch((m, p) => m === 'POST' && p === '/api/v2/transaction')
    const err = await clientWith(lossy.fetch)
      .createTransaction(swap('0.0001'))
      .catch((e) => e)
    expect(err).toBeInstanceOf(SvcpayNetworkError)
    expect(err).toMatchObject({ code: 'network_error', status: 0 })
    expect(err.message).toContain('ECONNRESET')
    expect(lossy.sent.filter((x) => x === 'POST /api/v2/transaction')).toHaveLength(1)
  })

  it('retries GETs and confirms after a network error', async () => {
    const quote = await clientWith(fetch).createTransaction(swap('0.0001'))
    const lossyConfirm = losingFetch((m, p) => m === 'PUT' && p.endsWith('/confirm'))
    expect((await clientWith(lossyConfirm.fetch).confirmTransaction(quote.txnId)).txnState).toBe('completed')
    expect(lossyConfirm.sent.filter((x) => x.startsWith('PUT'))).toHaveLength(2)
    const lossyGet = losingFetch((m, p) => m === 'GET' && p.startsWith('/api/v2/transaction/'))
    expect((await clientWith(lossyGet.fetch).getTransaction(quote.txnId)).txnId).toBe(quote.txnId)
    expect(lossyGet.sent.filter((x) => x.startsWith('GET'))).toHaveLength(2)
  })

  it('retries a refused connection, and gives up with a network error after maxRetries', async () => {
    const port = await freePort()
    const counted = countingFetch()
    const attempts: string[] = []
    const dead = new SvcpayClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      apiSecret: 's',
      maxRetries: 2,
      fetch: (input, init) => {
        attempts.push(String(input))
        return counted.fetch(input, init)
      },
    })
    const err = await dead.getRates().catch((e) => e)
    expect(err).toBeInstanceOf(SvcpayNetworkError)
    expect(err.message).toContain('ECONNREFUSED')
    // Each of the three attempts signed its own token request.
    expect(attempts).toHaveLength(3)
  })
})

/** A loopback port that nothing listens on. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

describe('rate limits', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await startServer({ RATE_LIMITS_ENABLED: 'true', RATE_LIMIT_STANDARD_PER_SECOND: '2' })
  })
  afterAll(() => s.close())

  it('waits as a 429 asks and retries, so a burst over the limit still succeeds', async () => {
    const counted = countingFetch()
    const client = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      apiSecret: s.account.apiSecret,
      fetch: counted.fetch,
      maxRetries: 6,
    })
    await client.authenticate()
    const started = Date.now()
    const results = await Promise.all(Array.from({ length: 5 }, () => client.getRates()))
    expect(results.every((r) => typeof r.BTCUSD === 'string')).toBe(true)
    const statuses = counted.calls.filter((c) => c.path === '/api/v2/rate').map((c) => c.status)
    expect(statuses.filter((x) => x === 200)).toHaveLength(5)
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThan(0)
    // Two per second: five calls cannot all have finished inside the first window.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(client.rateLimit).toMatchObject({ limit: 2 })
  })

  it('throws a typed 429 when retries are used up or the wait is longer than allowed', async () => {
    // Fresh accounts, so that the burst of the test before has no part in this one.
    const one = await s.h.createAccount({ name: 'impatient one' })
    const noRetry = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: one.apiKey,
      apiSecret: one.apiSecret,
      maxRetries: 0,
    })
    await noRetry.authenticate()
    const errors = await Promise.all(Array.from({ length: 4 }, () => noRetry.getRates().catch((e) => e)))
    const limited = errors.filter((e) => e instanceof SvcpayRateLimitError)
    expect(limited.length).toBeGreaterThan(0)
    expect(limited[0]).toMatchObject({ code: 'rate_limit_exceeded', status: 429 })
    expect(limited[0]!.retryAfterMs).toBeGreaterThanOrEqual(1000)

    const two = await s.h.createAccount({ name: 'impatient two' })
    const impatient = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: two.apiKey,
      apiSecret: two.apiSecret,
      maxRetryWaitMs: 10,
    })
    await impatient.authenticate()
    const started = Date.now()
    const again = await Promise.all(Array.from({ length: 4 }, () => impatient.getRates().catch((e) => e)))
    expect(again.some((e) => e instanceof SvcpayRateLimitError)).toBe(true)
    expect(Date.now() - started).toBeLessThan(900)
  })
})
