import { existsSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import jsQR from 'jsqr'
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core'
import { PNG } from 'pngjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_SCRIPT_CONTENT_TYPE, createNonce, pageSecurityHeaders, PAGE_CONTENT_TYPE } from './headers.js'
import { pickLanguage } from './i18n.js'
import { PAGE_SCRIPT } from './page-script.js'
import { isFinalPageState, pageStatusEvent, type PageStatus } from './page-status.js'
import { MESSAGE_PAGE_STATUS, renderInvoicePage, renderMessagePage, type InvoicePageView } from './render.js'
import { BIP84_ADDRESS, BOLT11_COFFEE, lightningView, onchainView, vietQrView } from './testing.js'

/**
 * The invoice page in a real browser, served with its real headers from a loopback server that
 * also plays the page's public stream. Skipped where no Chromium is installed.
 */

const CHROMIUM =
  process.env.CHROMIUM_PATH ??
  ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(existsSync)
if (!CHROMIUM) {
  console.warn('Skipping the invoice page browser tests: /usr/bin/chromium is missing (.ci/run installs it).')
}

const SCRIPT_PATH = '/pay/assets/page.js'

interface TestPage {
  view: InvoicePageView
  streams: Set<ServerResponse>
  connections: number
}

const pages = new Map<string, TestPage>()
let server: Server
let origin: string
let browser: Browser

function addPage(id: string, view: InvoicePageView): TestPage {
  const entry = { view: { ...view, pageId: id }, streams: new Set<ServerResponse>(), connections: 0 }
  pages.set(id, entry)
  return entry
}

/** What the stream route of the service does: tell every open stream, close them when final. */
function push(id: string, status: PageStatus): void {
  const entry = pages.get(id)!
  entry.view =
    entry.view.kind === 'vietqr'
      ? { ...entry.view, state: status.state }
      : { ...entry.view, state: status.state, confirmations: status.confirmations }
  for (const res of entry.streams) {
    res.write(pageStatusEvent(status))
    if (isFinalPageState(status.state)) res.end()
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', origin)
  const lang = pickLanguage(req.headers['accept-language'])
  if (url.pathname === SCRIPT_PATH) {
    res.writeHead(200, { 'Content-Type': PAGE_SCRIPT_CONTENT_TYPE, 'X-Content-Type-Options': 'nosniff' })
    res.end(PAGE_SCRIPT)
    return
  }
  const m = /^\/pay\/([\w-]+)(\/events)?$/.exec(url.pathname)
  const entry = m ? pages.get(m[1]!) : undefined
  const nonce = createNonce()
  if (!entry) {
    res.writeHead(MESSAGE_PAGE_STATUS.not_found, {
      ...pageSecurityHeaders(nonce),
      'Content-Type': PAGE_CONTENT_TYPE,
    })
    res.end(renderMessagePage('not_found', lang, { nonce }))
    return
  }
  if (m![2]) {
    entry.connections++
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' })
    // A short reconnection delay makes an unwanted reconnect show up quickly in the tests.
    res.write('retry: 200\n\n')
    const { state } = entry.view
    const confirmations = entry.view.kind === 'vietqr' ? undefined : entry.view.confirmations
    res.write(pageStatusEvent({ state, confirmations }))
    if (isFinalPageState(state)) return void res.end()
    entry.streams.add(res)
    req.on('close', () => entry.streams.delete(res))
    return
  }
  res.writeHead(200, { ...pageSecurityHeaders(nonce), 'Content-Type': PAGE_CONTENT_TYPE })
  res.end(
    await renderInvoicePage(entry.view, lang, {
      nonce,
      streamUrl: `/pay/${m![1]}/events`,
      scriptUrl: SCRIPT_PATH,
    }),
  )
}

interface Opened {
  page: Page
  problems: string[]
}

/** Open a page, collecting script errors and Content-Security-Policy violations. */
async function open(path: string, options: BrowserContextOptions = {}): Promise<Opened> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, ...options })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of 404/.test(msg.text())) problems.push(msg.text())
  })
  const response = await page.goto(origin + path)
  expect(response).not.toBeNull()
  return { page, problems }
}

async function close({ page, problems }: Opened): Promise<void> {
  await page.context().close()
  expect(problems).toEqual([])
}

const state = (page: Page) => page.getAttribute('body', 'data-state')
const text = (page: Page, testId: string) => page.getByTestId(testId).textContent()

/** Screenshot the QR element and decode it from its pixels. */
async function decodeQr(page: Page): Promise<string | undefined> {
  const png = PNG.sync.read(await page.getByTestId('qr').screenshot())
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data
}

/** Contrast ratio (WCAG 2) of the text of each visible part of the page against its background. */
function measureContrast(page: Page): Promise<Record<string, number>> {
  return page.evaluate(() => {
    const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number)
    const lum = ([r, g, b]: number[]) => {
      const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
      return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!)
    }
    const background = (el: Element | null): string => {
      for (; el; el = el.parentElement) {
        const bg = getComputedStyle(el).backgroundColor
        if (rgb(bg)[3] !== 0 && bg !== 'transparent') return bg
      }
      return 'rgb(255, 255, 255)'
    }
    const selectors = [
      'h1',
      '.eyebrow',
      '.method',
      '.amount-btc',
      '.amount-sats',
      '.amount-fiat',
      '[data-testid="status-text"]',
      '.countdown',
      '.hint',
      '.field-label',
      '.payment-text',
      '.button.primary',
      '[data-testid="copy"]',
    ]
    const out: Record<string, number> = {}
    for (const sel of selectors) {
      const el = document.querySelector(sel)
      if (!el || !(el as HTMLElement).offsetParent) continue
      const a = lum(rgb(getComputedStyle(el).color))
      const b = lum(rgb(background(el)))
      out[sel] = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
    }
    return out
  })
}

describe.skipIf(!CHROMIUM)('the invoice page in Chromium', () => {
  beforeAll(async () => {
    server = createServer((req, res) => {
      handle(req, res).catch((err: unknown) => {
        res.statusCode = 500
        res.end(String(err))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    browser = await chromium.launch({ executablePath: CHROMIUM })
  })

  afterAll(async () => {
    await browser?.close()
    for (const entry of pages.values()) for (const res of entry.streams) res.end()
    await new Promise((resolve) => server?.close(resolve))
  })

  it('shows a Lightning invoice whose QR code scans back to the exact payment URI', async () => {
    addPage('ln-qr', lightningView({ expiresAtMs: Date.now() + 15 * 60_000 }))
    const opened = await open('/pay/ln-qr', { deviceScaleFactor: 2 })
    const { page } = opened
    expect(await decodeQr(page)).toBe(`lightning:${BOLT11_COFFEE}`)
    expect(await page.getByTestId('payment-text').inputValue()).toBe(BOLT11_COFFEE)
    expect(await page.getByTestId('open-wallet').getAttribute('href')).toBe(`lightning:${BOLT11_COFFEE}`)
    expect(await page.getByRole('status').textContent()).toBe('Waiting for payment')
    await close(opened)
  })

  it('shows an on-chain request whose QR code scans back to the BIP21 URI', async () => {
    const uri = `bitcoin:${BIP84_ADDRESS}?amount=0.0025&label=Acme`
    addPage('oc-qr', onchainView({ paymentUri: uri, expiresAtMs: Date.now() + 3_600_000 }))
    const opened = await open('/pay/oc-qr', { viewport: { width: 1280, height: 900 } })
    expect(await decodeQr(opened.page)).toBe(uri)
    expect(await opened.page.getByTestId('open-wallet').getAttribute('href')).toBe(uri)
    await close(opened)
  })

  it('follows the stream live: confirmations, then paid, then closes the stream for good', async () => {
    const entry = addPage('oc-live', onchainView({ expiresAtMs: Date.now() + 3_600_000 }))
    const opened = await open('/pay/oc-live')
    const { page } = opened
    await expect.poll(() => entry.streams.size).toBe(1)
    await expect(page.getByTestId('qr').isVisible()).resolves.toBe(true)

    // The countdown runs.
    const first = await text(page, 'time-left')
    await expect.poll(() => text(page, 'time-left'), { timeout: 3000 }).not.toBe(first)

    push('oc-live', { state: 'seen', confirmations: { have: 1, need: 3 } })
    await expect.poll(() => text(page, 'status-text')).toBe('Payment detected. Confirmations: 1 of 3')
    expect(await state(page)).toBe('seen')
    expect(await page.getByTestId('status').getAttribute('data-state')).toBe('seen')
    expect(await page.getByTestId('qr').isVisible()).toBe(false)
    expect(await page.getByTestId('countdown').isVisible()).toBe(false)

    push('oc-live', { state: 'seen', confirmations: { have: 2, need: 3 } })
    await expect.poll(() => text(page, 'status-text')).toBe('Payment detected. Confirmations: 2 of 3')

    push('oc-live', { state: 'paid' })
    await expect.poll(() => state(page)).toBe('paid')
    expect(await page.getByRole('status').textContent()).toBe('Paid. Thank you!')
    // The script closed the stream, so EventSource does not reconnect after the server ends it.
    await page.waitForTimeout(800)
    expect(entry.connections).toBe(1)
    await close(opened)
  })

  it('speaks Vietnamese when the browser asks for it', async () => {
    addPage('ln-vi', lightningView({ expiresAtMs: Date.now() + 15 * 60_000 }))
    const opened = await open('/pay/ln-vi', {
      locale: 'vi-VN',
      extraHTTPHeaders: { 'Accept-Language': 'vi-VN,vi;q=0.9,en;q=0.8' },
    })
    const { page } = opened
    expect(await page.getAttribute('html', 'lang')).toBe('vi')
    expect(await page.getByTestId('amount-sats').textContent()).toBe('250.000 sats')
    expect(await page.getByRole('status').textContent()).toBe('Đang chờ thanh toán')
    push('ln-vi', { state: 'paid' })
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Đã thanh toán. Cảm ơn bạn!')
    expect(await page.getByTestId('pay-block').isVisible()).toBe(false)
    await close(opened)
  })

  it('shows the request as expired when the time runs out, while still listening for a late payment', async () => {
    const entry = addPage('ln-expiring', lightningView({ expiresAtMs: Date.now() + 1500 }))
    const opened = await open('/pay/ln-expiring')
    const { page } = opened
    await expect.poll(() => state(page), { timeout: 5000 }).toBe('expired')
    expect(await page.getByRole('status').textContent()).toBe(
      'This payment request has expired. Do not pay it.',
    )
    expect(await page.getByTestId('qr').isVisible()).toBe(false)
    expect(entry.streams.size).toBe(1)
    push('ln-expiring', { state: 'paid' })
    await expect.poll(() => state(page)).toBe('paid')
    await close(opened)
  })

  it('copies the invoice with the copy button', async () => {
    addPage('ln-copy', lightningView({ expiresAtMs: Date.now() + 15 * 60_000 }))
    const opened = await open('/pay/ln-copy')
    const { page } = opened
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    const button = page.getByRole('button', { name: 'Copy' })
    await expect(button.isVisible()).resolves.toBe(true)
    await button.click()
    await expect.poll(() => text(page, 'copy-feedback')).toBe('Copied')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(BOLT11_COFFEE)
    await close(opened)
  })

  it('shows a VND bank transfer: its QR code scans back to the VietQR payload, each detail copies, and it turns paid', async () => {
    const view = vietQrView({ expiresAtMs: Date.now() + 15 * 60_000 })
    addPage('vnd-qr', view)
    const opened = await open('/pay/vnd-qr', { deviceScaleFactor: 2, locale: 'vi-VN' })
    const { page } = opened
    expect(await page.getAttribute('html', 'lang')).toBe('vi')
    expect(await decodeQr(page)).toBe(view.vietQr)
    expect(await text(page, 'amount-vnd')).toBe('500.000 ₫')
    expect(await text(page, 'bank-name')).toBe('Vietcombank')
    expect(await text(page, 'account-name')).toBe('CONG TY TNHH SVCPAY')
    expect(await page.getByLabel('Nội dung chuyển khoản').inputValue()).toBe('SVCPAY 7F3KQ2')
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    for (const [id, value] of [
      ['account-number', '0011001932418'],
      ['transfer-amount', '500000'],
      ['memo', 'SVCPAY 7F3KQ2'],
    ] as const) {
      await page.getByTestId(`copy-${id}`).click()
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(value)
    }
    expect(await text(page, 'copy-feedback')).toBe('Đã sao chép')
    expect(await text(page, 'time-left')).toMatch(/^(14:5\d|15:00)$/)
    // Nothing overflows the phone's width.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await expect.poll(() => pages.get('vnd-qr')!.streams.size).toBe(1)
    push('vnd-qr', { state: 'paid' })
    await expect.poll(() => state(page)).toBe('paid')
    expect(await page.getByRole('status').textContent()).toBe('Đã thanh toán. Cảm ơn bạn!')
    expect(await page.getByTestId('pay-block').isVisible()).toBe(false)
    await close(opened)
  })

  it('falls back to selecting the text where the Clipboard API is missing', async () => {
    addPage('ln-copy-old', lightningView({ expiresAtMs: Date.now() + 15 * 60_000 }))
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
    await context.addInitScript(() => Object.defineProperty(navigator, 'clipboard', { value: undefined }))
    const page = await context.newPage()
    await page.goto(`${origin}/pay/ln-copy-old`)
    await page.getByRole('button', { name: 'Copy' }).click()
    await expect
      .poll(() => text(page, 'copy-feedback'))
      .toMatch(/^(Copied|Could not copy\. The text is selected)/)
    const selection = await page
      .getByTestId('payment-text')
      .evaluate((el: HTMLTextAreaElement) => [
        document.activeElement === el,
        el.selectionStart,
        el.selectionEnd,
      ])
    expect(selection).toEqual([true, 0, BOLT11_COFFEE.length])
    await context.close()
  })

  it('can be used with the keyboard, with a visible focus ring', async () => {
    addPage('ln-keys', lightningView({ expiresAtMs: Date.now() + 15 * 60_000 }))
    const opened = await open('/pay/ln-keys')
    const { page } = opened
    const reached: (string | null)[] = []
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab')
      reached.push(await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null))
    }
    expect(reached).toEqual(['open-wallet', 'payment-text', 'copy'])
    const ring = await page.evaluate(() => {
      const style = getComputedStyle(document.activeElement!)
      return `${style.outlineStyle} ${style.outlineWidth}`
    })
    expect(ring).toBe('solid 3px')
    // The textarea is labelled and the QR code has a name.
    await expect(page.getByRole('textbox', { name: 'Lightning invoice' }).inputValue()).resolves.toBe(
      BOLT11_COFFEE,
    )
    await expect(page.getByRole('img', { name: 'QR code of the Lightning invoice' }).count()).resolves.toBe(1)
    await close(opened)
  })

  it('works without JavaScript', async () => {
    addPage('ln-nojs', lightningView({ expiresAtMs: Date.now() + 15 * 60_000 }))
    const opened = await open('/pay/ln-nojs', { javaScriptEnabled: false })
    const { page } = opened
    expect(await page.getByRole('status').textContent()).toBe('Waiting for payment')
    expect(await page.getByTestId('qr').isVisible()).toBe(true)
    expect(await page.getByTestId('time-left').textContent()).toMatch(/^1[45]:\d\d$/)
    expect(await page.getByTestId('payment-text').inputValue()).toBe(BOLT11_COFFEE)
    // A button that could not work stays hidden; the text can still be selected and copied.
    expect(await page.getByTestId('copy').isVisible()).toBe(false)
    // Playwright disables scripts by emulation, under which Chromium still hides <noscript>; the
    // parser did treat its content as markup, which is what a browser without scripts renders.
    expect(await page.locator('noscript > p.noscript').count()).toBe(1)
    await close(opened)
  })

  it('fits a phone in one column and uses two columns on a desktop', async () => {
    addPage('ln-layout', lightningView({ expiresAtMs: Date.now() + 15 * 60_000 }))
    const phone = await open('/pay/ln-layout', { viewport: { width: 390, height: 844 } })
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    const [summaryPhone, qrPhone] = await Promise.all([
      phone.page.locator('.summary').boundingBox(),
      phone.page.getByTestId('qr').boundingBox(),
    ])
    expect(qrPhone!.y).toBeGreaterThanOrEqual(summaryPhone!.y + summaryPhone!.height)
    expect(qrPhone!.width).toBeGreaterThanOrEqual(240)
    await close(phone)

    const desktop = await open('/pay/ln-layout', { viewport: { width: 1280, height: 900 } })
    const [summaryDesk, qrDesk] = await Promise.all([
      desktop.page.locator('.summary').boundingBox(),
      desktop.page.getByTestId('qr').boundingBox(),
    ])
    expect(qrDesk!.x).toBeGreaterThanOrEqual(summaryDesk!.x + summaryDesk!.width)
    await close(desktop)
  })

  it.each(['light', 'dark'] as const)(
    'keeps text contrast at 4.5:1 or better in the %s scheme',
    async (colorScheme) => {
      const entry = addPage(
        `oc-contrast-${colorScheme}`,
        onchainView({ expiresAtMs: Date.now() + 3_600_000 }),
      )
      const opened = await open(`/pay/oc-contrast-${colorScheme}`, { colorScheme })
      const { page } = opened
      const ratios = { ...(await measureContrast(page)) }
      expect(Object.keys(ratios).length).toBeGreaterThanOrEqual(12)
      for (const next of [
        { state: 'seen', confirmations: { have: 1, need: 2 } },
        { state: 'paid' },
      ] as PageStatus[]) {
        push(entry.view.pageId, next)
        await expect.poll(() => state(page)).toBe(next.state)
        ratios[`status ${next.state}`] = (await measureContrast(page))['[data-testid="status-text"]']!
      }
      for (const [what, ratio] of Object.entries(ratios)) expect(ratio, what).toBeGreaterThanOrEqual(4.5)
      await close(opened)

      addPage(`ln-expired-${colorScheme}`, lightningView({ state: 'expired' }))
      const expired = await open(`/pay/ln-expired-${colorScheme}`, { colorScheme })
      expect((await measureContrast(expired.page))['[data-testid="status-text"]']).toBeGreaterThanOrEqual(4.5)
      await close(expired)
    },
  )

  it('answers an unknown page with 404 and a clear message, under the same policy', async () => {
    const context = await browser.newContext({ extraHTTPHeaders: { 'Accept-Language': 'en-US' } })
    const page = await context.newPage()
    const response = await page.goto(`${origin}/pay/no-such-page`)
    expect(response!.status()).toBe(404)
    expect(response!.headers()['content-security-policy']).toContain("default-src 'none'")
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Payment page not found')
    await context.close()
  })
})
