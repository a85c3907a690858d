import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import {
  createHarness,
  createTestDb,
  ENGINE,
  type Harness,
  type TestAccount,
} from '../../test/helpers/harness.js'
import { buildApp } from '../app.js'
import { ConfigError, loadConfig } from '../config/config.js'
import { createContainer } from '../container.js'
import { createPostgresDb } from '../db/db.js'
import { createLogger } from '../logger.js'
import { scanQrSvg } from '../../test/helpers/qr-scan.js'
import { runDueAddresses } from '../onchain/deposits.js'
import { encodeVietQr } from '../payins/vietqr.js'
import { runDueTransactions } from '../transactions/worker.js'
import { PAGE_SCRIPT } from './page-script.js'
import { PAGE_CSS } from './styles.js'

/**
 * The hosted invoice page served by the real service over real HTTP: the page, its public status
 * stream, its assets, unknown and expired pages, request limits, and live updates from another
 * instance. The page in a real browser is tested in service.browser.test.ts.
 */

interface Response {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, { headers }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (body += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      })
      .on('error', reject)
  })
}

/** An EventSource as a browser runs one, minus the reconnecting: every message and comment kept. */
interface Sse {
  status: number
  headers: http.IncomingHttpHeaders
  /** Every `data` of an `event: status` message, parsed. */
  statuses: unknown[]
  /** The raw text received, to check that nothing else travels on the stream. */
  raw: string
  body: string
  ended: Promise<void>
  waitFor(count: number, timeoutMs?: number): Promise<unknown[]>
  close(): void
}

function openSse(base: string, path: string, headers: Record<string, string> = {}): Promise<Sse> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${base}${path}`,
      { headers: { accept: 'text/event-stream', ...headers } },
      (res) => {
        let buffer = ''
        let markEnded: () => void
        const sse: Sse = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          statuses: [],
          raw: '',
          body: '',
          ended: new Promise<void>((r) => (markEnded = r)),
          async waitFor(count, timeoutMs = 5_000) {
            const deadline = Date.now() + timeoutMs
            while (sse.statuses.length < count) {
              if (Date.now() > deadline) throw new Error(`expected ${count} statuses, got ${sse.raw}`)
              await new Promise((r) => setTimeout(r, 20))
            }
            return sse.statuses.slice()
          },
          close: () => req.destroy(),
        }
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          if (sse.status !== 200) return void (sse.body += chunk)
          sse.raw += chunk
          buffer += chunk
          let at: number
          while ((at = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, at)
            buffer = buffer.slice(at + 2)
            const lines = block.split('\n')
            if (lines[0] === 'event: status') sse.statuses.push(JSON.parse(lines[1]!.replace(/^data: /, '')))
          }
        })
        res.on('close', () => markEnded())
        resolve(sse)
      },
    )
    req.on('error', reject)
  })
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/** Text content of the element with this data-testid, inner tags stripped. */
function textOf(html: string, testId: string): string | undefined {
  const m = new RegExp(`<(\\w+)[^>]*data-testid="${testId}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html)
  return m?.[2]!.replace(/<[^>]+>/g, '')
}

const lnReceive = (amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})
const onchainReceive = (amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})

/** The page id of a confirmed receive, from its invoicePageUrl. */
const pageIdOf = (txn: any): string => {
  const url = String(txn.sourceReq.reqDetails.invoicePageUrl)
  return url.slice(url.lastIndexOf('/') + 1)
}

describe('the hosted invoice page over HTTP', () => {
  let h: Harness
  let shop: TestAccount
  let payer: TestAccount
  let base: string
  beforeAll(async () => {
    h = await createHarness({ STREAM_HEARTBEAT_MS: '200', ONCHAIN_CONFIRMATIONS: '2' })
    shop = await h.createAccount({ name: 'Phở <Hà Nội> & Co' })
    payer = await h.createAccount({ name: 'Payer' })
    base = await listen(h.app)
  })
  afterAll(async () => h?.close())

  const work = async () => {
    await runDueAddresses({ ...h.c.bitcoin, log: console })
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  }
  const receive = async (body: unknown) => {
    const q = await h.api('POST', '/api/v2/transaction', shop.token, body)
    expect(q.status).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, shop.token)
    expect(c.status).toBe(200)
    return c.body
  }

  it('serves a Lightning receive at its invoicePageUrl: merchant, exact amounts, fiat, QR, invoice, strict headers', async () => {
    const t = await receive(lnReceive('0.00012345'))
    const pageId = pageIdOf(t)
    expect(Buffer.from(pageId, 'base64url')).toHaveLength(16)
    expect(t.sourceReq.reqDetails.invoicePageUrl).toBe(`${h.c.config.invoicePageUrl}/${pageId}`)
    const invoice: string = t.sourceReq.reqDetails.paymentRequest

    const res = await get(base, `/pay/${pageId}`)
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers.vary).toContain('Accept-Language')
    const csp = String(res.headers['content-security-policy'])
    const nonce = /'nonce-([^']+)'/.exec(csp)![1]!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("connect-src 'self'")
    expect(res.body).toContain(`<style nonce="${nonce}">`)

    const html = res.body
    expect(textOf(html, 'merchant-name')).toBe('Phở &lt;Hà Nội&gt; &amp; Co')
    expect(textOf(html, 'amount-btc')).toBe('0.00012345 BTC')
    expect(textOf(html, 'amount-sats')).toBe('12,345 sats')
    // 12,345 sats at the static rate of 95,000 USD per BTC.
    expect(textOf(html, 'amount-fiat')).toBe('≈ About 11.72 USD')
    expect(textOf(html, 'status-text')).toBe('Waiting for payment')
    expect(textOf(html, 'time-left')).toMatch(/^(59:\d\d|1:00:00)$/)
    expect(textOf(html, 'payment-text')).toBe(invoice)
    expect(html).toContain(`href="lightning:${invoice}"`)
    expect(html).toMatch(/data-testid="qr"><svg /)
    expect(html).toContain(`data-stream-url="/pay/${pageId}/events"`)

    // Nothing about the merchant's side: no transaction or account id, fees or page URL.
    for (const secret of [t.txnId, shop.accountId, 'txn_', 'acc_', 'svcpayFees', 'invoicePageUrl']) {
      expect(html).not.toContain(secret)
    }

    // Each response has its own nonce.
    const again = await get(base, `/pay/${pageId}`)
    expect(again.headers['content-security-policy']).not.toBe(csp)
  })

  it('speaks Vietnamese by Accept-Language', async () => {
    const t = await receive(lnReceive('0.0025'))
    const res = await get(base, `/pay/${pageIdOf(t)}`, { 'accept-language': 'vi-VN,vi;q=0.9,en;q=0.8' })
    expect(res.body).toContain('<html lang="vi">')
    expect(textOf(res.body, 'amount-sats')).toBe('250.000 sats')
    expect(textOf(res.body, 'status-text')).toBe('Đang chờ thanh toán')
  })

  it('serves the script and stylesheet the page names, with their content types and a long cache', async () => {
    const t = await receive(lnReceive('0.0001'))
    const html = (await get(base, `/pay/${pageIdOf(t)}`)).body
    const scriptUrl = /<script src="([^"]+)"/.exec(html)![1]!
    expect(scriptUrl).toMatch(/^\/pay\/assets\/page\.js\?v=[\w-]+$/)
    const script = await get(base, scriptUrl)
    expect(script.status).toBe(200)
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(script.headers['x-content-type-options']).toBe('nosniff')
    expect(script.body).toBe(PAGE_SCRIPT)
    const revalidated = await get(base, '/pay/assets/page.js', {
      'if-none-match': String(script.headers.etag),
    })
    expect(revalidated.status).toBe(304)
    expect(revalidated.body).toBe('')

    const css = await get(base, '/pay/assets/page.css')
    expect(css.status).toBe(200)
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8')
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(css.body).toBe(PAGE_CSS)
  })

  it('answers an unknown page with 404 and a clear message, in HTML under the same policy', async () => {
    for (const path of ['/pay/AAAAAAAAAAAAAAAAAAAAAA', '/pay/not-a-page-id', `/pay/${'x'.repeat(150)}`]) {
      const res = await get(base, path, { 'accept-language': 'en' })
      expect(res.status, path).toBe(404)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.headers['content-security-policy']).toContain("default-src 'none'")
      expect(textOf(res.body, 'message-title')).toBe('Payment page not found')
    }
    const vi = await get(base, '/pay/AAAAAAAAAAAAAAAAAAAAAA', { 'accept-language': 'vi' })
    expect(textOf(vi.body, 'message-title')).toBe('Không tìm thấy trang thanh toán')
    const stream = await openSse(base, '/pay/AAAAAAAAAAAAAAAAAAAAAA/events')
    await stream.ended
    expect(stream.status).toBe(404)
    expect(JSON.parse(stream.body)).toMatchObject({ error: 'not_found' })
  })

  it('follows a Lightning receive live on the public stream: awaiting, then paid, then the stream ends', async () => {
    const t = await receive(lnReceive('0.0002'))
    const pageId = pageIdOf(t)
    const stream = await openSse(base, `/pay/${pageId}/events`)
    expect(stream.status).toBe(200)
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(stream.headers['cache-control']).toContain('no-store')
    expect(await stream.waitFor(1)).toEqual([{ state: 'awaiting_payment' }])
    expect(h.c.notifier.listenerCount).toBe(1)

    const paid = await h.api('POST', '/sandbox/lightning/pay', payer.token, {
      paymentRequest: t.sourceReq.reqDetails.paymentRequest,
    })
    expect(paid.status).toBe(200)
    await work()
    await stream.ended
    expect(stream.statuses).toEqual([{ state: 'awaiting_payment' }, { state: 'paid' }])
    // Only the reconnect delay, keep-alive comments and the status messages travel on the stream.
    const lines = stream.raw.split('\n').filter(Boolean)
    for (const line of lines)
      expect(line).toMatch(/^(retry: \d+|: keep-alive|event: status|data: \{"state":"\w+"\})$/)
    await expect.poll(() => h.c.notifier.listenerCount).toBe(0)

    // The paid page shows it without the QR code; a stream opened now says paid and ends.
    const page = await get(base, `/pay/${pageId}`)
    expect(page.status).toBe(200)
    expect(textOf(page.body, 'status-text')).toBe('Paid. Thank you!')
    expect(page.body).not.toContain('data-testid="qr"')
    const late = await openSse(base, `/pay/${pageId}/events`)
    await late.ended
    expect(late.statuses).toEqual([{ state: 'paid' }])
    await h.expectBooksBalanced()
  })

  it('follows an on-chain receive: awaiting, seen with each confirmation, paid', async () => {
    const t = await receive(onchainReceive('0.0003'))
    const pageId = pageIdOf(t)
    const page = await get(base, `/pay/${pageId}`)
    expect(page.body).toContain(`href="${t.sourceReq.reqDetails.invoice.replace(/&/g, '&amp;')}"`)
    expect(textOf(page.body, 'payment-text')).toBe(t.sourceReq.reqDetails.address)
    expect(textOf(page.body, 'method')).toBe('Bitcoin on-chain')

    const stream = await openSse(base, `/pay/${pageId}/events`)
    expect(await stream.waitFor(1)).toEqual([{ state: 'awaiting_payment' }])
    const sent = await h.api('POST', '/sandbox/onchain/send', payer.token, {
      address: t.sourceReq.reqDetails.address,
      amount: '0.0003',
    })
    expect(sent.status).toBe(200)
    await work()
    expect((await stream.waitFor(2))[1]).toEqual({ state: 'seen', confirmations: { have: 0, need: 2 } })
    const seenPage = await get(base, `/pay/${pageId}`)
    expect(textOf(seenPage.body, 'status-text')).toBe('Payment detected. Confirmations: 0 of 2')

    // One block: the count changes without a state change, and the stream still shows it.
    await h.api('POST', '/sandbox/onchain/mine', payer.token, { blocks: 1 })
    await work()
    expect((await stream.waitFor(3))[2]).toEqual({ state: 'seen', confirmations: { have: 1, need: 2 } })

    await h.api('POST', '/sandbox/onchain/mine', payer.token, { blocks: 1 })
    await work()
    await stream.ended
    expect(stream.statuses.at(-1)).toEqual({ state: 'paid' })
    expect(stream.statuses).toHaveLength(4)
    await h.expectBooksBalanced()
  })

  it('answers an expired page with 410; a late payment to its address leaves it expired', async () => {
    const t = await receive(onchainReceive('0.0004'))
    const pageId = pageIdOf(t)
    const stream = await openSse(base, `/pay/${pageId}/events`)
    await stream.waitFor(1)
    await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = $2 WHERE id = $1', [
      t.txnId,
      Date.now() - 1,
    ])
    await work()
    await stream.ended
    expect(stream.statuses).toEqual([{ state: 'awaiting_payment' }, { state: 'expired' }])

    const res = await get(base, `/pay/${pageId}`, { 'accept-language': 'en' })
    expect(res.status).toBe(410)
    expect(res.headers['content-security-policy']).toContain("default-src 'none'")
    expect(textOf(res.body, 'message-title')).toBe('Payment request expired')
    expect(res.body).not.toContain(t.sourceReq.reqDetails.address)

    await h.api('POST', '/sandbox/onchain/send', payer.token, {
      address: t.sourceReq.reqDetails.address,
      amount: '0.0004',
    })
    await h.api('POST', '/sandbox/onchain/mine', payer.token, { blocks: 2 })
    await work()
    await work()
    const { rows } = await h.c.db.query(
      `SELECT state FROM transactions WHERE kind = 'deposit' AND src_details->>'forTxnId' = $1`,
      [t.txnId],
    )
    expect(rows.map((r) => r.state)).toEqual(['completed'])
    expect((await get(base, `/pay/${pageId}`)).status).toBe(410)
    const after = await openSse(base, `/pay/${pageId}/events`)
    await after.ended
    expect(after.statuses).toEqual([{ state: 'expired' }])
    await h.expectBooksBalanced()
  })

  it('does not announce a Lightning invoice past its expiry as payable, and tells its end', async () => {
    const t = await receive(lnReceive('0.0001'))
    const pageId = pageIdOf(t)
    // Past the invoice's expiry, inside the node's grace period: still srccreated.
    await h.c.db.query('UPDATE transactions SET expires_at = $2 WHERE id = $1', [t.txnId, Date.now() - 1])
    const page = await get(base, `/pay/${pageId}`)
    expect(page.status).toBe(200)
    expect(textOf(page.body, 'status-text')).toBe('This payment request has expired. Do not pay it.')
    expect(page.body).not.toContain('data-testid="qr"')
    const stream = await openSse(base, `/pay/${pageId}/events`)
    await new Promise((r) => setTimeout(r, 500))
    expect(stream.statuses).toEqual([])
    const hash = (await h.c.db.query('SELECT rail_ref FROM transactions WHERE id = $1', [t.txnId])).rows[0]
      .rail_ref
    await h.c.db.query('UPDATE sandbox_ln_invoices SET expires_at = $2 WHERE payment_hash = $1', [
      hash,
      Date.now() - 1,
    ])
    await h.c.db.query('UPDATE transactions SET next_check_at = 0 WHERE id = $1', [t.txnId])
    await work()
    await stream.ended
    expect(stream.statuses).toEqual([{ state: 'expired' }])
    expect((await get(base, `/pay/${pageId}`)).status).toBe(410)
  })

  it('releases the subscription when the payer leaves', async () => {
    const t = await receive(lnReceive('0.0001'))
    const stream = await openSse(base, `/pay/${pageIdOf(t)}/events`)
    await stream.waitFor(1)
    expect(h.c.notifier.listenerCount).toBe(1)
    await expect.poll(() => stream.raw.split(': keep-alive').length, { timeout: 3_000 }).toBeGreaterThan(2)
    stream.close()
    await expect.poll(() => h.c.notifier.listenerCount).toBe(0)
  })
})

describe('the hosted invoice page under request limits', () => {
  let h: Harness
  let base: string
  let pageId: string
  beforeAll(async () => {
    h = await createHarness({
      RATE_LIMITS_ENABLED: 'true',
      RATE_LIMIT_UNAUTH_PER_MINUTE: '6',
      PAGE_STREAMS_PER_ADDRESS_MAX: '2',
    })
    const shop = await h.createAccount({ name: 'Shop' })
    const q = await h.api('POST', '/api/v2/transaction', shop.token, lnReceive('0.0001'))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, shop.token)
    pageId = pageIdOf(c.body)
    base = await listen(h.app)
  })
  afterAll(async () => h?.close())

  it('limits open streams per client address, and then all requests per client address', async () => {
    const one = await openSse(base, `/pay/${pageId}/events`)
    const two = await openSse(base, `/pay/${pageId}/events`)
    await Promise.all([one.waitFor(1), two.waitFor(1)])
    const three = await openSse(base, `/pay/${pageId}/events`)
    await three.ended
    expect(three.status).toBe(429)
    expect(JSON.parse(three.body)).toMatchObject({ error: 'rate_limit_exceeded' })
    one.close()
    await expect.poll(() => h.c.notifier.listenerCount).toBe(1)
    const four = await openSse(base, `/pay/${pageId}/events`)
    await four.waitFor(1)
    two.close()
    four.close()

    // Four stream requests so far; two pages more reach the limit of six a minute.
    expect((await get(base, `/pay/${pageId}`)).status).toBe(200)
    const last = await get(base, `/pay/${pageId}`)
    expect(last.status).toBe(200)
    expect(last.headers['x-ratelimit-remaining']).toBe('0')
    const refused = await get(base, `/pay/${pageId}`, { 'accept-language': 'vi' })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(refused.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(refused.headers['content-security-policy']).toContain("default-src 'none'")
    expect(textOf(refused.body, 'message-title')).toBe('Quá nhiều yêu cầu')
    expect((await get(base, '/pay/assets/page.js')).status).toBe(429)
  })
})

describe('where the pages are mounted', () => {
  it('serves them at the path of INVOICE_PAGE_URL', async () => {
    const h = await createHarness({ INVOICE_PAGE_URL: 'https://pay.example.com/i/' })
    try {
      const shop = await h.createAccount({ name: 'Shop' })
      const q = await h.api('POST', '/api/v2/transaction', shop.token, lnReceive('0.0001'))
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, shop.token)
      const pageId = pageIdOf(c.body)
      expect(c.body.sourceReq.reqDetails.invoicePageUrl).toBe(`https://pay.example.com/i/${pageId}`)
      const res = await h.app.inject({ method: 'GET', url: `/i/${pageId}` })
      expect(res.statusCode).toBe(200)
      expect(res.body).toContain(`data-stream-url="/i/${pageId}/events"`)
      expect(res.body).toMatch(/<script src="\/i\/assets\/page\.js\?v=/)
      expect((await h.app.inject({ method: 'GET', url: '/i/assets/page.css' })).statusCode).toBe(200)
      expect((await h.app.inject({ method: 'GET', url: `/pay/${pageId}` })).statusCode).toBe(404)
    } finally {
      await h.close()
    }
  })

  it('shows the fiat value in PAGE_FIAT_CCY, which must be a fiat currency', async () => {
    expect(() => loadConfig({ PAGE_FIAT_CCY: 'USDT' })).toThrow(ConfigError)
    expect(() => loadConfig({ PAGE_FIAT_CCY: 'XYZ' })).toThrow(ConfigError)
    expect(loadConfig({}).pageFiatCcy).toBe('USD')
    const h = await createHarness({ PAGE_FIAT_CCY: 'vnd' })
    try {
      const shop = await h.createAccount({ name: 'Shop' })
      const q = await h.api('POST', '/api/v2/transaction', shop.token, lnReceive('0.0001'))
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, shop.token)
      const res = await h.app.inject({ method: 'GET', url: `/pay/${pageIdOf(c.body)}` })
      // 10,000 sats at 2,470,000,000 VND per BTC.
      expect(textOf(res.body, 'amount-fiat')).toBe('≈ About 247,000 VND')
    } finally {
      await h.close()
    }
  })
})

describe.skipIf(ENGINE !== 'postgres')('the page stream across instances (PostgreSQL)', () => {
  it.each([
    ['LISTEN/NOTIFY', {}],
    ['Redis pub/sub as well', { REDIS_URL: 'redis://127.0.0.1:6379' }],
  ])(
    'a page served by one instance turns paid when another instance settles it (%s)',
    async (_n, env: Record<string, string>) => {
      const { db, url, drop } = await createTestDb()
      const dirs = [
        mkdtempSync(join(tmpdir(), 'svcpay-page-a-')),
        mkdtempSync(join(tmpdir(), 'svcpay-page-b-')),
      ]
      const shared = {
        MASTER_KEY: randomBytes(32).toString('hex'),
        ADMIN_TOKEN: 'adm_' + randomBytes(16).toString('hex'),
        JWT_SECRET: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'silent',
        RATE_LIMITS_ENABLED: 'false',
        ...env,
      }
      const dbB = createPostgresDb(url!, { poolMax: 5 })
      const a = await createContainer(loadConfig({ ...shared, DATA_DIR: dirs[0] }), createLogger('silent'), {
        db,
      })
      const b = await createContainer(loadConfig({ ...shared, DATA_DIR: dirs[1] }), createLogger('silent'), {
        db: dbB,
      })
      const appA = await buildApp(a)
      const appB = await buildApp(b)
      try {
        const call = async (
          app: FastifyInstance,
          method: string,
          path: string,
          auth: string,
          body?: unknown,
        ) => {
          const res = await app.inject({
            method: method as 'GET',
            url: path,
            headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
          })
          return JSON.parse(res.body)
        }
        const account = await call(appB, 'POST', '/admin/accounts', shared.ADMIN_TOKEN, { name: 'Across' })
        const { createHmac } = await import('node:crypto')
        const nonce = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
        const token = JSON.parse(
          (
            await appB.inject({
              method: 'POST',
              url: '/api/v2/authentication/token-signature',
              headers: {
                'content-type': 'application/json',
                'x-api-key': account.apiKey,
                'x-api-signature': createHmac('sha256', account.apiSecret)
                  .update(`${account.apiKey}&payload=${nonce}`)
                  .digest('hex'),
              },
              payload: nonce,
            })
          ).body,
        ).accessToken
        const q = await call(appB, 'POST', '/api/v2/transaction', token, lnReceive('0.0001'))
        const t = await call(appB, 'PUT', `/api/v2/transaction/${q.txnId}/confirm`, token)

        const baseA = await listen(appA)
        const stream = await openSse(baseA, `/pay/${pageIdOf(t)}/events`)
        expect(await stream.waitFor(1)).toEqual([{ state: 'awaiting_payment' }])
        await call(appB, 'POST', '/sandbox/lightning/pay', token, {
          paymentRequest: t.sourceReq.reqDetails.paymentRequest,
        })
        await runDueTransactions({ db: b.db, transactions: b.transactions, log: console })
        await stream.ended
        expect(stream.statuses).toEqual([{ state: 'awaiting_payment' }, { state: 'paid' }])
      } finally {
        await appA.close()
        await appB.close()
        await a.close()
        await b.close()
        await dbB.close()
        await db.close()
        await drop()
        for (const d of dirs) rmSync(d, { recursive: true, force: true })
      }
    },
  )
})

/**
 * The page of a VND receive over HTTP, through the real flow: the receive is created and confirmed
 * through the API, the customer's transfer is played by the sandbox bank. Its own service, with a
 * receive fee so that the đồng to transfer (the source amount) differs from what the wallet gets.
 */
describe('the hosted page of a VND receive over HTTP', () => {
  let h: Harness
  let base: string
  beforeAll(async () => {
    h = await createHarness({ STREAM_HEARTBEAT_MS: '200', FEE_VND_RECEIVE: '1000+100' })
    base = await listen(h.app)
  })
  afterAll(async () => h?.close())

  it('shows the transfer with its VietQR code, no fiat value, and follows its state to paid', async () => {
    const shop = await h.createAccount({ name: 'Cà phê Sài Gòn' })
    const q = await h.api('POST', '/api/v2/transaction', shop.token, {
      sourceReq: { ccy: 'VND', method: 'vnd-instant', reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', amtRequested: 500_000, reqDetails: {} },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, shop.token)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    const d = c.body.sourceReq.reqDetails
    const pageId = pageIdOf(c.body)
    // 500,000 to the wallet plus 1,000 + 1% in fees: the payer transfers the source amount.
    expect(c.body.sourceReq.amtRequested).toBe(506_000)
    expect(d.amount).toBe('506000')

    const res = await get(base, `/pay/${pageId}`, { 'accept-language': 'vi' })
    expect(res.status).toBe(200)
    expect(res.headers['content-security-policy']).toContain("default-src 'none'")
    const html = res.body
    expect(html).toContain('data-kind="vietqr"')
    expect(textOf(html, 'amount-vnd')).toBe('506.000 ₫')
    expect(html).not.toContain('data-testid="amount-fiat"')
    expect(html).not.toContain('data-testid="amount-btc"')
    expect(textOf(html, 'bank-name')).toBe(d.bankName)
    expect(textOf(html, 'account-name')).toBe(d.accountName)
    expect(html).toContain(`value="${d.bankAcctNum}"`)
    expect(html).toContain(`value="${d.memo}"`)
    const svg = /data-testid="qr">(<svg [\s\S]*?<\/svg>)<\/div>/.exec(html)![1]!
    expect(scanQrSvg(svg)).toBe(d.vietQr)
    expect(d.vietQr).toBe(
      encodeVietQr({ bankBin: d.bankBin, accountNumber: d.bankAcctNum, amount: 506_000n, memo: d.memo }),
    )
    for (const secret of [q.body.txnId, shop.accountId, 'invoicePageUrl']) expect(html).not.toContain(secret)
    const english = await get(base, `/pay/${pageId}`, { 'accept-language': 'en-US,en;q=0.9' })
    expect(textOf(english.body, 'amount-vnd')).toBe('506,000 VND')

    const stream = await openSse(base, `/pay/${pageId}/events`)
    expect(await stream.waitFor(1)).toEqual([{ state: 'awaiting_payment' }])
    const sent = await h.api('POST', '/admin/sandbox/vnd/transfer', h.adminToken, {
      memo: d.memo,
      amount: d.amount,
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    await stream.ended
    expect(stream.statuses).toEqual([{ state: 'awaiting_payment' }, { state: 'paid' }])
    const paid = await get(base, `/pay/${pageId}`)
    expect(textOf(paid.body, 'status-text')).toBe('Paid. Thank you!')
    expect(paid.body).not.toContain('data-testid="qr"')
    await h.expectBooksBalanced()
  })
})
