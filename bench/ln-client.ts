/**
 * The Lightning load client: a child process of the bench that is both the payer and the merchant's
 * webhook receiver, so that the time from pay to delivery is read on one clock. Each of its
 * workers owns one account: it registers that account's webhook to a receiver on loopback, then
 * in a loop creates a Lightning receive, confirms it, pays the invoice through the sandbox
 * (POST /sandbox/lightning/pay) and waits for the signed `completed` webhook. It reads its LnSpec
 * as JSON from the first argument and writes one LnResult JSON line to stdout.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import { performance } from 'node:perf_hooks'
import { latencyOf, round, type LatencyMs } from './lib/load-spec.js'
import { cpuMs } from './lib/proc.js'

export interface LnSpec {
  url: string
  /** One worker per token (each token's account gets its own webhook). */
  tokens: string[]
  payments: number
  /** The amount of each receive, BTC. */
  amountBtc: string
  /** A payment whose webhook has not come by then counts as an error. */
  webhookTimeoutMs: number
}

export interface LnResult {
  payments: number
  completed: number
  errors: number
  durationS: number
  /** Receives completed (webhook delivered) per second. */
  perSec: number
  /** From just before POST /sandbox/lightning/pay to the `completed` webhook's arrival. */
  payToWebhookMs: LatencyMs
  /** From create to the `completed` webhook: the whole receive as a merchant sees it. */
  receiveMs: LatencyMs
  /** Webhook requests received, every state change (variant a) or final ones only (variant b). */
  webhooksReceived: number
  badSignatures: number
  errorSamples: string[]
  /** HTTP exchanges in the run: requests the client sent, and webhook requests it answered. */
  httpRequests: number
  /** The client's own CPU time (from /proc/self/stat) over the run, the control of the server's CPU. */
  clientCpuMs?: number
}

const SAMPLES_MAX = 5

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '') as LnSpec
  const secrets = spec.tokens.map(() => 'whsec_' + randomBytes(18).toString('hex'))
  // The waiter of each payment is in place before the payment is made, so no webhook can outrun it.
  const waiting = new Map<string, (at: number) => void>()
  let webhooksReceived = 0
  let badSignatures = 0
  let sent = 0

  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const at = performance.now()
      webhooksReceived++
      const body = Buffer.concat(chunks)
      const worker = Number(/^\/hook\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1)
      if (!signatureValid(req, body, secrets[worker])) {
        badSignatures++
        res.writeHead(401).end()
        return
      }
      res.writeHead(200).end()
      const event = JSON.parse(body.toString('utf8')) as { txnId: string; txnState: string }
      if (event.txnState !== 'completed') return
      waiting.get(event.txnId)?.(at)
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  const port = (receiver.address() as { port: number }).port

  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(spec.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    sent++
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`)
    return JSON.parse(text)
  }

  await Promise.all(
    spec.tokens.map((token, i) =>
      call(token, 'POST', '/api/v2/webhook', {
        callback: `http://127.0.0.1:${port}/hook/${i}`,
        secret: secrets[i],
      }),
    ),
  )

  const payToWebhook: number[] = []
  const receive: number[] = []
  const samples: string[] = []
  let errors = 0
  let next = 0
  const started = performance.now()
  const sentBefore = sent
  const webhooksBefore = webhooksReceived
  const cpuBefore = cpuMs(process.pid)
  const worker = async (token: string) => {
    while (next < spec.payments) {
      next++
      try {
        const t0 = performance.now()
        const quote = await call(token, 'POST', '/api/v2/transaction', {
          sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
          destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: spec.amountBtc, reqDetails: {} },
        })
        const confirmed = await call(token, 'PUT', `/api/v2/transaction/${quote.txnId}/confirm`)
        const delivered = new Promise<number>((resolve, reject) => {
          const timer = setTimeout(() => {
            waiting.delete(quote.txnId)
            reject(new Error(`no completed webhook for ${quote.txnId} within ${spec.webhookTimeoutMs} ms`))
          }, spec.webhookTimeoutMs)
          waiting.set(quote.txnId, (at) => {
            clearTimeout(timer)
            waiting.delete(quote.txnId)
            resolve(at)
          })
        })
        // Awaited below; until then a time-out must not count as an unhandled rejection.
        delivered.catch(() => {})
        const paidAt = performance.now()
        await call(token, 'POST', '/sandbox/lightning/pay', {
          paymentRequest: confirmed.sourceReq.reqDetails.paymentRequest,
        })
        const at = await delivered
        payToWebhook.push(at - paidAt)
        receive.push(at - t0)
      } catch (err) {
        errors++
        if (samples.length < SAMPLES_MAX) samples.push((err as Error).message.slice(0, 300))
      }
    }
  }
  await Promise.all(spec.tokens.map((token) => worker(token)))
  const cpuAfter = cpuMs(process.pid)
  const durationS = (performance.now() - started) / 1000
  receiver.close()
  const result: LnResult = {
    payments: spec.payments,
    completed: payToWebhook.length,
    errors,
    durationS: round(durationS),
    perSec: round(payToWebhook.length / durationS),
    payToWebhookMs: latencyOf(payToWebhook),
    receiveMs: latencyOf(receive),
    webhooksReceived,
    badSignatures,
    errorSamples: samples,
    httpRequests: sent - sentBefore + (webhooksReceived - webhooksBefore),
    ...(cpuBefore !== undefined && cpuAfter !== undefined
      ? { clientCpuMs: round(cpuAfter - cpuBefore, 1) }
      : {}),
  }
  process.stdout.write(JSON.stringify(result) + '\n')
}

/** The receiver's check, as docs/webhooks.md tells merchants to do it: HMAC-SHA256 of the raw body. */
function signatureValid(req: IncomingMessage, body: Buffer, secret: string | undefined): boolean {
  const header = req.headers['x-svcpay-signature'] ?? req.headers['x-svc-signature']
  if (!secret || typeof header !== 'string' || !/^[0-9a-f]{64}$/i.test(header)) return false
  return timingSafeEqual(createHmac('sha256', secret).update(body).digest(), Buffer.from(header, 'hex'))
}

main().catch((err) => {
  process.stderr.write(`ln client: ${(err as Error).stack ?? err}\n`)
  process.exit(1)
})
