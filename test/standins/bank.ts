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
 * - "Balance": `GET /v1/balance` -> `{ currency: 'VND', available }`, or 404 when `balance` is unset;
 *   it counts every credit the statement lists, as an account's balance counts money received.
 *   `available` is the opening float plus what was deposited (`deposit()`), less every payout not
 *   failed, rejected or returned: a payout's money is set aside when the partner accepts it.
 * - "List payouts": `GET /v1/payouts?since=<ms>&limit=<1..200>&cursor=<c>` -> `{ data: Payout[],
 *   nextCursor }`, oldest first by `createdAt`, every payout of this API key whatever its status.
 * - "Notifications": `notify()` posts a payout to our notification URL, signed over its exact body.
 * - "Incoming credits": `receiveCredit()` books a transfer into our account, posts it to
 *   `creditNotifyUrl` as a signed credit notification (or not, twice, or held to be sent later and
 *   out of order) and lists it in `GET /v1/credits?since=&limit=&cursor=`, oldest first by
 *   `bookedAt`, paged like the payouts. There is no public upstream for Vietnamese bank partners'
 *   credit APIs: this follows our own API (docs/payouts.md) and the common shape of the "balance
 *   change" webhooks of Vietnamese banks' open-banking aggregators, where each incoming transfer is
 *   pushed as one JSON object (the bank's transaction id, the amount in whole đồng, the transfer's
 *   description as the payer typed it, the booking time, sometimes the payer's account), authenticated
 *   by a shared secret, pushed again when the receiver does not answer 2xx, and also readable from a
 *   transaction history to catch what a push missed.
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

/** An incoming transfer as the partner shows it ("Incoming credits"). */
export interface StandinCredit {
  type: 'credit'
  id: string
  amount: string
  currency: string
  description: string
  bookedAt: number
  payer?: { bankBin?: string; accountNumber?: string; name?: string }
}

/** What happens to a credit's notification: posted once, twice, held for `releaseHeld()`, or never. */
export type CreditDelivery = 'once' | 'twice' | 'held' | 'none'

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
  /** Every credit booked, and items listed as they are even when malformed (`listRaw`). */
  readonly credits: Array<StandinCredit | Record<string, unknown>> = []
  /** Where credit notifications are posted (our `/partners/bank/credits`). */
  creditNotifyUrl: string | undefined
  private held: StandinCredit[] = []

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

  /**
   * A transfer reaches our account: it is booked (listed in GET /v1/credits) and its notification
   * is sent as `delivery` says. Returns the credit and the HTTP statuses our endpoint answered.
   */
  async receiveCredit(
    input: {
      amount: bigint | string
      description: string
      bookedAt?: number
      payer?: StandinCredit['payer']
    },
    delivery: CreditDelivery = 'once',
  ): Promise<{ credit: StandinCredit; statuses: number[] }> {
    const credit: StandinCredit = {
      type: 'credit',
      id: `CR${this.nextId++}`,
      amount: String(input.amount),
      currency: 'VND',
      description: input.description,
      bookedAt: input.bookedAt ?? this.now(),
      ...(input.payer ? { payer: input.payer } : {}),
    }
    this.credits.push(credit)
    // A transfer in is booked to the account the moment the bank lists it: the balance counts it
    // whether or not our notification got through.
    this.deposited += BigInt(credit.amount)
    const statuses: number[] = []
    if (delivery === 'held') this.held.push(credit)
    if (delivery === 'once' || delivery === 'twice') statuses.push(await this.postCredit(credit))
    if (delivery === 'twice') statuses.push(await this.postCredit(credit))
    return { credit, statuses }
  }

  /** Post the held notifications, newest first by default (out of order); the statuses answered. */
  async releaseHeld(order: 'newest-first' | 'oldest-first' = 'newest-first'): Promise<number[]> {
    const held = order === 'newest-first' ? [...this.held].reverse() : [...this.held]
    this.held = []
    const statuses: number[] = []
    for (const credit of held) statuses.push(await this.postCredit(credit))
    return statuses
  }

  /** An item listed in GET /v1/credits exactly as given (to list a malformed one). */
  listRaw(item: Record<string, unknown>): void {
    this.credits.push(item)
  }

  /** A credit's notification, signed over its exact body ("Incoming credits"). */
  creditNotification(credit: StandinCredit): { body: string; signature: string } {
    const body = JSON.stringify(credit)
    const secret = this.opts.notifySecret ?? ''
    return { body, signature: createHmac('sha256', secret).update(body).digest('hex') }
  }

  private async postCredit(credit: StandinCredit): Promise<number> {
    if (!this.creditNotifyUrl) throw new Error('the stand-in has no creditNotifyUrl')
    const { body, signature } = this.creditNotification(credit)
    const res = await fetch(this.creditNotifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-partner-signature': signature },
      body,
    })
    await res.arrayBuffer()
    return res.status
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
    if (method === 'GET' && (path === '/v1/credits' || path.startsWith('/v1/credits?')))
      return this.listCredits(path)
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

  /** "Incoming credits": booked at or after `since`, oldest first, a page after `cursor` (an id). */
  private listCredits(path: string): [number, unknown] {
    const bookedAt = (c: { bookedAt?: unknown }) => (typeof c.bookedAt === 'number' ? c.bookedAt : 0)
    // A stable sort: credits booked at the same instant keep the order they were booked in.
    return listPage(path, (since) =>
      this.credits.filter((c) => bookedAt(c) >= since).sort((a, b) => bookedAt(a) - bookedAt(b)),
    )
  }

  /** "List payouts": a page after `cursor` (the last id of the previous page), oldest first. */
  private list(path: string): [number, unknown] {
    return listPage(path, (since) => [...this.byId.values()].filter((p) => p.createdAt >= since).map(view))
  }
}

/**
 * One page of a partner listing (docs/payouts.md, "List payouts" and "List credits"): the items at
 * or after `since`, `limit` of them after the one whose id is `cursor`; a bad query is a 400.
 */
function listPage(path: string, itemsSince: (since: number) => { id?: unknown }[]): [number, unknown] {
  const query = new URLSearchParams(path.split('?')[1] ?? '')
  const since = Number(query.get('since') ?? '0')
  const limit = Number(query.get('limit') ?? String(LIST_LIMIT_DEFAULT))
  if (!Number.isSafeInteger(since) || since < 0) return [400, { error: 'invalid_since' }]
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX)
    return [400, { error: 'invalid_limit' }]
  const all = itemsSince(since)
  const cursor = query.get('cursor')
  const start = cursor === null ? 0 : all.findIndex((item) => item.id === cursor) + 1
  if (cursor !== null && start === 0) return [400, { error: 'invalid_cursor' }]
  const page = all.slice(start, start + limit)
  const more = start + limit < all.length
  return [200, { data: page, nextCursor: more ? String(page.at(-1)!.id) : null }]
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
