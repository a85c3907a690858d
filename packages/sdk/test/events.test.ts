import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SvcpayClient, SvcpayNotFoundError, verifyWebhook, type TransactionEvent } from '@svcpay/sdk'
import { startServer, type TestServer } from './server.js'

/** A Lightning receive of `amount` BTC, confirmed: its invoice is ready to pay. */
async function openInvoice(client: SvcpayClient, amount: string, extRefId?: string) {
  const quote = await client.createTransaction({
    ...(extRefId ? { extRefId } : {}),
    sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
    destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amount, reqDetails: {} },
  })
  const txn = await client.confirmTransaction(quote.txnId)
  expect(txn.txnState).toBe('srccreated')
  return { txnId: txn.txnId, paymentRequest: txn.sourceReq.reqDetails.paymentRequest as string }
}

async function collect(events: AsyncIterable<TransactionEvent>): Promise<TransactionEvent[]> {
  const out: TransactionEvent[] = []
  for await (const e of events) out.push(e)
  return out
}

describe('the status stream and webhooks, with the worker running', () => {
  let s: TestServer
  let client: SvcpayClient
  let receiver: Server
  let receiverUrl: string
  let secret = 'first-secret-0123456789'
  const received: { method: string; event: TransactionEvent }[] = []
  const refused: number[] = []

  beforeAll(async () => {
    s = await startServer({}, { workers: true })
    client = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      apiSecret: s.account.apiSecret,
    })
    receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      try {
        received.push({
          method: req.method!,
          event: await verifyWebhook(Buffer.concat(chunks), req.headers, secret),
        })
        res.writeHead(200).end()
      } catch {
        refused.push(Date.now())
        res.writeHead(401).end()
      }
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/svcpay`
  })
  afterAll(async () => {
    await s.close()
    await new Promise<void>((resolve) => receiver.close(() => resolve()))
  })

  it('registers, reads and updates the webhook', async () => {
    const hook = await client.createWebhook({ callback: receiverUrl + '/old', secret })
    expect(hook).toMatchObject({ callback: receiverUrl + '/old' })
    expect(typeof hook.createdAt).toBe('number')
    expect(await client.listWebhooks()).toEqual([hook])
    secret = 'second-secret-0123456789'
    const updated = await client.updateWebhook(hook.id, { callback: receiverUrl, secret })
    expect(updated).toMatchObject({ id: hook.id, callback: receiverUrl })
    expect(typeof updated.updatedAt).toBe('number')
  })

  it('streams a Lightning receive from srccreated to completed and delivers signed webhooks', async () => {
    const { txnId, paymentRequest } = await openInvoice(client, '0.0001', 'sdk-ln-1')
    expect(paymentRequest).toMatch(/^lnbcrt/)
    // The stream opens with the state it finds, so the invoice is paid only once that state has
    // come: a stream whose first read came after the payment would begin at 'completed'.
    const stream = client.streamTransaction(txnId)
    const first = await stream.next()
    await client.sandbox.payInvoice(paymentRequest)
    const events = [first.value as TransactionEvent, ...(await collect(stream))]
    expect(events.map((e) => e.txnState)).toEqual(['srccreated', 'completed'])
    expect(events[1]).toMatchObject({ txnId, extRefId: 'sdk-ln-1', msg: '' })

    const done = await client.getTransaction(txnId)
    expect(done.destReq.amtSettled).toBe('0.0001')
    // Webhook deliveries follow within moments of each commit.
    await until(() => received.some((r) => r.event.txnId === txnId && r.event.txnState === 'completed'))
    const mine = received.filter((r) => r.event.txnId === txnId)
    expect(mine.map((r) => r.event.txnState)).toEqual(['quoted', 'srccreated', 'completed'])
    expect(mine.every((r) => r.method === 'POST')).toBe(true)
    expect(refused).toEqual([])

    // The receiver holds the event before it answers 200; the worker records the outcome only
    // after that answer reaches it, so the delivery may still read `pending` for a moment.
    const [hook] = await client.listWebhooks()
    const completedDelivery = async () =>
      (await client.listWebhookDeliveries(hook!.id, { limit: 10 })).data.find(
        (d) => d.txnId === txnId && d.txnState === 'completed',
      )!
    let completed = await completedDelivery()
    for (const end = Date.now() + 10_000; completed.status === 'pending' && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 20))
      completed = await completedDelivery()
    }
    expect(completed.status).toBe('succeeded')
    const again = await client.redeliverWebhookDelivery(hook!.id, completed.id)
    expect(again.eventId).toBe(completed.eventId)
    await until(
      () => received.filter((r) => r.event.txnId === txnId && r.event.txnState === 'completed').length === 2,
    )
  })

  it('waits for a final state with waitForTransaction', async () => {
    const { txnId, paymentRequest } = await openInvoice(client, '0.00002')
    const waiting = client.waitForTransaction(txnId, { timeoutMs: 10_000 })
    await client.sandbox.payInvoice(paymentRequest)
    const txn = await waiting
    expect(txn.txnState).toBe('completed')
    expect(txn.destReq.amtSettled).toBe('0.00002')
  })

  it('reopens a dropped stream and resumes after the last event, without repeats', async () => {
    const { txnId, paymentRequest } = await openInvoice(client, '0.00003')
    const seen: string[] = []
    const streamSockets: Socket[] = []
    const lastEventIds: (string | undefined)[] = []
    const onRequest = (req: IncomingMessage) => {
      if (!req.url?.endsWith('/events')) return
      streamSockets.push(req.socket)
      lastEventIds.push(req.headers['last-event-id'] as string | undefined)
    }
    s.h.app.server.on('request', onRequest)
    const stream = client.streamTransaction(txnId, { reconnectDelayMs: 50 })
    const first = await stream.next()
    seen.push((first.value as TransactionEvent).txnState)
    // The stream's connection is cut from the server's side, as a restart or a proxy would.
    streamSockets[0]!.destroy()
    await client.sandbox.payInvoice(paymentRequest)
    for await (const e of stream) seen.push(e.txnState)
    s.h.app.server.off('request', onRequest)
    expect(seen).toEqual(['srccreated', 'completed'])
    // The second connection resumed after the first one's last event.
    expect(streamSockets).toHaveLength(2)
    expect(lastEventIds[0]).toBeUndefined()
    expect(lastEventIds[1]).toMatch(/^\d+$/)
  })

  it('reopens a stream that falls silent, however the connection looks', async () => {
    const { txnId, paymentRequest } = await openInvoice(client, '0.00005')
    let muted = 0
    const onRequest = (req: IncomingMessage) => {
      // The first stream connection stays open but nothing the service writes to it arrives.
      if (req.url?.endsWith('/events') && muted++ === 0) req.socket.write = (() => true) as never
    }
    s.h.app.server.on('request', onRequest)
    const seen: string[] = []
    const streamed = (async () => {
      for await (const e of client.streamTransaction(txnId, { idleTimeoutMs: 300 })) seen.push(e.txnState)
    })()
    // Paid once the reopened connection has sent the current state: its request arriving is not
    // enough, as the payment could commit before the stream's first read.
    await until(() => seen.length === 1)
    await client.sandbox.payInvoice(paymentRequest)
    await streamed
    s.h.app.server.off('request', onRequest)
    expect(muted).toBeGreaterThanOrEqual(2)
    expect(seen).toEqual(['srccreated', 'completed'])
  })

  it('throws the typed error when the transaction does not exist', async () => {
    const err = await collect(client.streamTransaction('txn_missing')).catch((e) => e)
    expect(err).toBeInstanceOf(SvcpayNotFoundError)
  })

  it('stops when the caller aborts', async () => {
    const { txnId } = await openInvoice(client, '0.00004')
    const controller = new AbortController()
    const seen: string[] = []
    const err = await (async () => {
      for await (const e of client.streamTransaction(txnId, { signal: controller.signal })) {
        seen.push(e.txnState)
        controller.abort(new Error('enough'))
      }
    })().catch((e) => e)
    expect(seen).toEqual(['srccreated'])
    expect(err.message).toBe('enough')
  })

  it('deletes the webhook', async () => {
    const [hook] = await client.listWebhooks()
    await client.deleteWebhook(hook!.id)
    expect(await client.listWebhooks()).toEqual([])
    await expect(client.deleteWebhook(hook!.id)).rejects.toBeInstanceOf(SvcpayNotFoundError)
  })
})

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 20))
  }
}
