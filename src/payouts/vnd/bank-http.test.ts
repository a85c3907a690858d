import { createHmac } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { RailFailure } from '../../rails/rail.js'
import { createBankHttpRail, type BankHttpConfig } from './bank-http.js'

const API_KEY = 'partner-key-123'
const SECRET = 'partner-webhook-secret-0123456789'

const PAYOUT = {
  requestId: 'txn_01HZX-payout',
  amountMinor: 2_500_000n,
  ccy: 'VND' as const,
  bankAcctNum: '0011004567890',
  institutionCode: '970436',
  beneficiary: { type: 'individual' as const, legalFullName: 'Nguyễn Văn An', countryCode: 'VN' },
  sourceOfFunds: { purpose: 1, source: 3, relationship: 2 },
}

interface Recorded {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: unknown
}
type Answer = { status: number; json?: unknown; hang?: boolean }

/**
 * The partner API of docs/payouts.md, kept in memory: payouts by id and by idempotency key, and a
 * hook to answer differently per request.
 */
class FakePartner {
  readonly requests: Recorded[] = []
  readonly byKey = new Map<string, Record<string, unknown>>()
  readonly byId = new Map<string, Record<string, unknown>>()
  override: ((request: Recorded) => Answer | undefined) | undefined
  private server = http.createServer((req, res) => this.handle(req, res))
  private nextId = 1
  url = ''

  async start(): Promise<void> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise((done) => this.server.close(done))
  }

  private answer(request: Recorded): Answer {
    if (request.headers.authorization !== `Bearer ${API_KEY}`)
      return { status: 401, json: { error: 'unauthorized' } }
    if (request.method === 'POST' && request.path === '/v1/payouts') {
      const key = String(request.headers['idempotency-key'])
      const existing = this.byKey.get(key)
      if (existing) return { status: 409, json: { error: 'duplicate_idempotency_key', payout: existing } }
      const body = request.body as { amount: string; currency: string }
      const payout = {
        id: `po_${this.nextId++}`,
        status: 'pending',
        amount: body.amount,
        currency: body.currency,
      }
      this.byKey.set(key, payout)
      this.byId.set(payout.id, payout)
      return { status: 201, json: payout }
    }
    const match = /^\/v1\/payouts\/([^/]+)$/.exec(request.path)
    if (request.method === 'GET' && match) {
      const payout = this.byId.get(decodeURIComponent(match[1] ?? ''))
      return payout ? { status: 200, json: payout } : { status: 404, json: { error: 'not_found' } }
    }
    return { status: 404, json: { error: 'not_found' } }
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const request: Recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      }
      this.requests.push(request)
      const answer = this.override?.(request) ?? this.answer(request)
      if (answer.hang) return
      res.writeHead(answer.status, { 'content-type': 'application/json' })
      res.end(answer.json === undefined ? '' : JSON.stringify(answer.json))
    })
  }
}

let partner: FakePartner

beforeEach(async () => {
  partner = new FakePartner()
  await partner.start()
})
afterEach(async () => {
  await partner.stop()
})

function rail(overrides: Partial<BankHttpConfig> = {}) {
  return createBankHttpRail({
    url: partner.url,
    apiKey: API_KEY,
    webhookSecret: SECRET,
    timeoutMs: 2_000,
    ...overrides,
  })
}

async function failure(promise: Promise<unknown>): Promise<RailFailure> {
  try {
    await promise
  } catch (err) {
    expect(err).toBeInstanceOf(RailFailure)
    return err as RailFailure
  }
  throw new Error('expected a RailFailure')
}

describe('createBankHttpRail: submitting', () => {
  it('posts the payout as docs/payouts.md defines it', async () => {
    const { bankRef } = await rail().submitPayout(PAYOUT)
    expect(bankRef).toBe('po_1')
    expect(partner.requests).toHaveLength(1)
    const [sent] = partner.requests
    expect(sent?.method).toBe('POST')
    expect(sent?.path).toBe('/v1/payouts')
    expect(sent?.headers['idempotency-key']).toBe(PAYOUT.requestId)
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`)
    expect(sent?.headers['content-type']).toBe('application/json')
    expect(sent?.body).toEqual({
      amount: '2500000',
      currency: 'VND',
      beneficiary: {
        accountNumber: '0011004567890',
        bankBin: '970436',
        name: 'Nguyễn Văn An',
        country: 'VN',
        type: 'individual',
      },
      purposeCode: 1,
      sourceCode: 3,
      relationshipCode: 2,
    })
  })

  it('sends amounts beyond a float’s exact range as exact integer text', async () => {
    await rail().submitPayout({ ...PAYOUT, amountMinor: 9_007_199_254_740_993n })
    expect((partner.requests[0]?.body as { amount: string }).amount).toBe('9007199254740993')
  })

  it('answers a repeated request with the payout the first one created (409)', async () => {
    const bank = rail()
    const first = await bank.submitPayout(PAYOUT)
    const again = await bank.submitPayout(PAYOUT)
    expect(again).toEqual(first)
    expect(partner.byId.size).toBe(1)
    expect(partner.requests.map((request) => request.headers['idempotency-key'])).toEqual([
      PAYOUT.requestId,
      PAYOUT.requestId,
    ])
  })

  it('does not take a 409 payout for another amount as ours', async () => {
    await rail().submitPayout(PAYOUT)
    const err = await failure(rail().submitPayout({ ...PAYOUT, amountMinor: 1n }))
    expect([err.code, err.retryable]).toEqual(['bank_request_conflict', true])
  })

  it('maps validation refusals to a final rejected, without quoting the partner’s text', async () => {
    for (const status of [400, 422]) {
      partner.override = () => ({
        status,
        json: { error: 'invalid_account', message: 'account 0011004567890 of Nguyễn Văn An is closed' },
      })
      const err = await failure(rail().submitPayout(PAYOUT))
      expect([err.code, err.retryable]).toEqual(['rejected', false])
      expect(err.message).toContain('invalid_account')
      expect(err.message).not.toContain('0011004567890')
      expect(err.message).not.toContain('Nguyễn')
    }
  })

  it('treats server errors, rate limits and a bad key as retryable', async () => {
    for (const status of [500, 502, 503, 429]) {
      partner.override = () => ({ status, json: { error: 'later' } })
      const err = await failure(rail().submitPayout(PAYOUT))
      expect([err.code, err.retryable]).toEqual([`bank_http_${status}`, true])
    }
    partner.override = undefined
    const unauthorized = await failure(rail({ apiKey: 'wrong' }).submitPayout(PAYOUT))
    expect([unauthorized.code, unauthorized.retryable]).toEqual(['bank_http_401', true])
  })

  it('treats a time-out as retryable, and the retry finds the payout the partner made', async () => {
    let first = true
    // The partner creates the payout, then its answer is lost.
    partner.override = (request) => {
      if (!first) return undefined
      first = false
      const key = String(request.headers['idempotency-key'])
      const payout = { id: 'po_lost', status: 'processing', amount: '2500000', currency: 'VND' }
      partner.byKey.set(key, payout)
      partner.byId.set(payout.id, payout)
      return { status: 0, hang: true }
    }
    const bank = rail({ timeoutMs: 300 })
    const started = Date.now()
    const err = await failure(bank.submitPayout(PAYOUT))
    expect([err.code, err.retryable]).toEqual(['bank_timeout', true])
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(await bank.submitPayout(PAYOUT)).toEqual({ bankRef: 'po_lost' })
    expect(partner.byId.size).toBe(1)
  })

  it('treats an answer it cannot read as retryable', async () => {
    partner.override = () => ({ status: 201, json: { ok: true } })
    const err = await failure(rail().submitPayout(PAYOUT))
    expect([err.code, err.retryable]).toEqual(['bank_bad_response', true])
  })

  it('refuses a redirect as unreachable and an answer over 256 KiB as a bad response, both retryable', async () => {
    partner.override = () => ({ status: 307 })
    const moved = await failure(rail().submitPayout(PAYOUT))
    expect([moved.code, moved.retryable]).toEqual(['bank_unreachable', true])
    partner.override = () => ({
      status: 201,
      json: { id: 'po_1', status: 'pending', pad: 'x'.repeat(256 * 1024) },
    })
    const huge = await failure(rail().submitPayout(PAYOUT))
    expect([huge.code, huge.retryable]).toEqual(['bank_bad_response', true])
    expect(huge.message).toContain('larger than 262144 bytes')
  })

  it('treats an unreachable partner as retryable', async () => {
    const url = partner.url
    await partner.stop()
    const err = await failure(createBankHttpRail({ url, apiKey: API_KEY }).submitPayout(PAYOUT))
    expect([err.code, err.retryable]).toEqual(['bank_unreachable', true])
    partner = new FakePartner()
    await partner.start()
  })
})

describe('createBankHttpRail: following a payout', () => {
  it('maps every documented status', async () => {
    const bank = rail()
    const { bankRef } = await bank.submitPayout(PAYOUT)
    const payout = partner.byId.get(bankRef) as Record<string, unknown>
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{ status: 'pending' }, { status: 'pending' }],
      [{ status: 'processing' }, { status: 'pending' }],
      [{ status: 'completed' }, { status: 'completed' }],
      [
        { status: 'failed', reason: 'account_closed' },
        { status: 'failed', reason: 'account_closed' },
      ],
      [
        { status: 'rejected', reason: 'name_mismatch' },
        { status: 'rejected', reason: 'name_mismatch' },
      ],
      [
        { status: 'rejected', reason: 'Name does not match Nguyễn' },
        { status: 'rejected', reason: 'bank_rejected' },
      ],
      [
        { status: 'failed', reason: undefined },
        { status: 'failed', reason: 'bank_failed' },
      ],
    ]
    for (const [change, expected] of cases) {
      Object.assign(payout, change)
      expect(await bank.getPayout(bankRef)).toEqual(expected)
    }
    const read = partner.requests.at(-1)
    expect(read?.method).toBe('GET')
    expect(read?.path).toBe(`/v1/payouts/${bankRef}`)
    expect(read?.headers.authorization).toBe(`Bearer ${API_KEY}`)
    expect(read?.headers['idempotency-key']).toBeUndefined()
  })

  it('keeps asking when the partner does not know the payout, times out or fails', async () => {
    const bank = rail({ timeoutMs: 300 })
    const unknown = await failure(bank.getPayout('po_404'))
    expect([unknown.code, unknown.retryable]).toEqual(['bank_payout_unknown', true])
    partner.override = () => ({ status: 503 })
    const down = await failure(bank.getPayout('po_1'))
    expect([down.code, down.retryable]).toEqual(['bank_http_503', true])
    partner.override = () => ({ status: 0, hang: true })
    const slow = await failure(bank.getPayout('po_1'))
    expect([slow.code, slow.retryable]).toEqual(['bank_timeout', true])
    partner.override = () => ({ status: 200, json: { id: 'po_other', status: 'completed' } })
    const wrong = await failure(bank.getPayout('po_1'))
    expect([wrong.code, wrong.retryable]).toEqual(['bank_bad_response', true])
  })

  it('refuses a reference that does not belong in a URL', async () => {
    const err = await failure(rail().getPayout('../admin'))
    expect([err.code, err.retryable]).toEqual(['invalid_bank_ref', false])
    expect(partner.requests).toHaveLength(0)
  })
})

describe('createBankHttpRail: notifications', () => {
  const body = JSON.stringify({ id: 'po_7', status: 'completed' })
  const sign = (text: string, secret = SECRET) => createHmac('sha256', secret).update(text).digest('hex')

  it('accepts a correctly signed notification and names the payout', () => {
    expect(rail().verifyNotification(body, sign(body))).toEqual({ bankRef: 'po_7' })
    expect(rail().verifyNotification(Buffer.from(body), sign(body))).toEqual({ bankRef: 'po_7' })
  })

  it('refuses a wrong, missing or malformed signature, and any signature without a secret', () => {
    expect(rail().verifyNotification(body, sign(body, 'another-secret-0123456789'))).toBeNull()
    expect(rail().verifyNotification(body + ' ', sign(body))).toBeNull()
    expect(rail().verifyNotification(body, undefined)).toBeNull()
    expect(rail().verifyNotification(body, 'zz')).toBeNull()
    expect(rail().verifyNotification(body, sign(body).toUpperCase())).toBeNull()
    expect(rail({ webhookSecret: undefined }).verifyNotification(body, sign(body))).toBeNull()
    const notJson = 'not json'
    expect(rail().verifyNotification(notJson, sign(notJson))).toBeNull()
  })
})
