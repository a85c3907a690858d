import fc from 'fast-check'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { statusOf, type ErrorCode } from '../../src/shared/errors.js'
import { ENGINE, type TestAccount } from '../helpers/harness.js'
import { createAppHarness, type AppHarness } from '../helpers/app-harness.js'
import { finishCase } from '../helpers/invariants.js'

/**
 * Hostile input, property-based: every endpoint's body, path and query filled with random and
 * malformed JSON, huge and deeply nested bodies, extreme and malformed numbers, amounts with 30
 * decimals, unicode and control characters; headers over real HTTP. The service never answers 5xx,
 * never shows a stack trace, and every error has the contract's shape with a known code whose
 * status is the one the contract gives it.
 */

const KNOWN_CODES: ErrorCode[] = [
  'invalid_request',
  'invalid_json',
  'invalid_amount',
  'amount_below_minimum',
  'invalid_address',
  'invalid_payment_request',
  'unsupported_method',
  'unsupported_currency_pair',
  'method_not_available',
  'kyc_required',
  'invalid_institution',
  'unauthorized',
  'invalid_signature',
  'signature_reused',
  'forbidden',
  'not_found',
  'duplicate_ext_ref_id',
  'invalid_state',
  'quote_expired',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limit_exceeded',
]

// FUZZ_RUNS raises the runs per endpoint for a longer search than CI needs.
const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 120)
const TRACE = /\n\s+at |node_modules|\.[cm]?[jt]s:\d+|Error: /

/** What every answer must be: below 500, and an error in the contract's shape with a known code. */
function checkAnswer(status: number, raw: string, what: string): void {
  expect(status, `${what} -> ${status} ${raw.slice(0, 300)}`).toBeLessThan(500)
  expect(TRACE.test(raw), `${what} leaks a trace: ${raw.slice(0, 300)}`).toBe(false)
  if (status < 400) return
  let body: any
  try {
    body = JSON.parse(raw)
  } catch {
    throw new Error(`${what} -> ${status} with a body that is not JSON: ${raw.slice(0, 200)}`)
  }
  const shape = `${what} -> ${status} ${raw.slice(0, 300)}`
  expect(typeof body, shape).toBe('object')
  expect(
    Object.keys(body).every((k) => ['error', 'message', 'details'].includes(k)),
    shape,
  ).toBe(true)
  expect(KNOWN_CODES, shape).toContain(body.error)
  expect(statusOf(body.error), shape).toBe(status)
  expect(typeof body.message === 'string' && body.message.length > 0, shape).toBe(true)
  if (body.details !== undefined) {
    expect(Array.isArray(body.details), shape).toBe(true)
    for (const d of body.details) {
      expect(Object.keys(d).sort(), shape).toEqual(['field', 'issue'])
      expect([typeof d.field, typeof d.issue], shape).toEqual(['string', 'string'])
    }
  }
}

// Leaves that break parsers and amount handling, as raw JSON text (some of them not valid JSON).
const HOSTILE_LEAVES = [
  '1e308',
  '-1e308',
  '1e309',
  '-1e400',
  '1e-400',
  '-0',
  '-0.0',
  '0',
  '0.0',
  '-1',
  '1E2',
  '1e+2',
  '1.',
  '.5',
  '01',
  '0x10',
  'NaN',
  'Infinity',
  '-Infinity',
  '9007199254740993',
  '123456789012345678901234567890',
  '0.' + '0'.repeat(29) + '1',
  '1.' + '1'.repeat(30),
  '0.' + '9'.repeat(30),
  '1' + '0'.repeat(400),
  '"NaN"',
  '"Infinity"',
  '"-Infinity"',
  '"-0"',
  '"1e308"',
  '"1e-30"',
  '"0x10"',
  '" 1"',
  '"1 "',
  '"1,5"',
  '"1_000"',
  '"١٢٣"',
  '"𝟙"',
  '"0.' + '0'.repeat(29) + '1"',
  '"' + '9'.repeat(65) + '"',
  '""',
  '" "',
  '"\\u0000"',
  '"\\ud800"',
  '"\\u202e\\u0000evil"',
  '"a\\nb\\r\\tc"',
  '"<script>alert(1)</script>"',
  '"\' OR 1=1 --"',
  '"%00"',
  '"../../etc/passwd"',
  '"' + 'x'.repeat(5000) + '"',
  'true',
  'false',
  'null',
  '[]',
  '{}',
  '[1,2]',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
]

/** A JSON string holding any unicode, control characters included. */
const anyString = fc.string({ unit: 'binary', maxLength: 80 }).map((s) => JSON.stringify(s))
const anyLeaf = fc.oneof(
  fc.constantFrom(...HOSTILE_LEAVES),
  anyString,
  fc.double().map((d) => String(d)),
)

/**
 * A body built from a valid template: each leaf may be replaced by a hostile one, each key dropped,
 * and strange keys added; the result is JSON text (possibly invalid, by design).
 */
function mutated(template: unknown): fc.Arbitrary<string> {
  return fc.gen().map((g) => {
    const render = (v: unknown, depth: number): string => {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        const parts: string[] = []
        for (const [k, child] of Object.entries(v)) {
          if (g(fc.integer, { min: 0, max: 11 }) === 0) continue
          parts.push(JSON.stringify(k) + ':' + render(child, depth + 1))
        }
        if (g(fc.integer, { min: 0, max: 5 }) === 0) {
          const key = g(
            fc.constantFrom,
            '__proto__',
            'constructor',
            'sourceReq',
            '',
            '\u0000',
            'x'.repeat(300),
            'amtRequested',
          )
          parts.push(JSON.stringify(key) + ':' + g(() => anyLeaf))
        }
        return '{' + parts.join(',') + '}'
      }
      if (g(fc.integer, { min: 0, max: 7 }) === 0) return g(() => anyLeaf)
      return JSON.stringify(v)
    }
    return render(template, 0)
  })
}

/** Random JSON, random text, truncated JSON and deep nesting. */
const junkBody = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.json({ maxDepth: 3 }).map((j) => j.slice(0, Math.max(0, j.length - 1))),
  fc.integer({ min: 20, max: 5000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 20, max: 5000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
)

describe('hostile input', () => {
  let h: AppHarness
  let user: TestAccount
  let other: TestAccount
  let txnId: string
  let webhookId: string
  let walletId: string
  let ops = 0
  beforeAll(async () => {
    h = await createAppHarness({
      // Registration resolves callback hosts; this one answers for one name, with a public address.
      resolveHost: async (name) =>
        name === 'hooks.example.com' ? [{ address: '93.184.216.34', family: 4 }] : [],
      env: { ALLOW_HTTP_WEBHOOKS: 'false' },
    })
    user = await h.createAccount({ name: 'Fuzzed' })
    other = await h.createAccount({ name: 'Other' })
    await h.admin('POST', '/admin/sandbox/fund', { accountId: user.accountId, ccy: 'BTC', amount: '1' })
    const q = await h.api('POST', '/api/v2/transaction', user.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    })
    txnId = q.body.txnId
    const hook = await h.api('POST', '/api/v2/webhook', user.token, {
      callback: 'https://hooks.example.com/hook',
      secret: 's'.repeat(20),
    })
    expect(hook.status).toBe(200)
    webhookId = hook.body.id
    walletId = (await h.api('GET', `/api/v2/account/${user.accountId}/wallet/`, user.token)).body.data[0].id
  })
  afterAll(async () => h?.close())

  const send = async (
    method: string,
    url: string,
    token: string | undefined,
    body?: string,
    headers?: Record<string, string>,
  ) => {
    ops++
    const r = await h.api(method, url, token, body, headers)
    checkAnswer(r.status, r.raw, `${method} ${url.slice(0, 120)} ${body?.slice(0, 120) ?? ''}`)
    return r
  }

  const side = (ccy: string, method: string, extra: Record<string, unknown> = {}) => ({
    ccy,
    method,
    amtRequested: '0.0001',
    reqDetails: {},
    ...extra,
  })
  const templates: Array<[string, string, () => string | undefined, unknown]> = [
    [
      'POST',
      '/api/v2/transaction',
      () => user.token,
      {
        extRefId: 'r-1',
        note: 'n',
        deductNetworkFeesFromDest: false,
        sourceReq: side('BTC', 'svcpay'),
        destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
      },
    ],
    [
      'POST',
      '/api/v2/transaction',
      () => user.token,
      {
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: side('BTC', 'on-chain', {
          reqDetails: { address: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080' },
        }),
      },
    ],
    [
      'POST',
      '/api/v2/transaction',
      () => user.token,
      {
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest: 'lnbcrt1p' } },
      },
    ],
    [
      'POST',
      '/api/v2/transaction',
      () => user.token,
      { sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} }, destReq: side('BTC', 'svcpay') },
    ],
    [
      'POST',
      '/api/v2/transaction',
      () => user.token,
      {
        sourceReq: side('VND', 'svcpay', { amtRequested: '500000' }),
        destReq: {
          ccy: 'VND',
          method: 'vnd-instant',
          reqDetails: { bankAcctNum: '0123456789', institutionCode: '970436' },
          kyc: { type: 'individual', details: { legalFullName: 'Nguyen Van A', countryCode: 'VN' } },
        },
        sourceOfFunds: { purpose: 1, source: 1, relationship: 1 },
      },
    ],
    [
      'POST',
      '/api/v2/transaction',
      () => user.token,
      {
        sourceReq: side('USDT', 'svcpay', { amtRequested: '10' }),
        destReq: {
          ccy: 'USDT',
          method: 'tron',
          reqDetails: { address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' },
        },
      },
    ],
    ['PUT', `/api/v2/transaction/{txn}/confirm`, () => user.token, {}],
    ['PUT', `/api/v2/transaction/{txn}/cancel`, () => user.token, {}],
    [
      'POST',
      '/api/v2/webhook',
      () => user.token,
      { callback: 'https://hooks.example.com/hook', secret: 's'.repeat(20) },
    ],
    [
      'PUT',
      '/api/v2/webhook/{hook}',
      () => user.token,
      { callback: 'https://hooks.example.com/other', secret: 't'.repeat(20) },
    ],
    ['POST', '/api/v2/authentication/token-signature', () => undefined, { nonce: 'abc' }],
    ['POST', '/sandbox/fund', () => user.token, { ccy: 'BTC', amount: '0.001' }],
    ['POST', '/sandbox/lightning/pay', () => user.token, { paymentRequest: 'lnbcrt10u1p' }],
    ['POST', '/sandbox/lightning/invoice', () => user.token, { amount: '0.0001', outcome: 'succeed' }],
    [
      'POST',
      '/sandbox/onchain/send',
      () => user.token,
      { address: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080', amount: '0.001' },
    ],
    ['POST', '/sandbox/onchain/mine', () => user.token, { blocks: 1 }],
    ['POST', '/admin/accounts', () => h.adminToken, { name: 'Fuzz', tier: 'standard', withKey: false }],
    ['PUT', '/admin/accounts/{account}/tier', () => h.adminToken, { tier: 'premium' }],
    ['POST', '/admin/keys', () => h.adminToken, { accountId: 'acct_x' }],
    ['POST', '/admin/sandbox/fund', () => h.adminToken, { accountId: 'acct_x', ccy: 'BTC', amount: '0.001' }],
  ]
  const fill = (url: string) =>
    url.replace('{txn}', txnId).replace('{hook}', webhookId).replace('{account}', other.accountId)

  it(
    `answers hostile bodies on every endpoint with the contract's errors (${NUM_RUNS} runs each)`,
    { timeout: 240_000 },
    async () => {
      ops = 0
      for (const [method, url, token, template] of templates) {
        await fc.assert(
          fc.asyncProperty(
            fc.oneof({ weight: 3, arbitrary: mutated(template) }, { weight: 1, arbitrary: junkBody }),
            async (body) => {
              await send(method, fill(url), token(), body)
            },
          ),
          { numRuns: NUM_RUNS },
        )
      }
      await finishCase('hostile bodies', h.c.db, {
        ops,
        detail: `${templates.length} endpoint shapes, ${ENGINE}`,
      })
    },
  )

  it(
    'answers huge, deep and oddly typed bodies with 413, 400 or 415, never 5xx',
    { timeout: 60_000 },
    async () => {
      ops = 0
      const big = (n: number) => JSON.stringify({ note: 'x'.repeat(n) })
      const cases: Array<[string, Record<string, string> | undefined, number]> = [
        [big(70 * 1024), undefined, 413],
        [big(10 * 1024 * 1024), undefined, 413],
        ['['.repeat(100_000) + ']'.repeat(100_000), undefined, 413],
        ['['.repeat(30_000), undefined, 400],
        ['{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000), undefined, 400],
        ['{"sourceReq":' + '['.repeat(1000) + ']'.repeat(1000) + '}', undefined, 400],
        [
          JSON.stringify({ sourceReq: side('BTC', 'svcpay'), destReq: side('USD', 'svcpay') }),
          { 'content-type': 'text/plain' },
          415,
        ],
        [JSON.stringify({ a: 1 }), { 'content-type': 'application/x-www-form-urlencoded' }, 415],
        ['a=1&b=2', { 'content-type': 'multipart/form-data; boundary=x' }, 415],
        ['\u0000\u0001\u0002', undefined, 400],
        ['\ufeff{}', undefined, 400],
        ['{"a":1}{"b":2}', undefined, 400],
        ['{"a":1,}', undefined, 400],
        ["{'a':1}", undefined, 400],
        ['{"a":"\\ud800"}', undefined, 400],
      ]
      for (const [method, url, token] of [templates[0]!, templates[8]!, templates[11]!]) {
        for (const [body, headers, status] of cases) {
          const r = await send(method, fill(url), token(), body, headers)
          // The schema decides some of these before the body matters; the status is one of those the
          // contract gives for a bad body.
          if (status === 413 || status === 415) expect(r.status, body.slice(0, 60)).toBe(status)
          else expect([400, 409], body.slice(0, 60)).toContain(r.status)
        }
      }
      await finishCase('huge and deep bodies', h.c.db, { ops })
    },
  )

  it(
    `answers hostile paths and queries with the contract's errors (${NUM_RUNS} runs each)`,
    { timeout: 240_000 },
    async () => {
      ops = 0
      const segment = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 60 }).map((s) => encodeURIComponent(s)),
        fc.constantFrom(
          '%',
          '%00',
          '%zz',
          '..',
          '%2e%2e',
          '%2F',
          '.',
          '',
          ' ',
          '%20',
          'x'.repeat(250),
          '%F0%9F%98%80',
          '%C0%AF',
          '%ED%A0%80',
          '%uD800',
          '\u00e9',
          txnId.toUpperCase(),
          `${txnId}%00`,
          `${txnId}/..`,
        ),
      )
      const paths: Array<(s: string) => [string, string]> = [
        (s: string) => ['GET', `/api/v2/transaction/${s}`],
        (s: string) => ['PUT', `/api/v2/transaction/${s}/confirm`],
        (s: string) => ['PUT', `/api/v2/transaction/${s}/cancel`],
        (s: string) => ['GET', `/api/v2/transaction/${s}/events`],
        (s: string) => ['GET', `/api/v2/account/${s}`],
        (s: string) => ['GET', `/api/v2/account/${s}/wallet/`],
        (s: string) => ['GET', `/api/v2/account/${user.accountId}/wallet/${s}`],
        (s: string) => ['GET', `/api/v2/account/${s}/wallet/${walletId}`],
        (s: string) => ['PUT', `/api/v2/webhook/${s}`],
        (s: string) => ['DELETE', `/api/v2/webhook/${s}`],
        (s: string) => ['GET', `/api/v2/webhook/${s}/deliveries`],
        (s: string) => ['POST', `/api/v2/webhook/${webhookId}/deliveries/${s}/redeliver`],
        (s: string) => ['POST', `/api/v2/webhook/${s}/deliveries/1/redeliver`],
        (s: string) => ['GET', `/api/v2/${s}`],
        (s: string) => [s.length % 2 ? 'PATCH' : 'OPTIONS', `/api/v2/transaction/${s}`],
      ]
      for (const path of paths) {
        await fc.assert(
          fc.asyncProperty(segment, async (s) => {
            const [method, url] = path(s)
            await send(method, url, user.token, method === 'PUT' || method === 'POST' ? '{}' : undefined)
          }),
          { numRuns: NUM_RUNS },
        )
      }
      // The hosted invoice page answers people in HTML, its live status in JSON; neither ever fails
      // with a 5xx or shows a trace, and the status stream's errors have the contract's shape.
      await fc.assert(
        fc.asyncProperty(segment, async (s) => {
          // An empty segment folds '/pay//events' into the page of an id 'events': HTML again.
          for (const url of [`/pay/${s}`, `/pay/${s}/events`]) {
            ops++
            const r = await h.api('GET', url, undefined)
            expect(r.status, `GET ${url} -> ${r.raw.slice(0, 200)}`).toBeLessThan(500)
            expect(TRACE.test(r.raw), r.raw.slice(0, 200)).toBe(false)
            const html = String(r.headers['content-type']).startsWith('text/html')
            if (r.status >= 400 && !html) checkAnswer(r.status, r.raw, `GET ${url}`)
          }
        }),
        { numRuns: NUM_RUNS },
      )
      const value = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 60 }).map((s) => encodeURIComponent(s)),
        fc.constantFrom(
          '1e308',
          '-0',
          'NaN',
          '-1',
          '0',
          '101',
          '1.5',
          '99999999999999999999',
          '%',
          '%zz',
          'other',
          '1d',
          '',
          'completed,,',
          ',',
          'x'.repeat(3000),
          '2024-13-45T99:99:99Z',
          '0001-01-01',
          '9999-12-31T23:59:59.999Z',
          '+275760-09-13T00:00:00.000Z',
        ),
      )
      const listKeys = [
        'time',
        'startTime',
        'endTime',
        'txnStatuses',
        'srcMethods',
        'destMethods',
        'excludedSrcMethods',
        'excludedDestMethods',
        'limit',
        'page',
        'unknown',
        '__proto__',
        'constructor',
      ]
      const query = fc
        .array(fc.tuple(fc.constantFrom(...listKeys), value), { maxLength: 6 })
        .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'))
      const queried = [
        '/api/v2/transaction',
        `/api/v2/webhook/${webhookId}/deliveries`,
        '/api/v2/fiat/institutions',
        '/api/v2/rate',
        '/api/v2/fiat/source-of-funds-codes',
        '/api/v2/account/onchain-address',
        `/api/v2/account/${user.accountId}/wallet/`,
      ]
      const deliveryKeys = fc
        .array(fc.tuple(fc.constantFrom('page', 'limit', 'status', 'ccy', 'page[]'), value), { maxLength: 4 })
        .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'))
      for (const url of queried) {
        await fc.assert(
          fc.asyncProperty(fc.oneof(query, deliveryKeys), async (q) => {
            await send('GET', `${url}?${q}`, user.token)
          }),
          { numRuns: NUM_RUNS },
        )
      }
      await finishCase('hostile paths and queries', h.c.db, {
        ops,
        detail: `${paths.length} paths, ${queried.length} queried routes`,
      })
    },
  )

  it(
    'answers hostile headers over real HTTP with the contract errors, including from the HTTP parser',
    { timeout: 60_000 },
    async () => {
      ops = 0
      await h.app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = h.app.server.address() as AddressInfo
      /** Writes raw bytes to the server and reads the whole answer, until the server closes. */
      const raw = (text: string | Buffer) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          ops++
          const socket = net.connect(port, '127.0.0.1')
          let data = ''
          socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')))
          socket.on('data', (d) => (data += d.toString('latin1')))
          socket.on('error', reject)
          socket.on('close', () => {
            const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)
            const body = data.split('\r\n\r\n').slice(1).join('\r\n\r\n')
            resolve({ status, body: /transfer-encoding: chunked/i.test(data) ? dechunk(body) : body })
          })
          // Written without a half-close: every request here either asks the server to close the
          // connection after its answer or is malformed, after which the server closes it anyway.
          socket.write(text)
        })
      const get = (headers: Record<string, string>, path = `/api/v2/account/${user.accountId}/wallet/`) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          ops++
          const req = http.request({ host: '127.0.0.1', port, path, method: 'GET', headers }, (res) => {
            let body = ''
            res.on('data', (d) => (body += d))
            res.on('end', () => resolve({ status: res.statusCode!, body }))
          })
          req.on('error', reject)
          req.end()
        })
      const expectError = (r: { status: number; body: string }, what: string, status?: number) => {
        checkAnswer(r.status, r.body, what)
        expect(r.status, what).toBeGreaterThanOrEqual(400)
        if (status) expect(r.status, `${what}: ${r.body}`).toBe(status)
      }

      expectError(
        await get({ authorization: 'Bearer ' + 'a'.repeat(20_000) }),
        'oversized Authorization',
        400,
      )
      expectError(
        await get({ 'x-filler': 'b'.repeat(70_000), authorization: `Bearer ${user.token}` }),
        'oversized header block',
        400,
      )
      expectError(
        await get({ authorization: 'Bearer ' + 'a'.repeat(8_000) }),
        'long but acceptable Authorization',
        401,
      )
      expectError(
        await get({ authorization: `Bearer ${user.token}\u00ff\u00fe` }),
        'latin-1 bytes in a token',
        401,
      )
      expectError(
        await get({ authorization: `Bearer ${user.token}` }, '/api/v2/transaction/' + 'x'.repeat(20_000)),
        'oversized URL',
        400,
      )
      const many: Record<string, string> = {}
      for (let i = 0; i < 3000; i++) many[`x-h${i}`] = 'v'
      const r = await get({ ...many, authorization: `Bearer ${user.token}` })
      if (r.status >= 400) expectError(r, 'three thousand headers')
      const ok = await get({ authorization: `Bearer ${user.token}` })
      expect(ok.status).toBe(200)

      const wallets = `/api/v2/account/${user.accountId}/wallet/`
      expectError(
        await raw(`GET ${wallets} HTTP/1.1\r\nHost: x\r\nX-Bad\u0001: y\r\n\r\n`),
        'control character in a header name',
        400,
      )
      expectError(
        await raw(`GET ${wallets} HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n`),
        'NUL in a header value',
        400,
      )
      expectError(await raw('GARBAGE\r\n\r\n'), 'malformed request line', 400)
      expectError(
        await raw(
          `POST /api/v2/transaction HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        ),
        'bad chunk size',
        400,
      )
      expectError(
        await raw(
          `POST /api/v2/transaction HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\nContent-Type: application/json\r\n\r\n{}{}{}`,
        ),
        'two Content-Lengths',
        400,
      )
      expectError(
        await raw(`POST /api/v2/transaction HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`),
        'negative Content-Length',
        400,
      )
      expectError(
        await raw(
          `POST /api/v2/transaction HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: application/json; charset=utf-16\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}`,
        ),
        'utf-16 JSON',
      )
      expectError(
        await raw(
          `POST /api/v2/authentication/token-signature HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${'k'.repeat(10_000)}\r\nX-Api-Signature: ${'0'.repeat(64)}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}`,
        ),
        'huge API key',
        401,
      )
      const twice = await raw(
        `GET ${wallets} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${other.token}\r\nAuthorization: Bearer ${user.token}\r\nConnection: close\r\n\r\n`,
      )
      // Node keeps the first of repeated Authorization headers: the other account's, which may not read these wallets.
      expectError(twice, 'two Authorization headers', 401)
      await finishCase('hostile headers', h.c.db, { ops })
    },
  )

  it(
    'never echoes a submitted value in an error text (issue 16, defect 8)',
    { timeout: 120_000 },
    async () => {
      ops = 0
      const payout = (sourceOfFunds: unknown, destExtra: Record<string, unknown> = {}) => ({
        sourceReq: side('VND', 'svcpay', { amtRequested: '500000' }),
        destReq: {
          ccy: 'VND',
          method: 'vnd-instant',
          reqDetails: { bankAcctNum: '0123456789', institutionCode: '970436' },
          kyc: { type: 'individual', details: { legalFullName: 'Nguyen Van A', countryCode: 'VN' } },
          ...destExtra,
        },
        sourceOfFunds,
      })
      // Each case puts the marker where a value goes and must be refused without repeating it.
      const cases: Array<
        (m: { word: string; code: number; ccy: string }) => [string, string, string, unknown]
      > = [
        ({ code }) => [
          'POST',
          '/api/v2/transaction',
          user.token,
          payout({ purpose: code, source: 1, relationship: 1 }),
        ],
        ({ code }) => [
          'POST',
          '/api/v2/transaction',
          user.token,
          payout({ purpose: 1, source: code, relationship: code }),
        ],
        ({ word }) => [
          'POST',
          '/api/v2/transaction',
          user.token,
          { sourceReq: side('BTC', word), destReq: side('BTC', 'svcpay') },
        ],
        ({ word }) => [
          'POST',
          '/api/v2/transaction',
          user.token,
          { sourceReq: side('BTC', 'svcpay'), destReq: { ccy: 'BTC', method: word, reqDetails: {} } },
        ],
        ({ ccy }) => [
          'POST',
          '/api/v2/transaction',
          user.token,
          { sourceReq: side('BTC', 'svcpay'), destReq: { ccy, method: 'svcpay', reqDetails: {} } },
        ],
        ({ ccy }) => [
          'POST',
          '/api/v2/transaction',
          user.token,
          { sourceReq: side(ccy, 'svcpay'), destReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} } },
        ],
        ({ word }) => ['GET', `/api/v2/${word}`, user.token, undefined],
        ({ word }) => ['DELETE', `/api/v2/rate/${word}`, user.token, undefined],
        ({ word }) => ['POST', '/api/v2/transaction', user.token, `{"note": ${word}}`],
        ({ word }) => ['POST', '/admin/accounts', h.adminToken, { name: 'x', parentId: `acct_${word}` }],
        ({ ccy }) => [
          'POST',
          '/admin/sandbox/fund',
          h.adminToken,
          { accountId: user.accountId, ccy, amount: '1' },
        ],
      ]
      const marker = fc.record({
        word: fc.stringMatching(/^[a-z]{6}[0-9]{6}$/),
        code: fc.integer({ min: 100_000_000, max: 999_999_999 }),
        ccy: fc.stringMatching(/^[A-Z]{5}$/).filter((c) => !/BTC|USD|VND|CAD|EUR/.test(c)),
      })
      await fc.assert(
        fc.asyncProperty(marker, fc.integer({ min: 0, max: cases.length - 1 }), async (m, which) => {
          const [method, url, token, body] = cases[which]!(m)
          const r = await send(
            method,
            url,
            token,
            typeof body === 'string' || body === undefined ? body : JSON.stringify(body),
          )
          expect(r.status, `${method} ${url}`).toBeGreaterThanOrEqual(400)
          for (const value of [m.word, String(m.code), m.ccy]) {
            expect(r.raw.includes(value), `${method} ${url} echoed ${value}: ${r.raw}`).toBe(false)
          }
        }),
        { numRuns: Math.max(60, NUM_RUNS) },
      )
      await finishCase('no echo of input', h.c.db, { ops })
    },
  )
})

/** Joins the chunks of a chunked HTTP/1.1 body. */
function dechunk(body: string): string {
  let out = ''
  let rest = body
  for (;;) {
    const eol = rest.indexOf('\r\n')
    if (eol < 0) return out
    const size = parseInt(rest.slice(0, eol), 16)
    if (!size) return out
    out += rest.slice(eol + 2, eol + 2 + size)
    rest = rest.slice(eol + 4 + size)
  }
}
