import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'
import { verifySignature } from '../events/signature.js'
import { alertSettings } from './alert.js'
import { startWorkers } from '../worker.js'

const SECRET = 'alert-secret-0123456789abcdef'

describe('the operator alert: ALERT_WEBHOOK_URL', () => {
  let h: Harness
  let server: Server
  const received: Array<{ body: string; signature: string }> = []
  // Alerts come from runs that count (POST); GET /admin/reconciliation only reads.
  const reconcile = async () => (await h.api('POST', '/admin/reconciliation/run', h.adminToken, {})).body
  const move = (direction: 'in' | 'out') =>
    h.api('POST', '/admin/sandbox/drift/move', h.adminToken, { rail: 'tron', direction, amount: '3' })

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => (body += chunk))
      req.on('end', () => {
        received.push({ body, signature: String(req.headers['x-svcpay-signature'] ?? '') })
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    h = await createHarness({
      RAILS: 'sandbox',
      ALERT_WEBHOOK_URL: `http://127.0.0.1:${port}/alerts`,
      ALERT_WEBHOOK_SECRET: SECRET,
    })
  })
  afterAll(async () => {
    await h?.close()
    await new Promise((resolve) => server?.close(resolve))
  })

  it('is sent, signed, when a deficit appears, not again while it lasts, and once when it clears', async () => {
    await reconcile()
    expect(received).toHaveLength(0)
    await move('out')
    await reconcile()
    await reconcile()
    expect(received).toHaveLength(1)
    const first = received[0]!
    expect(verifySignature(first.body, SECRET, first.signature)).toBe(true)
    expect(verifySignature(first.body, 'another-secret-0123456789', first.signature)).toBe(false)
    expect(JSON.parse(first.body)).toMatchObject({
      event: 'reconciliation.deficit',
      rail: 'tron',
      ccy: 'USDT',
      delta: '-3',
    })
    await move('in')
    await reconcile()
    await reconcile()
    expect(received).toHaveLength(2)
    expect(JSON.parse(received[1]!.body)).toMatchObject({
      event: 'reconciliation.cleared',
      rail: 'tron',
      delta: '0',
    })
    expect(verifySignature(received[1]!.body, SECRET, received[1]!.signature)).toBe(true)
  })

  it('is sent when orphans appear on a rail and when they clear', async () => {
    received.length = 0
    const a = await h.createAccount({ name: 'Alert orphans' })
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
    })
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    await h.api('POST', '/admin/sandbox/drift/pay-invoice', h.adminToken, {
      paymentRequest: c.body.sourceReq.reqDetails.paymentRequest,
    })
    await reconcile()
    await reconcile()
    expect(received.map((r) => JSON.parse(r.body))).toEqual([
      expect.objectContaining({ event: 'reconciliation.orphans', rail: 'lightning', orphans: 1 }),
    ])
    expect(verifySignature(received[0]!.body, SECRET, received[0]!.signature)).toBe(true)
    const workers = startWorkers(h.c)
    try {
      for (let i = 0; ; i++) {
        const t = await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)
        if (t.body.txnState === 'completed') break
        if (i > 200) throw new Error('the worker did not complete the receive')
        await new Promise((r) => setTimeout(r, 25))
      }
    } finally {
      await workers.stop()
    }
    await reconcile()
    expect(received.map((r) => JSON.parse(r.body).event)).toEqual([
      'reconciliation.orphans',
      'reconciliation.orphans_cleared',
    ])
  })

  it('needs a secret with the URL', () => {
    expect(alertSettings({})).toBeUndefined()
    expect(() => alertSettings({ ALERT_WEBHOOK_URL: 'http://127.0.0.1/x' })).toThrow(/ALERT_WEBHOOK_SECRET/)
    expect(() => alertSettings({ ALERT_WEBHOOK_URL: 'ftp://x', ALERT_WEBHOOK_SECRET: SECRET })).toThrow(
      /http/,
    )
  })
})
