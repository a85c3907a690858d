import { randomBytes } from 'node:crypto'
import { parse as parseLossless } from 'lossless-json'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../helpers/harness.js'
import { runDueTransactions } from '../../src/transactions/worker.js'
import { runDueAddresses } from '../../src/onchain/deposits.js'
import { runDueDeliveries } from '../../src/events/delivery-worker.js'
import { deliveryDepsOf, startReceiver, type Receiver } from '../../src/events/testing.js'

/**
 * The world of the model test: one real service (the in-process harness on the run's engine, on a
 * real database), its sandbox networks driven through their admin routes, a real webhook receiver
 * on 127.0.0.1, and the workers run step by step so that every command ends in a state that no
 * longer moves. Nothing of ours is mocked: requests go through the HTTP layer (inject), the
 * workers are the production functions, and time reaching a deadline is the deadline moved into
 * the past in the database, as the flow tests do. Test code only.
 */

/** One answer: the status and the body parsed with every number kept as its exact text. */
export interface Answer {
  status: number
  body: any
  raw: string
}

export interface RunAccounts {
  a: TestAccount
  b: TestAccount
  /** Lightning Address usernames this run plays with (unique to the run). */
  names: string[]
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
}

export async function createWorld(): Promise<World> {
  const h = await createHarness(ENV)
  const webhookSecret = 'whsec_' + randomBytes(12).toString('hex')
  const receiver = await startReceiver(webhookSecret)
  let up = true
  receiver.respond = () => (up ? 200 : 503)
  let run = 0

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
      return { a, b, names: [`m${tag}-x`, `m${tag}-y`] }
    },
    settle,
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
      await receiver.close()
      await h.close()
    },
  }
}

const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as any

export { ENGINE }
