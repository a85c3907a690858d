import { randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { parse as parseLossless } from 'lossless-json'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../helpers/harness.js'
import { CLAIM_LEASE_MS, runDueTransactions } from '../../src/transactions/worker.js'
import { claimDue } from '../../src/transactions/repository.js'
import type { BankPayoutRail } from '../../src/rails/rail.js'
import { runDueAddresses } from '../../src/onchain/deposits.js'
import { runDueDeliveries } from '../../src/events/delivery-worker.js'
import { deliveryDepsOf, startReceiver, type Receiver } from '../helpers/webhooks.js'

/**
 * The world of the model test: one real service (the in-process harness on the run's engine, on a
 * real database), its sandbox networks driven through their admin routes, a real webhook receiver
 * on 127.0.0.1, and the workers run step by step so that every command ends in a state that no
 * longer moves. Nothing of ours is mocked: requests go through the HTTP layer (inject), the
 * workers are the production functions, and time reaching a deadline is the deadline moved into
 * the past in the database, as the flow tests do. Test code only.
 *
 * Not played here, because the sandbox networks (RAILS=sandbox) have no control for them: a bank
 * payout returned after `completed` (only the partner stand-in, VND=bank-http, returns one:
 * src/payouts/flows.return.test.ts) and a reorganisation of the chain (only the Bitcoin Core and
 * Esplora stand-ins' chain, test/standins/chain.ts, reorganises: src/onchain/flows-rails.test.ts).
 */

/** One answer: the status and the body parsed with every number kept as its exact text. */
export interface Answer {
  status: number
  body: any
  raw: string
}

/** One message of a status stream (docs/webhooks.md, "The status stream"). */
export interface StreamMessage {
  id: string
  state: string
  msg: string
}

/** A status stream held open by the model test: what arrived so far, and whether the server ended it. */
export interface Stream {
  txnId: string
  who: 'a' | 'b'
  messages: StreamMessage[]
  ended: boolean
  close(): void
}

/** Streams an account may hold open at once (the service allows 20; a few are left as margin). */
export const STREAMS_PER_ACCOUNT = 15

export interface RunAccounts {
  a: TestAccount
  b: TestAccount
  /** Lightning Address usernames this run plays with (unique to the run). */
  names: string[]
  /** The status stream of each transaction the model knows (opened as the model learns of it). */
  streams: Map<string, Stream>
}

export interface World {
  h: Harness
  receiver: Receiver
  webhookSecret: string
  api(method: string, url: string, token: string | undefined, body?: unknown): Promise<Answer>
  admin(method: string, url: string, body?: unknown): Promise<Answer>
  /** Fresh accounts (and names) for one property run: each run starts from a clean state. */
  freshRun(): Promise<RunAccounts>
  /** Runs the workers until nothing is left to do now (deposits seen, transactions moved, webhooks out). */
  settle(): Promise<void>
  /** The clock reaches the deadline of `txnId` (its quote, address, invoice or transfer window). */
  passDeadline(txnId: string, graceMs?: number): Promise<void>
  /**
   * Opens the status stream of `txnId` from its first event (`Last-Event-ID: 0`), over real HTTP.
   * Undefined when the account holds as many streams as it may (429): opened again later.
   */
  openStream(txnId: string, token: string, who: 'a' | 'b'): Promise<Stream | undefined>
  /** The sandbox bank's delay for a payout has passed: its next look reads the outcome. */
  bankSettles(txnId: string): Promise<void>
  /**
   * A worker claims what is due now (the production claim, with its lease), optionally hands
   * `submitTxnId` to the bank as the worker's payout step does, and dies before committing
   * anything more. Returns what it had claimed.
   */
  crashWorker(submit?: { txnId: string }): Promise<{ claimed: string[]; bankRef?: string }>
  /** The dead worker's lease runs out (its end moved into the past) and a new worker runs. */
  leaseLapses(claimed: string[]): Promise<void>
  /** The webhook receiver answers 200 (up) or 503 (down). */
  setReceiverUp(up: boolean): void
  close(): Promise<void>
}

/** Every number as its exact decimal text: amounts are compared as minor units, never as floats. */
export function parseExact(text: string): any {
  if (!text) return undefined
  try {
    return parseLossless(text, null, (n: string) => n)
  } catch {
    return text
  }
}

/** Exact decimal text (or a JSON number's text) to minor units; null stays null. */
export function toMinor(v: unknown, decimals: number): bigint | null {
  if (v === null || v === undefined) return null
  const s = String(v)
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s)
  if (!m) throw new Error(`not a decimal amount: ${s}`)
  const frac = (m[3] ?? '').replace(/0+$/, '')
  if (frac.length > decimals) throw new Error(`${s} has more than ${decimals} decimals`)
  const minor = BigInt(m[2]! + frac.padEnd(decimals, '0'))
  return m[1] ? -minor : minor
}

/** Minor units to the decimal text a request sends. */
export function fromMinor(minor: bigint, decimals: number): string {
  if (decimals === 0) return minor.toString()
  const s = minor.toString().padStart(decimals + 1, '0')
  return `${s.slice(0, -decimals)}.${s.slice(-decimals)}`
}

export const ENV: Record<string, string> = {
  // Receives are free (the defaults, pinned so that the model's arithmetic is the config's).
  FEE_LIGHTNING_RECEIVE: '0+0',
  FEE_ONCHAIN_RECEIVE: '0+0',
  FEE_VND_RECEIVE: '0+0',
  ALLOW_HTTP_WEBHOOKS: 'true',
  // Webhook retries come at once in the model: the receiver coming back up is seen on the next settle.
  WEBHOOK_BACKOFF_BASE_MS: '1',
  // The sandbox bank settles a payout only when the model says so (the BankSettles command).
  SANDBOX_PAYOUT_DELAY_MS: '600000',
}

export async function createWorld(): Promise<World> {
  const h = await createHarness(ENV)
  const webhookSecret = 'whsec_' + randomBytes(12).toString('hex')
  const receiver = await startReceiver(webhookSecret)
  let up = true
  receiver.respond = () => (up ? 200 : 503)
  let run = 0
  // The status streams need a real connection (inject waits for the end of an answer): the app
  // also listens on a port the system picks, on 127.0.0.1 only.
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
  let streams = new Map<string, Stream>()

  const api: World['api'] = async (method, url, token, body) => {
    const res = await h.app.inject({
      method: method as any,
      url,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined || method === 'PUT' ? { 'content-type': 'application/json' } : {}),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.statusCode, body: parseExact(res.body), raw: res.body }
  }
  const admin: World['admin'] = (method, url, body) => api(method, url, h.adminToken, body ?? {})

  const deliveryDeps = deliveryDepsOf(h.c, { retryDelayMs: () => 0 })
  const settle = async () => {
    // A payment is seen by the watcher, its transaction moves, and what that commits is delivered:
    // three passes reach every state a command can lead to without the clock or the chain moving.
    for (let i = 0; i < 3; i++) {
      await runDueAddresses({ ...h.c.bitcoin, log: silent })
      await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: silent })
    }
    for (let i = 0; i < 3; i++) if ((await runDueDeliveries(deliveryDeps)).length === 0) break
  }

  return {
    h,
    receiver,
    webhookSecret,
    api,
    admin,
    async freshRun() {
      // The streams of the run before are closed: each run holds its own.
      for (const s of streams.values()) s.close()
      streams = new Map()
      run++
      const tag = `${randomBytes(3).toString('hex')}${run}`
      const a = await h.createAccount({ name: `Model A ${tag}` })
      const b = await h.createAccount({ name: `Model B ${tag}` })
      // Account A's events go to the receiver; B has no webhook (its events are only recorded).
      const w = await api('POST', '/api/v2/webhook', a.token, {
        callback: receiver.url,
        secret: webhookSecret,
      })
      if (w.status !== 200) throw new Error(`webhook: ${w.status} ${w.raw}`)
      return { a, b, names: [`m${tag}-x`, `m${tag}-y`], streams }
    },
    settle,
    openStream: (txnId, token, who) => openStream(base, txnId, token, who),
    async bankSettles(txnId) {
      const past = Date.now() - 1
      await h.c.db.query(
        `UPDATE sandbox_payouts SET settle_at = $2 WHERE request_id = $1 AND kind = 'bank'`,
        [txnId, past],
      )
      await h.c.db.query('UPDATE transactions SET next_check_at = $2 WHERE id = $1', [txnId, past])
      await settle()
    },
    async crashWorker(submit) {
      // The worker's first step (src/transactions/worker.ts): claim what is due, with the lease.
      const claimed = await claimDue(h.c.db, Date.now(), CLAIM_LEASE_MS, 50)
      if (!submit) return { claimed }
      // Its payout step (src/payouts/lifecycle.ts, submitPayout): the bank accepts the transfer,
      // and the worker dies before recording `destsent`. Only what the sandbox bank reads is given.
      const { rows } = await h.c.db.query<{ dest_amount: unknown; dest_details: any }>(
        'SELECT dest_amount, dest_details FROM transactions WHERE id = $1',
        [submit.txnId],
      )
      const row = rows[0]!
      const details = typeof row.dest_details === 'string' ? JSON.parse(row.dest_details) : row.dest_details
      const bank = h.c.bankAccounts as unknown as BankPayoutRail
      const { bankRef } = await bank.submitPayout({
        requestId: submit.txnId,
        amountMinor: BigInt(row.dest_amount as bigint),
        ccy: 'VND',
        bankAcctNum: details.bankAcctNum,
        institutionCode: details.institutionCode,
        beneficiary: { type: 'individual', legalFullName: 'Model Payee', countryCode: 'VN' },
        sourceOfFunds: { purpose: 1, source: 3, relationship: 1 },
      } as any)
      return { claimed, bankRef }
    },
    async leaseLapses(claimed) {
      await h.c.db.query(
        'UPDATE transactions SET next_check_at = $2 WHERE id = ANY($1) AND next_check_at > $2',
        [claimed, Date.now() - 1],
      )
      await settle()
    },
    async passDeadline(txnId, graceMs = 0) {
      const past = Date.now() - 1 - graceMs
      await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = $2 WHERE id = $1', [
        txnId,
        past,
      ])
      await settle()
    },
    setReceiverUp(v) {
      up = v
    },
    async close() {
      for (const s of streams.values()) s.close()
      await receiver.close()
      await h.close()
    },
  }
}

/** A minimal EventSource over node:http: `event: status` messages, their id and body. */
function openStream(base: string, txnId: string, token: string, who: 'a' | 'b'): Promise<Stream | undefined> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${base}/api/v2/transaction/${txnId}/events`,
      { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, 'last-event-id': '0' } },
      (res) => {
        if (res.statusCode === 429) {
          res.resume()
          return resolve(undefined)
        }
        if (res.statusCode !== 200) {
          let body = ''
          res.on('data', (c) => (body += c))
          res.on('end', () => reject(new Error(`stream of ${txnId}: ${res.statusCode} ${body}`)))
          return
        }
        const stream: Stream = { txnId, who, messages: [], ended: false, close: () => req.destroy() }
        let buffer = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          buffer += chunk
          let cut: number
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut)
            buffer = buffer.slice(cut + 2)
            let id = ''
            let data = ''
            let event = ''
            for (const line of block.split('\n')) {
              if (line.startsWith('id: ')) id = line.slice(4)
              else if (line.startsWith('data: ')) data += line.slice(6)
              else if (line.startsWith('event: ')) event = line.slice(7)
            }
            if (event !== 'status') continue
            const body = JSON.parse(data)
            stream.messages.push({ id, state: body.txnState, msg: body.msg })
          }
        })
        res.on('end', () => (stream.ended = true))
        res.on('close', () => (stream.ended = true))
        resolve(stream)
      },
    )
    req.on('error', (err) => {
      // A stream closed by the test at the end of its run.
      if ((err as any).code !== 'ECONNRESET') reject(err)
    })
  })
}

const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as any

export { ENGINE }
