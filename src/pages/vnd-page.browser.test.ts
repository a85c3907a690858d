import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { AddressInfo } from 'node:net'
import jsQR from 'jsqr'
import { chromium, type Browser, type Page } from 'playwright-core'
import { PNG } from 'pngjs'
import { QRPay } from 'vietnam-qr-pay'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { readTlvMap } from '../../test/helpers/emv-tlv.js'
import { crc16CcittFalse } from '../payins/vietqr.js'
import { startWorkers, type Workers } from '../worker.js'

/**
 * The hosted page of a VND receive end to end: the real service on 127.0.0.1 with its workers,
 * Chromium driven by playwright-core. The merchant creates and confirms a receive through the API;
 * the payer opens its page, scans the VietQR code from a screenshot as a banking app's camera
 * would, and transfers through the sandbox bank; the page turns paid by itself.
 */

const CHROMIUM =
  process.env.CHROMIUM_PATH ??
  ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(existsSync)
if (!CHROMIUM) {
  console.warn('Skipping the VND page browser test: /usr/bin/chromium is missing (.ci/run installs it).')
}
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url))
/** The page must show the transfer within this long of the sandbox call that made it. */
const LIVE_UPDATE_MS = 2_000

/** A receive of `amount` đồng by bank transfer into the merchant's VND wallet. */
const vndReceive = (amount: string) => ({
  sourceReq: { ccy: 'VND', method: 'vnd-instant', reqDetails: {} },
  destReq: { ccy: 'VND', method: 'svcpay', amtRequested: amount, reqDetails: {} },
})

describe.skipIf(!CHROMIUM)(`the VND receive page in Chromium against the running service (${ENGINE})`, () => {
  let h: Harness
  let workers: Workers
  let origin: string
  let browser: Browser
  let shop: TestAccount

  beforeAll(async () => {
    h = await createHarness()
    shop = await h.createAccount({ name: 'Cà phê Sài Gòn' })
    workers = startWorkers(h.c)
    await h.app.listen({ port: 0, host: '127.0.0.1' })
    origin = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
    browser = await chromium.launch({ executablePath: CHROMIUM })
  })

  afterAll(async () => {
    await browser?.close()
    await workers?.stop()
    await h?.close()
  })

  /** Screenshot the QR code and decode it from its pixels. */
  async function scanQr(page: Page): Promise<string | undefined> {
    const png = PNG.sync.read(await page.getByTestId('qr').screenshot())
    return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data
  }

  it('the QR code scans to srcDetails.vietQr; the sandbox transfer with its memo turns the page paid', async () => {
    const q = await h.api('POST', '/api/v2/transaction', shop.token, vndReceive('500000'))
    expect(q.status).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, shop.token)
    expect(c.status).toBe(200)
    const d = c.body.sourceReq.reqDetails
    expect(Object.keys(d).sort()).toEqual(
      [
        'accountName',
        'amount',
        'bankAcctNum',
        'bankBin',
        'bankName',
        'expiredAt',
        'invoicePageUrl',
        'memo',
        'vietQr',
      ].sort(),
    )
    expect(d.amount).toBe('500000')

    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      extraHTTPHeaders: { 'Accept-Language': 'vi-VN,vi;q=0.9' },
    })
    const page = await context.newPage()
    const problems: string[] = []
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text())
    })
    const response = await page.goto(origin + new URL(d.invoicePageUrl).pathname)
    expect(response?.status()).toBe(200)
    expect(await page.getAttribute('body', 'data-state')).toBe('awaiting_payment')

    // The code a banking app reads is the very payload the API returned, and it says what the page says.
    const scanned = await scanQr(page)
    expect(scanned).toBe(d.vietQr)
    const root = readTlvMap(scanned!)
    expect(root.get('63')).toBe(crc16CcittFalse(scanned!.slice(0, -4)))
    expect(root.get('54')).toBe('500000')
    expect(readTlvMap(root.get('62')!).get('08')).toBe(d.memo)
    const beneficiary = readTlvMap(readTlvMap(root.get('38')!).get('01')!)
    expect(beneficiary.get('00')).toBe(d.bankBin)
    expect(beneficiary.get('01')).toBe(d.bankAcctNum)
    const theirs = new QRPay(scanned!)
    expect(theirs.isValid).toBe(true)
    expect(theirs.additionalData.purpose).toBe(d.memo)

    expect(await page.getByTestId('amount-vnd').textContent()).toBe('500.000 ₫')
    expect(await page.getByTestId('bank-name').textContent()).toBe(d.bankName)
    expect(await page.getByTestId('account-name').textContent()).toBe(d.accountName)
    expect(await page.getByTestId('account-number').inputValue()).toBe(d.bankAcctNum)
    expect(await page.getByTestId('memo').inputValue()).toBe(d.memo)
    await expect.poll(() => h.c.notifier.listenerCount).toBe(1)

    const sent = await h.api('POST', '/admin/sandbox/vnd/transfer', h.adminToken, {
      memo: d.memo,
      amount: d.amount,
    })
    expect(sent.status).toBe(200)
    const sentAt = Date.now()
    await expect
      .poll(() => page.getAttribute('body', 'data-state'), { timeout: LIVE_UPDATE_MS, interval: 50 })
      .toBe('paid')
    expect(Date.now() - sentAt).toBeLessThan(LIVE_UPDATE_MS)
    expect(await page.getByRole('status').textContent()).toBe('Đã thanh toán. Cảm ơn bạn!')
    expect(await page.getByTestId('pay-block').isVisible()).toBe(false)
    await expect.poll(() => h.c.notifier.listenerCount).toBe(0)
    await context.close()
    expect(problems).toEqual([])
    await h.expectBooksBalanced()
  })

  it('a short transfer turns the live page paid short, with what arrived, in Vietnamese and in English', async () => {
    const q = await h.api('POST', '/api/v2/transaction', shop.token, vndReceive('500000'))
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, shop.token)
    expect(c.status).toBe(200)
    const d = c.body.sourceReq.reqDetails
    const url = origin + new URL(d.invoicePageUrl).pathname
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      extraHTTPHeaders: { 'Accept-Language': 'vi-VN,vi;q=0.9' },
    })
    const page = await context.newPage()
    const problems: string[] = []
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
    expect((await page.goto(url))?.status()).toBe(200)
    expect(await page.getByTestId('amount-arrived').isVisible()).toBe(false)
    await expect.poll(() => h.c.notifier.listenerCount).toBe(1)

    const sent = await h.api('POST', '/admin/sandbox/vnd/transfer', h.adminToken, {
      memo: d.memo,
      amount: '400000',
    })
    expect(sent.status).toBe(200)
    expect(sent.body.outcome).toBe('underpaid')
    await expect
      .poll(() => page.getAttribute('body', 'data-state'), { timeout: LIVE_UPDATE_MS, interval: 50 })
      .toBe('paid')
    expect(await page.getByTestId('status').getAttribute('data-outcome')).toBe('underpaid')
    expect(await page.getByRole('status').textContent()).toBe(
      'Thanh toán thiếu: đã nhận 400.000 ₫, ít hơn số tiền yêu cầu 500.000 ₫.',
    )
    expect(await page.getByTestId('amount-vnd').textContent()).toBe('500.000 ₫')
    expect(await page.getByTestId('amount-arrived').textContent()).toBe('400.000 ₫')
    expect(await page.getByTestId('amount-arrived').isVisible()).toBe(true)
    expect(await page.getByTestId('arrived-label').isVisible()).toBe(true)
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: `${ARTIFACTS}vnd-page-underpaid-vi.png`, fullPage: true })

    // Reloaded, in English: the server renders the same, from the completed receive.
    const done = (await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, shop.token)).body
    expect([done.txnState, done.msg, done.sourceReq.amtSettled]).toEqual(['completed', 'underpaid', 400000])
    await page.setExtraHTTPHeaders({ 'Accept-Language': 'en' })
    await page.reload()
    expect(await page.getByRole('status').textContent()).toBe(
      'Paid less than asked: 400,000 VND arrived of the 500,000 VND requested.',
    )
    expect(await page.getByTestId('amount-arrived').textContent()).toBe('400,000 VND')
    await page.screenshot({ path: `${ARTIFACTS}vnd-page-underpaid-en.png`, fullPage: true })
    await context.close()
    expect(problems).toEqual([])
    await h.expectBooksBalanced()
  })
})
