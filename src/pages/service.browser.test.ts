import { existsSync, mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import * as bip21 from 'bip21'
import jsQR from 'jsqr'
import { chromium, type Browser, type Page } from 'playwright-core'
import { PNG } from 'pngjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startWorkers, type Workers } from '../worker.js'
import { WAKE_CHANNEL } from '../events/channels.js'

/**
 * The hosted invoice page end to end: the real service listening on 127.0.0.1 with its workers
 * running, Debian's Chromium driven by playwright-core. A payer opens the page, scans the QR code
 * (decoded from a screenshot), pays through the sandbox, and watches the page change by itself.
 * A screenshot of each page is kept in test-artifacts/ (git-ignored).
 */

const CHROMIUM = '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) {
  console.warn(`Skipping the invoice page browser tests: ${CHROMIUM} is missing (.ci/run installs it).`)
}

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url))
/** The page must show a payment within this long of the sandbox call that made it. */
const LIVE_UPDATE_MS = 2_000

const lnReceive = (amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})
const onchainReceive = (amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'on-chain', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
})

describe.skipIf(!HAVE_CHROMIUM)(
  `the invoice page in Chromium against the running service (${ENGINE})`,
  () => {
    let h: Harness
    let workers: Workers
    let origin: string
    let browser: Browser
    let shop: TestAccount
    let payer: TestAccount

    beforeAll(async () => {
      h = await createHarness()
      shop = await h.createAccount({ name: 'Cà phê Sài Gòn' })
      payer = await h.createAccount({ name: 'Payer' })
      workers = startWorkers(h.c)
      await h.app.listen({ port: 0, host: '127.0.0.1' })
      origin = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
      browser = await chromium.launch({ executablePath: CHROMIUM })
      mkdirSync(ARTIFACTS, { recursive: true })
    })

    afterAll(async () => {
      await browser?.close()
      await workers?.stop()
      await h?.close()
    })

    /** A confirmed receive, as the merchant gets it from the API. */
    const receive = async (body: unknown) => {
      const q = await h.api('POST', '/api/v2/transaction', shop.token, body)
      expect(q.status).toBe(200)
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, shop.token)
      expect(c.status).toBe(200)
      return c.body
    }

    /** The page's URL on this listener: the path of invoicePageUrl (its host is PUBLIC_BASE_URL). */
    const pageUrl = (txn: any) => origin + new URL(txn.sourceReq.reqDetails.invoicePageUrl).pathname

    interface Opened {
      page: Page
      status: number
      /** Script errors and Content-Security-Policy violations. */
      problems: string[]
      /** Top-level navigations after the first load: a reload would show here. */
      navigations: () => number
    }

    async function open(
      url: string,
      opts: { deviceScaleFactor?: number; locale?: string } = {},
    ): Promise<Opened> {
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: opts.deviceScaleFactor ?? 1,
        extraHTTPHeaders: { 'Accept-Language': opts.locale ?? 'en-US,en;q=0.9' },
      })
      const page = await context.newPage()
      const problems: string[] = []
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
      page.on('console', (msg) => {
        // The browser logs the status of a message page (404/410) as a failed resource load.
        if (msg.type() === 'error' && !/status of 4(04|10)/.test(msg.text())) problems.push(msg.text())
      })
      let navigations = 0
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) navigations++
      })
      const response = await page.goto(url)
      expect(response).not.toBeNull()
      return { page, status: response!.status(), problems, navigations: () => navigations - 1 }
    }

    async function close(opened: Opened): Promise<void> {
      await opened.page.context().close()
      expect(opened.problems).toEqual([])
    }

    const state = (page: Page) => page.getAttribute('body', 'data-state')
    const text = (page: Page, testId: string) => page.getByTestId(testId).textContent()
    const screenshot = (page: Page, name: string) =>
      page.screenshot({ path: `${ARTIFACTS}invoice-page-${name}-${ENGINE}.png`, fullPage: true })

    /** Screenshot the QR code and decode it from its pixels, as a wallet's camera would. */
    async function scanQr(page: Page): Promise<string | undefined> {
      const png = PNG.sync.read(await page.getByTestId('qr').screenshot())
      return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data
    }

    it('Lightning: the QR code scans to the invoice; paid through the sandbox, the page turns paid by itself', async () => {
      const t = await receive(lnReceive('0.00012345'))
      const invoice: string = t.sourceReq.reqDetails.paymentRequest
      const opened = await open(pageUrl(t), { deviceScaleFactor: 2 })
      const { page } = opened
      expect(opened.status).toBe(200)
      expect(await state(page)).toBe('awaiting_payment')
      expect(await text(page, 'merchant-name')).toBe('Cà phê Sài Gòn')
      expect(await text(page, 'amount-btc')).toBe('0.00012345 BTC')
      expect(await text(page, 'amount-sats')).toBe('12,345 sats')
      expect(await text(page, 'amount-fiat')).toBe('≈ About 11.72 USD')
      expect(await page.getByRole('status').textContent()).toBe('Waiting for payment')
      expect(await text(page, 'time-left')).toMatch(/^(59:\d\d|1:00:00)$/)

      const scanned = await scanQr(page)
      expect(scanned).toBe(`lightning:${invoice}`)
      expect(scanned!.replace(/^lightning:/, '')).toBe(invoice)
      expect(await page.getByTestId('payment-text').inputValue()).toBe(invoice)
      expect(await page.getByTestId('open-wallet').getAttribute('href')).toBe(`lightning:${invoice}`)
      await expect(page.getByRole('button', { name: 'Copy' }).isVisible()).resolves.toBe(true)
      await expect.poll(() => h.c.notifier.listenerCount).toBe(1)
      await screenshot(page, 'lightning-awaiting')
      // The same page on a desktop: two columns, no horizontal scrolling.
      await page.setViewportSize({ width: 1280, height: 900 })
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280)
      await screenshot(page, 'lightning-awaiting-desktop')

      const paid = await h.api('POST', '/sandbox/lightning/pay', payer.token, { paymentRequest: invoice })
      expect(paid.status).toBe(200)
      const paidAt = Date.now()
      await expect.poll(() => state(page), { timeout: LIVE_UPDATE_MS, interval: 50 }).toBe('paid')
      expect(Date.now() - paidAt).toBeLessThan(LIVE_UPDATE_MS)
      expect(await page.getByRole('status').textContent()).toBe('Paid. Thank you!')
      expect(await page.getByTestId('pay-block').isVisible()).toBe(false)
      expect(opened.navigations()).toBe(0)
      // The page closed its stream, and the server let go of the subscription.
      await expect.poll(() => h.c.notifier.listenerCount).toBe(0)
      await screenshot(page, 'lightning-paid')
      await close(opened)
      await h.expectBooksBalanced()
    })

    it('on-chain: the QR code scans to the BIP21 URI; seen with confirmations from the mempool, paid when mined', async () => {
      const t = await receive(onchainReceive('0.0025'))
      const { address, invoice } = t.sourceReq.reqDetails
      const opened = await open(pageUrl(t), { deviceScaleFactor: 2, locale: 'vi-VN,vi;q=0.9' })
      const { page } = opened
      expect(opened.status).toBe(200)
      expect(await page.getAttribute('html', 'lang')).toBe('vi')
      expect(await text(page, 'amount-sats')).toBe('250.000 sats')

      const scanned = await scanQr(page)
      expect(scanned).toBe(invoice)
      const decoded = bip21.decode(scanned!)
      expect(decoded.address).toBe(address)
      expect(decoded.options).toMatchObject({ amount: 0.0025, label: 'Cà phê Sài Gòn' })
      expect(await page.getByTestId('payment-text').inputValue()).toBe(address)
      expect(await page.getByTestId('open-wallet').getAttribute('href')).toBe(invoice)
      await expect.poll(() => h.c.notifier.listenerCount).toBe(1)
      await screenshot(page, 'onchain-awaiting')

      const sent = await h.api('POST', '/sandbox/onchain/send', payer.token, { address, amount: '0.0025' })
      expect(sent.status).toBe(200)
      const sentAt = Date.now()
      await expect.poll(() => state(page), { timeout: LIVE_UPDATE_MS, interval: 50 }).toBe('seen')
      expect(Date.now() - sentAt).toBeLessThan(LIVE_UPDATE_MS)
      expect(await page.getByTestId('status').getAttribute('data-confirmations')).toBe('0/1')
      expect(await page.getByRole('status').textContent()).toBe('Đã phát hiện thanh toán. Số xác nhận: 0/1')
      expect(await page.getByTestId('qr').isVisible()).toBe(false)
      await screenshot(page, 'onchain-seen')

      const mined = await h.api('POST', '/sandbox/onchain/mine', payer.token, { blocks: 1 })
      expect(mined.status).toBe(200)
      const minedAt = Date.now()
      await expect.poll(() => state(page), { timeout: LIVE_UPDATE_MS, interval: 50 }).toBe('paid')
      expect(Date.now() - minedAt).toBeLessThan(LIVE_UPDATE_MS)
      expect(await page.getByRole('status').textContent()).toBe('Đã thanh toán. Cảm ơn bạn!')
      expect(opened.navigations()).toBe(0)
      await screenshot(page, 'onchain-paid')
      await close(opened)
      await h.expectBooksBalanced()
    })

    it('on-chain paid short: the live page says so and shows what arrived, in English', async () => {
      const t = await receive(onchainReceive('0.001'))
      const { address } = t.sourceReq.reqDetails
      const opened = await open(pageUrl(t))
      const { page } = opened
      expect(opened.status).toBe(200)
      await expect.poll(() => h.c.notifier.listenerCount).toBe(1)
      const sent = await h.api('POST', '/sandbox/onchain/send', payer.token, { address, amount: '0.0004' })
      expect(sent.status).toBe(200)
      await expect.poll(() => state(page), { timeout: LIVE_UPDATE_MS, interval: 50 }).toBe('seen')
      const mined = await h.api('POST', '/sandbox/onchain/mine', payer.token, { blocks: 1 })
      expect(mined.status).toBe(200)
      await expect.poll(() => state(page), { timeout: LIVE_UPDATE_MS, interval: 50 }).toBe('paid')
      expect(await page.getByTestId('status').getAttribute('data-outcome')).toBe('underpaid')
      expect(await page.getByRole('status').textContent()).toBe(
        'Paid less than asked: 0.0004 BTC arrived of the 0.001 BTC requested.',
      )
      expect(await text(page, 'amount-btc')).toBe('0.001 BTC')
      expect(await text(page, 'amount-arrived')).toBe('0.0004 BTC')
      expect(await page.getByTestId('amount-arrived').isVisible()).toBe(true)
      expect(opened.navigations()).toBe(0)
      await screenshot(page, 'onchain-underpaid')
      await close(opened)
      await h.expectBooksBalanced()
    })

    it('an open page turns expired when its receive expires; the link then answers 410 with a clear message', async () => {
      const t = await receive(onchainReceive('0.001'))
      const opened = await open(pageUrl(t))
      const { page } = opened
      await expect.poll(() => h.c.notifier.listenerCount).toBe(1)
      // Make the receive due to expire now and wake the worker, as its timer would.
      await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = $2 WHERE id = $1', [
        t.txnId,
        Date.now() - 1,
      ])
      await h.c.db.notify(WAKE_CHANNEL)
      await expect.poll(() => state(page), { timeout: 5_000, interval: 50 }).toBe('expired')
      expect(await page.getByRole('status').textContent()).toBe(
        'This payment request has expired. Do not pay it.',
      )
      expect(await page.getByTestId('qr').isVisible()).toBe(false)
      expect(opened.navigations()).toBe(0)
      await close(opened)

      const again = await open(pageUrl(t))
      expect(again.status).toBe(410)
      expect(await again.page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Payment request expired',
      )
      expect(await again.page.getByTestId('message-body').textContent()).toBe(
        'This payment request has expired. Do not pay it; ask the merchant for a new one.',
      )
      expect(await again.page.locator('script').count()).toBe(0)
      await screenshot(again.page, 'expired')
      await close(again)
    })

    it('an unknown page answers 404 with a clear message', async () => {
      const opened = await open(`${origin}/pay/AAAAAAAAAAAAAAAAAAAAAA`)
      expect(opened.status).toBe(404)
      expect(await opened.page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Payment page not found',
      )
      expect(await opened.page.getByTestId('message-body').textContent()).toBe(
        'This link is wrong or no longer exists. Please check it with the merchant.',
      )
      // The message page's stylesheet loaded under the policy: the card is styled.
      expect(await opened.page.locator('main').evaluate((el) => getComputedStyle(el).maxWidth)).not.toBe(
        'none',
      )
      await screenshot(opened.page, 'not-found')
      await close(opened)
    })
  },
)
