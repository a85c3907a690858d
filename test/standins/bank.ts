/**
 * A stand-in for the bank payout partner, answering as docs/payouts.md ("Bank payout partner API")
 * says a partner does. There is no upstream implementation to follow: the API is ours, so every
 * behaviour below names the section of docs/payouts.md it follows. Test code only.
 *
 * What it checks, as a partner must:
 * - "Authentication": `Authorization: Bearer <apiKey>`, before any routing: a wrong key is 401
 *   `unauthorized` on every path, known or not.
 * - "Request signing": with a signing secret, `X-Svcpay-Timestamp` and `X-Svcpay-Signature` over
 *   `<timestamp>.<METHOD>.<path>.<body>`; a missing or wrong signature is 401 `bad_signature`, a
 *   timestamp more than five minutes from its clock 401 `stale_signature`.
 * - "Payouts": `POST /v1/payouts` with `Idempotency-Key` (201, or 409 with the payout that key
 *   made), `GET /v1/payouts/{id}` (404 for an id it never gave).
 * - "Balance": `GET /v1/balance` -> `{ currency: 'VND', available }`, or 404 when `balance` is unset.
 *   `available` is the opening float plus what was deposited (`deposit()`), less every payout not
 *   failed, rejected or returned: a payout's money is set aside when the partner accepts it.
 * - "List payouts": `GET /v1/payouts?since=<ms>&limit=<1..200>&cursor=<c>` -> `{ data: Payout[],
 *   nextCursor }`, oldest first by `createdAt`, every payout of this API key whatever its status.
 * - "Notifications": `notify()` posts a payout to our notification URL, signed over its exact body.
 * - "Account inquiry": `GET /v1/accounts/{bankBin}/{accountNumber}` (bank-accounts.ts, which says
 *   where that behaviour comes from); register holders with `accounts.setAccount`.
 *
 * And it fails as a partner's service does: `failNext` answers the next requests with a status or
 * holds them without answer (a time-out), `stop()`/`start()` take it down and bring it back on the
 * same port with every payout kept (a restart).
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { StandinAccounts } from './bank-accounts.js'

export interface StandinPayout {
  id: string
  status: 'pending' | 'processing' | 'completed' | 'failed' | 'rejected' | 'returned' | 'reversed'
  amount: string
  currency: string
  reason?: string
  key: string
  body: Record<string, unknown>
  /** When the partner accepted it (epoch ms, its own clock). */
  createdAt: number
}

export interface BankStandinOptions {
  apiKey: string
  /** The secret our requests must be signed with; unset: signatures are not required. */
  signingSecret?: string
  /** The secret its notifications are signed with. */
  notifySecret?: string
  /** The opening float (whole đồng, as text), before any deposit or payout; unset: GET /v1/balance is 404. */
  balance?: string
  /** The partner's clock. */
  now?: () => number
}

type Failure = { status: number } | 'hang'

const MAX_SKEW_MS = 5 * 60_000

export class BankStandin {
  readonly byId = new Map<string, StandinPayout>()
  readonly byKey = new Map<string, StandinPayout>()
  /** The account inquiry's holders (bank-accounts.ts). */
  readonly accounts = new StandinAccounts()
  /** Every request received, with the verdict given. */
  readonly seen: Array<{
    method: string
    path: string
    status: number | 'hang'
    headers: http.IncomingHttpHeaders
  }> = []
  private failures: Failure[] = []
  /** Money the operator sent to the account with the partner (whole đồng). */
  private deposited = 0n
  private server: http.Server | undefined
  private port = 0
  private nextId = 1

  constructor(readonly opts: BankStandinOptions) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** Listen (again, on the same port after a stop). */
  async start(): Promise<void> {
    const server = http.createServer((req, res) => this.handle(req, res))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as AddressInfo).port
    this.server = server
  }

  /** Go down: connections are cut, requests held without answer are dropped. */
  async stop(): Promise<void> {
    const server = this.server
    this.server = undefined
    if (!server) return
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }

  /** Answer the next requests with these failures, one each, before answering normally again. */
  failNext(...failures: Failure[]): void {
    this.failures.push(...failures)
  }

  /** The operator tops up the account held with the partner. */
  deposit(amount: bigint): void {
    this.deposited += amount
  }

  /**
   * A payout the partner made on someone else's instruction (another system using our key, a
   * mistake at the partner): it is as real as ours, completed, and no transaction of ours made it.
   */
  payoutMadeElsewhere(amount: bigint): StandinPayout {
    const payout = this.create(`elsewhere-${this.nextId}`, {
      amount: amount.toString(),
      currency: 'VND',
    })
    payout.status = 'completed'
    return payout
  }

  /** What GET /v1/balance reports: the float, deposits, less the money every live payout set aside. */
  available(): bigint | undefined {
    if (this.opts.balance === undefined) return undefined
    let total = BigInt(this.opts.balance) + this.deposited
    for (const p of this.byId.values())
      if (!['failed', 'rejected', 'returned', 'reversed'].includes(p.status)) total -= BigInt(p.amount)
    return total
  }

  payout(id: string): StandinPayout {
    const payout = this.byId.get(id)
    if (!payout) throw new Error(`the stand-in has no payout ${id}`)
    return payout
  }

  /** Post a payout to our notification endpoint, signed as docs/payouts.md "Notifications" says. */
  notificationFor(id: string): { body: string; signature: string } {
    const p = this.payout(id)
    const body = JSON.stringify(view(p))
    const secret = this.opts.notifySecret ?? ''
    return { body, signature: createHmac('sha256', secret).update(body).digest('hex') }
  }

  private now(): number {
    return (this.opts.now ?? Date.now)()
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      const method = req.method ?? ''
      const path = req.url ?? ''
      const failure = this.failures.shift()
      if (failure === 'hang') {
        this.seen.push({ method, path, status: 'hang', headers: req.headers })
        return
      }
      const [status, json] = failure
        ? [failure.status, { error: 'unavailable' }]
        : this.answer(req, method, path, raw)
      this.seen.push({ method, path, status, headers: req.headers })
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(json))
    })
  }

  private answer(req: http.IncomingMessage, method: string, path: string, raw: Buffer): [number, unknown] {
    // "Authentication": before routing, so a wrong key never learns which paths exist.
    if (!safeEqual(req.headers.authorization ?? '', `Bearer ${this.opts.apiKey}`))
      return [401, { error: 'unauthorized' }]
    // "Request signing".
    if (this.opts.signingSecret) {
      const timestamp = header(req, 'x-svcpay-timestamp')
      const signature = header(req, 'x-svcpay-signature')
      if (!timestamp || !signature || !/^\d{1,16}$/.test(timestamp)) return [401, { error: 'bad_signature' }]
      const expected = createHmac('sha256', this.opts.signingSecret)
        .update(`${timestamp}.${method}.${path}.`)
        .update(raw)
        .digest('hex')
      if (!safeEqual(signature, expected)) return [401, { error: 'bad_signature' }]
      if (Math.abs(this.now() - Number(timestamp)) > MAX_SKEW_MS) return [401, { error: 'stale_signature' }]
    }
    const inquiry = this.accounts.answer(method, path)
    if (inquiry) return inquiry
    if (method === 'GET' && path === '/v1/balance') {
      const available = this.available()
      if (available === undefined) return [404, { error: 'not_found' }]
      return [200, { currency: 'VND', available: available.toString() }]
    }
    if (method === 'GET' && (path === '/v1/payouts' || path.startsWith('/v1/payouts?')))
      return this.list(path)
    if (method === 'POST' && path === '/v1/payouts') {
      const key = header(req, 'idempotency-key')
      if (!key) return [400, { error: 'idempotency_key_required' }]
      const existing = this.byKey.get(key)
      if (existing) return [409, { error: 'duplicate_idempotency_key', payout: view(existing) }]
      const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>
      return [201, view(this.create(key, body))]
    }
    const id = /^\/v1\/payouts\/([^/?]+)$/.exec(path)?.[1]
    if (method === 'GET' && id) {
      const payout = this.byId.get(decodeURIComponent(id))
      return payout ? [200, view(payout)] : [404, { error: 'not_found' }]
    }
    return [404, { error: 'not_found' }]
  }

  private create(key: string, body: Record<string, unknown>): StandinPayout {
    const payout: StandinPayout = {
      id: `PO${this.nextId++}`,
      status: 'processing',
      amount: String(body.amount),
      currency: String(body.currency),
      key,
      body,
      createdAt: this.now(),
    }
    this.byKey.set(key, payout)
    this.byId.set(payout.id, payout)
    return payout
  }

  /** "List payouts": a page after `cursor` (the last id of the previous page), oldest first. */
  private list(path: string): [number, unknown] {
    const query = new URLSearchParams(path.split('?')[1] ?? '')
    const since = Number(query.get('since') ?? '0')
    const limit = Number(query.get('limit') ?? String(LIST_LIMIT_DEFAULT))
    if (!Number.isSafeInteger(since) || since < 0) return [400, { error: 'invalid_since' }]
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX)
      return [400, { error: 'invalid_limit' }]
    const all = [...this.byId.values()].filter((p) => p.createdAt >= since)
    const cursor = query.get('cursor')
    const start = cursor === null ? 0 : all.findIndex((p) => p.id === cursor) + 1
    if (cursor !== null && start === 0) return [400, { error: 'invalid_cursor' }]
    const page = all.slice(start, start + limit)
    const more = start + limit < all.length
    return [200, { data: page.map(view), nextCursor: more ? page.at(-1)!.id : null }]
  }
}

const LIST_LIMIT_DEFAULT = 50
const LIST_LIMIT_MAX = 200

function view(p: StandinPayout) {
  return {
    id: p.id,
    status: p.status,
    amount: p.amount,
    currency: p.currency,
    createdAt: p.createdAt,
    ...(p.reason ? { reason: p.reason } : {}),
  }
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return typeof value === 'string' ? value : undefined
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export async function startBankStandin(opts: BankStandinOptions): Promise<BankStandin> {
  const standin = new BankStandin(opts)
  await standin.start()
  return standin
}
