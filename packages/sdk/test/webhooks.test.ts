import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyWebhook, verifyWebhookRequest, SvcpayWebhookError } from '@svcpay/sdk'
import { constantTimeEqual, hmacSha256, toHex } from '../src/hmac.js'
import { signBody } from '../../../src/events/signature.js'

const SECRET = 'whsec_0123456789abcdef'
const body =
  '{"txnId":"txn_1","extRefId":"order-7","txnState":"completed","msg":"","updatedAt":1767225600123}'

describe('HMAC-SHA256 (RFC 4231 test vectors)', () => {
  it('case 1', async () => {
    const key = '\x0b'.repeat(20)
    expect(toHex(await hmacSha256(key, 'Hi There'))).toBe(
      'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
    )
  })
  it('case 2', async () => {
    expect(toHex(await hmacSha256('Jefe', 'what do ya want for nothing?'))).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })
  it('constant-time comparison sees every byte', () => {
    const a = new Uint8Array([1, 2, 3])
    expect(constantTimeEqual(a, new Uint8Array([1, 2, 3]))).toBe(true)
    expect(constantTimeEqual(a, new Uint8Array([1, 2, 4]))).toBe(false)
    expect(constantTimeEqual(a, new Uint8Array([0, 2, 3]))).toBe(false)
    expect(constantTimeEqual(a, new Uint8Array([1, 2]))).toBe(false)
  })
})

describe('verifyWebhook', () => {
  const signature = signBody(body, SECRET)

  it('accepts the server-signed body under either header name, in any header casing', async () => {
    const expected = {
      txnId: 'txn_1',
      extRefId: 'order-7',
      txnState: 'completed',
      msg: '',
      updatedAt: 1767225600123,
    }
    expect(await verifyWebhook(body, { 'x-svcpay-signature': signature }, SECRET)).toEqual(expected)
    expect(await verifyWebhook(Buffer.from(body), { 'X-Svc-Signature': signature }, SECRET)).toEqual(expected)
    expect(await verifyWebhook(body, new Headers({ 'X-Svcpay-Signature': signature }), SECRET)).toEqual(
      expected,
    )
    expect(await verifyWebhook(body, { 'x-svc-signature': [signature] }, SECRET)).toEqual(expected)
  })

  it('verifies the exact bytes: a re-serialised or altered body fails', async () => {
    const reserialised = JSON.stringify(JSON.parse(body), null, 1)
    await expect(verifyWebhook(reserialised, { 'x-svcpay-signature': signature }, SECRET)).rejects.toThrow(
      SvcpayWebhookError,
    )
    await expect(
      verifyWebhook(body.replace('completed', 'failed'), { 'x-svcpay-signature': signature }, SECRET),
    ).rejects.toThrow(/does not match/)
  })

  it('rejects a wrong secret, a missing, short or non-hex signature, with status 401', async () => {
    const cases: Record<string, string>[] = [
      { 'x-svcpay-signature': signBody(body, 'another-secret-entirely') },
      {},
      { 'x-svcpay-signature': signature.slice(0, 62) },
      { 'x-svcpay-signature': 'zz' + signature.slice(2) },
      { 'x-other-signature': signature },
    ]
    for (const headers of cases) {
      const err = await verifyWebhook(body, headers, SECRET).catch((e) => e)
      expect(err).toBeInstanceOf(SvcpayWebhookError)
      expect(err).toMatchObject({ status: 401, code: 'invalid_signature' })
    }
  })

  it('accepts upper-case hex, which names the same bytes', async () => {
    expect((await verifyWebhook(body, { 'x-svcpay-signature': signature.toUpperCase() }, SECRET)).txnId).toBe(
      'txn_1',
    )
  })

  it('keeps large numbers exact and refuses a signed body that is not an event', async () => {
    const odd = '{"txnId":"t","txnState":"completed","updatedAt":1767225600123,"extra":0.1}'
    expect(await verifyWebhook(odd, { 'x-svcpay-signature': signBody(odd, SECRET) }, SECRET)).toMatchObject({
      extRefId: '',
      msg: '',
    })
    const notEvent = '{"hello":"world"}'
    const err = await verifyWebhook(
      notEvent,
      { 'x-svcpay-signature': signBody(notEvent, SECRET) },
      SECRET,
    ).catch((e) => e)
    expect(err).toMatchObject({ code: 'invalid_event', status: 400 })
  })
})

describe('verifyWebhookRequest (Web Request)', () => {
  const request = (method: string, headers: Record<string, string>, text = body) =>
    new Request('https://receiver.example/hook', {
      method,
      headers,
      ...(method === 'GET' ? {} : { body: text }),
    })

  it('accepts POST with X-Svcpay-Signature and PUT with X-Svc-Signature', async () => {
    const sig = signBody(body, SECRET)
    expect(
      (await verifyWebhookRequest(request('POST', { 'x-svcpay-signature': sig }), SECRET)).txnState,
    ).toBe('completed')
    expect((await verifyWebhookRequest(request('PUT', { 'x-svc-signature': sig }), SECRET)).txnState).toBe(
      'completed',
    )
  })

  it('refuses other methods and bad signatures', async () => {
    const sig = signBody(body, SECRET)
    await expect(
      verifyWebhookRequest(request('GET', { 'x-svcpay-signature': sig }), SECRET),
    ).rejects.toMatchObject({
      status: 405,
    })
    await expect(
      verifyWebhookRequest(request('POST', { 'x-svcpay-signature': sig }, body + ' '), SECRET),
    ).rejects.toMatchObject({
      status: 401,
    })
  })
})

describe('a Node receiver over real HTTP', () => {
  let server: Server
  let url: string
  const received: unknown[] = []

  beforeAll(async () => {
    server = createServer(async (req: IncomingMessage, res) => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      try {
        received.push({
          method: req.method,
          event: await verifyWebhook(Buffer.concat(chunks), req.headers, SECRET),
        })
        res.writeHead(200).end()
      } catch (err) {
        res.writeHead(err instanceof SvcpayWebhookError ? err.status : 500).end()
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('verifies deliveries by both methods and refuses a forged one', async () => {
    // Multi-byte characters: the signature is over the UTF-8 bytes, exactly as sent.
    const text =
      '{"txnId":"txn_é","extRefId":"đơn-1","txnState":"expired","msg":"invoice_expired","updatedAt":1}'
    const sig = signBody(Buffer.from(text), SECRET)
    const post = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svcpay-signature': sig },
      body: text,
    })
    const put = await fetch(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-svc-signature': sig },
      body: text,
    })
    const forged = await fetch(url, {
      method: 'POST',
      headers: { 'x-svcpay-signature': '0'.repeat(64) },
      body: text,
    })
    expect([post.status, put.status, forged.status]).toEqual([200, 200, 401])
    expect(received).toEqual([
      {
        method: 'POST',
        event: {
          txnId: 'txn_é',
          extRefId: 'đơn-1',
          txnState: 'expired',
          msg: 'invoice_expired',
          updatedAt: 1,
        },
      },
      {
        method: 'PUT',
        event: {
          txnId: 'txn_é',
          extRefId: 'đơn-1',
          txnState: 'expired',
          msg: 'invoice_expired',
          updatedAt: 1,
        },
      },
    ])
  })
})
