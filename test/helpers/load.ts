import type { RemoteAccount, ServiceClient } from './service-process.js'

/**
 * A load of real money movements against running service processes, for the crash, multi-instance
 * and dependency suites: swaps (confirmed or cancelled), Lightning receives paid from outside,
 * Lightning sends to outside invoices and to invoices of another account, on-chain receives and
 * on-chain sends between accounts. Requests that cannot reach a server (it was just killed) and
 * 5xx answers are counted, not thrown: each suite decides what it tolerates. Test code only.
 */

export type OpKind =
  'swap' | 'ln_receive' | 'ln_send_outside' | 'ln_send_internal' | 'onchain_receive' | 'onchain_send'

export const ALL_OPS: OpKind[] = [
  'swap',
  'swap',
  'swap',
  'ln_receive',
  'ln_send_outside',
  'ln_send_internal',
  'onchain_receive',
  'onchain_send',
]

export interface LoadStats {
  /** HTTP requests sent (answered or not). */
  requests: number
  /** Operations begun, by kind. */
  started: Record<string, number>
  /** Operations that ran to their last request with 2xx answers. */
  finished: number
  /** Requests that got no answer: connection refused or reset (a server was down). */
  networkErrors: number
  /** Requests that got an answer. */
  answered: number
  /** Answers by status code. */
  statuses: Record<number, number>
  /** Every 5xx answer, with what was asked. */
  serverErrors: Array<{ what: string; status: number; body: unknown }>
  /** Transactions created, by id. */
  txnIds: Set<string>
}

export interface Load {
  stats: LoadStats
  /** Stops starting operations and waits for those in flight. */
  stop(): Promise<LoadStats>
}

class Interrupted extends Error {}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!
const btc = (minSats: number, maxSats: number) =>
  ((minSats + Math.floor(Math.random() * (maxSats - minSats))) / 1e8).toFixed(8)

export function startLoad(opts: {
  /** The client for the next request: one server, or a random one of several. */
  client: () => ServiceClient
  accounts: RemoteAccount[]
  concurrency: number
  ops?: OpKind[]
  /** Pause between operations of one lane. */
  pauseMs?: number
}): Load {
  const stats: LoadStats = {
    requests: 0,
    started: {},
    finished: 0,
    networkErrors: 0,
    answered: 0,
    statuses: {},
    serverErrors: [],
    txnIds: new Set(),
  }
  const ops = opts.ops ?? ALL_OPS
  const staticAddresses = new Map<string, string>()
  let stopping = false

  /** One request; a non-2xx answer or no answer ends the operation. */
  async function call(
    what: string,
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<any> {
    stats.requests++
    let r
    try {
      r = await opts.client().call(method, path, token, body)
    } catch {
      stats.networkErrors++
      throw new Interrupted(what)
    }
    stats.answered++
    stats.statuses[r.status] = (stats.statuses[r.status] ?? 0) + 1
    if (r.status >= 500) stats.serverErrors.push({ what, status: r.status, body: r.body })
    if (r.status < 200 || r.status > 299) throw new Interrupted(`${what}: ${r.status}`)
    if (typeof r.body?.txnId === 'string') stats.txnIds.add(r.body.txnId)
    return r.body
  }

  const create = (a: RemoteAccount, body: unknown) =>
    call('create', 'POST', '/api/v2/transaction', a.token, body)
  const confirm = (a: RemoteAccount, txnId: string) =>
    call('confirm', 'PUT', `/api/v2/transaction/${txnId}/confirm`, a.token)

  async function staticAddress(a: RemoteAccount): Promise<string> {
    let address = staticAddresses.get(a.accountId)
    if (!address) {
      address = (await call('onchain-address', 'GET', '/api/v2/account/onchain-address', a.token))
        .staticOnchainAddress as string
      staticAddresses.set(a.accountId, address)
    }
    return address
  }

  async function run(kind: OpKind): Promise<void> {
    const a = pick(opts.accounts)
    const b = pick(opts.accounts.filter((x) => x !== a))
    switch (kind) {
      case 'swap': {
        const toUsd = Math.random() < 0.6
        const body = toUsd
          ? {
              sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: btc(1_000, 20_000), reqDetails: {} },
              destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
            }
          : {
              sourceReq: {
                ccy: 'USD',
                method: 'svcpay',
                amtRequested: (1 + Math.random() * 9).toFixed(2),
                reqDetails: {},
              },
              destReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
            }
        const extRef = Math.random() < 0.5 ? { extRefId: `load-${Math.random().toString(36).slice(2)}` } : {}
        const q = await create(a, { ...body, ...extRef })
        if (Math.random() < 0.2) await call('cancel', 'PUT', `/api/v2/transaction/${q.txnId}/cancel`, a.token)
        else await confirm(a, q.txnId)
        return
      }
      case 'ln_receive': {
        const q = await create(a, {
          sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
          destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: btc(1_000, 20_000), reqDetails: {} },
        })
        const c = await confirm(a, q.txnId)
        await call('ln-pay', 'POST', '/sandbox/lightning/pay', b.token, {
          paymentRequest: c.sourceReq.reqDetails.paymentRequest,
        })
        return
      }
      case 'ln_send_outside': {
        const inv = await call('ln-invoice', 'POST', '/sandbox/lightning/invoice', b.token, {
          amount: btc(1_000, 20_000),
        })
        const q = await create(a, {
          sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
          destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest: inv.paymentRequest } },
        })
        await confirm(a, q.txnId)
        return
      }
      case 'ln_send_internal': {
        const r = await create(b, {
          sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
          destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: btc(1_000, 20_000), reqDetails: {} },
        })
        const inv = await confirm(b, r.txnId)
        const q = await create(a, {
          sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
          destReq: {
            ccy: 'BTC',
            method: 'lightning',
            reqDetails: { paymentRequest: inv.sourceReq.reqDetails.paymentRequest },
          },
        })
        await confirm(a, q.txnId)
        return
      }
      case 'onchain_receive': {
        const q = await create(a, {
          sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
          destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: btc(2_000, 20_000), reqDetails: {} },
        })
        const c = await confirm(a, q.txnId)
        await call('onchain-send', 'POST', '/sandbox/onchain/send', b.token, {
          address: c.sourceReq.reqDetails.address,
          amount: c.sourceReq.reqDetails.amount,
        })
        await call('mine', 'POST', '/sandbox/onchain/mine', b.token, { blocks: 1 })
        return
      }
      case 'onchain_send': {
        const q = await create(a, {
          sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
          destReq: {
            ccy: 'BTC',
            method: 'on-chain',
            amtRequested: btc(2_000, 20_000),
            reqDetails: { address: await staticAddress(b) },
          },
        })
        await confirm(a, q.txnId)
        await call('mine', 'POST', '/sandbox/onchain/mine', a.token, { blocks: 1 })
        return
      }
    }
  }

  const lanes = Array.from({ length: opts.concurrency }, async () => {
    while (!stopping) {
      const kind = pick(ops)
      stats.started[kind] = (stats.started[kind] ?? 0) + 1
      try {
        await run(kind)
        stats.finished++
      } catch (err) {
        if (!(err instanceof Interrupted)) throw err
        // A server that is down is not hammered: the lane waits a little before its next operation.
        await new Promise((r) => setTimeout(r, 300))
      }
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs))
    }
  })

  return {
    stats,
    async stop() {
      stopping = true
      await Promise.all(lanes)
      return stats
    },
  }
}

/** Total operations begun. */
export const opsStarted = (s: LoadStats) => Object.values(s.started).reduce((x, y) => x + y, 0)
