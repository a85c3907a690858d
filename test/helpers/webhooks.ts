import http from 'node:http'
import type { AddressInfo } from 'node:net'

import type { Container } from '../../src/container.js'
import type { DeliveryWorkerDeps } from '../../src/events/delivery-worker.js'
import { deliverySettingsOf } from '../../src/worker.js'
import type { Notifier } from '../../src/events/notifier.js'
import { verifySignature } from '../../src/events/signature.js'

/** One request as a webhook receiver saw it. */
export interface Received {
  method: string
  headers: http.IncomingHttpHeaders
  rawBody: Buffer
  /** The signature checked over the raw bytes, as a receiver must (either header name). */
  signatureValid: boolean
  body: { txnId: string; extRefId: string; txnState: string; msg: string; updatedAt: number }
  at: number
}

/** What the receiver does with the n-th request (0-based): answer with a status, or never answer. */
export type Responder = (index: number, request: Omit<Received, 'at'>) => number | 'hang'

/**
 * A real webhook receiver for tests: node:http on 127.0.0.1, reading the raw body and checking the
 * signature exactly as docs/webhooks.md tells integrators to. Test code only.
 */
export interface Receiver {
  url: string
  port: number
  received: Received[]
  respond: Responder
  /** Resolves when at least `count` requests have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(
  secret: string,
  opts: { port?: number; path?: string } = {},
): Promise<Receiver> {
  const received: Received[] = []
  const waiters: Array<() => void> = []
  const hanging = new Set<http.ServerResponse>()
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    respond: () => 200,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`expected ${count} webhook requests, got ${received.length}`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200))
          waiters.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
      return received.slice()
    },
    async close() {
      for (const res of hanging) res.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks)
      const header = req.headers['x-svcpay-signature'] ?? req.headers['x-svc-signature']
      const signatureValid = typeof header === 'string' && verifySignature(rawBody, secret, header)
      const seen = {
        method: req.method ?? '',
        headers: req.headers,
        rawBody,
        signatureValid,
        body: JSON.parse(rawBody.toString('utf8')),
      }
      const answer = receiver.respond(received.length, seen)
      received.push({ ...seen, at: Date.now() })
      for (const wake of waiters.splice(0)) wake()
      if (answer === 'hang') {
        hanging.add(res)
        res.on('close', () => hanging.delete(res))
        return
      }
      res.writeHead(signatureValid ? answer : 401).end()
    })
  })
  server.keepAliveTimeout = 1
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve))
  receiver.port = (server.address() as AddressInfo).port
  receiver.url = `http://127.0.0.1:${receiver.port}${opts.path ?? '/hook'}`
  return receiver
}

/** The delivery worker's dependencies from a container, with a short retry schedule for tests. */
export function deliveryDepsOf(
  c: Container,
  overrides: Partial<DeliveryWorkerDeps> = {},
): DeliveryWorkerDeps {
  return { ...deliverySettingsOf(c), log: { error: () => {}, warn: () => {} }, ...overrides }
}

/**
 * Resolves once a publish by `publisher` reaches `listener` over Redis. Both connect in the
 * background (the listener's SUBSCRIBE is sent on its first subscription, the publisher drops what
 * it is asked to publish before it is connected), so a test that publishes earlier may lose it.
 * The probe ids start with `probe_`.
 */
export async function untilRedisCarries(
  publisher: Notifier,
  listener: Notifier,
  timeoutMs = 10_000,
): Promise<void> {
  const probe = `probe_${Date.now()}_${Math.random().toString(36).slice(2)}`
  let heard = false
  const stop = await listener.onAny((txnId) => {
    if (txnId === probe) heard = true
  })
  try {
    for (const deadline = Date.now() + timeoutMs; !heard;) {
      if (Date.now() > deadline) throw new Error(`Redis carried no probe within ${timeoutMs} ms`)
      publisher.publish(probe)
      await new Promise((r) => setTimeout(r, 50))
    }
  } finally {
    stop()
  }
}
