import { describe, expect, it } from 'vitest'
import { PAGE_SCRIPT } from './page-script.js'
import {
  MESSAGE_PAGE_STATUS,
  renderInvoicePage,
  renderMessagePage,
  type InvoicePageOptions,
} from './render.js'
import { scanQrSvg } from '../../test/helpers/qr-scan.js'
import { BIP84_ADDRESS, BOLT11_COFFEE, NOW_MS, lightningView, onchainView, vietQrView } from './testing.js'

const NONCE = 'r4nd0mN0nceValue+/AAAA=='
const OPTS: InvoicePageOptions = {
  nonce: NONCE,
  streamUrl: '/pay/pg_1/events',
  scriptUrl: '/pay/assets/page.js',
  nowMs: NOW_MS,
}

const VOID = new Set([
  'meta',
  'link',
  'br',
  'hr',
  'img',
  'input',
  'source',
  'wbr',
  'col',
  'area',
  'base',
  'embed',
  'track',
])

/**
 * A small well-formedness check: every non-void element is closed in order. The contents of
 * script, style and textarea are text and skipped, as the HTML parser does.
 */
function checkBalanced(markup: string): void {
  const stack: string[] = []
  const re = /<(\/?)([a-zA-Z][\w-]*)((?:\s+[^\s=>/]+(?:="[^"]*")?)*)\s*(\/?)>|<!doctype html>/gy
  let i = 0
  while (i < markup.length) {
    const next = markup.indexOf('<', i)
    if (next < 0) break
    re.lastIndex = next
    const m = re.exec(markup)
    expect(m, `malformed tag at ${markup.slice(next, next + 40)}`).not.toBeNull()
    i = re.lastIndex
    if (!m![2]) continue
    const [, close, name, , selfClose] = m!
    const tag = name!.toLowerCase()
    if (close) {
      expect(stack.pop(), `closing </${tag}>`).toBe(tag)
    } else if (!selfClose && !VOID.has(tag)) {
      if (tag === 'script' || tag === 'style' || tag === 'textarea') {
        const end = markup.indexOf(`</${tag}>`, i)
        expect(end).toBeGreaterThan(-1)
        i = end + tag.length + 3
      } else {
        stack.push(tag)
      }
    }
  }
  expect(stack).toEqual([])
}

/** The start tags of a page (escaped text holds no `<`, so each `<` starts real markup). */
function startTags(markup: string): string[] {
  return markup.match(/<[a-zA-Z][^>]*>/g) ?? []
}

function attr(markup: string, testId: string): string {
  const m = new RegExp(`<[^>]*data-testid="${testId}"[^>]*>`).exec(markup)
  expect(m, `element ${testId}`).not.toBeNull()
  return m![0]
}

function textOf(markup: string, testId: string): string {
  const m = new RegExp(`data-testid="${testId}"[^>]*>([\\s\\S]*?)</`).exec(markup)
  expect(m, `element ${testId}`).not.toBeNull()
  return m![1]!
}

describe('renderInvoicePage', () => {
  it('escapes a hostile merchant name everywhere it appears', async () => {
    const page = await renderInvoicePage(
      lightningView({ merchantName: '<script>alert(1)</script>' }),
      'en',
      OPTS,
    )
    expect(page).not.toContain('<script>alert(1)')
    expect(page).toContain('<title>Pay &lt;script&gt;alert(1)&lt;/script&gt;</title>')
    expect(page).toContain('<bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi>')
    // The only script element is ours, and it carries the nonce.
    expect(page.match(/<script\b[^>]*>/g)).toEqual([
      `<script src="/pay/assets/page.js" nonce="${NONCE}" defer>`,
    ])
  })

  it('escapes attribute breakouts in names and URLs', async () => {
    const page = await renderInvoicePage(
      lightningView({ merchantName: `"><img src=x onerror=alert(1)>` }),
      'en',
      { ...OPTS, streamUrl: '/pay/x"onmouseover="alert(1)' },
    )
    expect(page).not.toMatch(/<img/)
    for (const tag of startTags(page)) expect(tag).not.toMatch(/\son\w+=/i)
    expect(page).toContain('data-stream-url="/pay/x&quot;onmouseover=&quot;alert(1)"')
    checkBalanced(page)
  })

  it('renders a complete Lightning page in English', async () => {
    const view = lightningView()
    const page = await renderInvoicePage(view, 'en', OPTS)
    checkBalanced(page)
    expect(page.startsWith('<!doctype html>\n<html lang="en">')).toBe(true)
    expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
    expect(textOf(page, 'method')).toBe('Bitcoin over Lightning')
    expect(textOf(page, 'amount-btc')).toBe('0.0025 <span class="unit">BTC')
    expect(textOf(page, 'amount-sats')).toBe('250,000 <span class="unit">sats')
    expect(page).toContain('6,250,000 <span class="unit">VND</span>')

    const status = attr(page, 'status')
    expect(status).toContain('role="status"')
    expect(status).toContain('aria-live="polite"')
    expect(status).toContain('data-state="awaiting_payment"')
    expect(textOf(page, 'status-text')).toBe('Waiting for payment')
    expect(page).toMatch(
      /<body data-state="awaiting_payment" data-kind="lightning" data-stream-url="\/pay\/pg_1\/events" data-expires-at="\d+" data-server-now="1750000000000">/,
    )
    expect(textOf(page, 'time-left')).toBe('15:00')

    const qr =
      /<div class="qr" role="img" aria-label="QR code of the Lightning invoice" data-testid="qr">(<svg [\s\S]*?<\/svg>)<\/div>/.exec(
        page,
      )
    expect(qr).not.toBeNull()
    checkBalanced(qr![1]!)

    expect(attr(page, 'open-wallet')).toContain(`href="lightning:${BOLT11_COFFEE}"`)
    expect(page).toContain(
      '<label class="field-label" id="payment-text-label" for="payment-text">Lightning invoice</label>',
    )
    const textarea = attr(page, 'payment-text')
    expect(textarea).toMatch(/^<textarea id="payment-text"/)
    expect(textarea).toContain(' readonly ')
    expect(textOf(page, 'payment-text')).toBe(BOLT11_COFFEE)
    const copy = attr(page, 'copy')
    expect(copy).toMatch(/^<button type="button"/)
    // The copy button needs the script; the script reveals it.
    expect(copy).toContain(' hidden>')
    expect(page).toContain('>Copy</button>')
    expect(attr(page, 'copy-feedback')).toContain('aria-live="polite"')
  })

  it('renders an on-chain page in Vietnamese with Vietnamese number separators', async () => {
    const view = onchainView()
    const page = await renderInvoicePage(view, 'vi', OPTS)
    checkBalanced(page)
    expect(page.startsWith('<!doctype html>\n<html lang="vi">')).toBe(true)
    expect(page).toContain('<title>Thanh toán cho Acme Hardware</title>')
    expect(textOf(page, 'amount-btc')).toBe('0,0025 <span class="unit">BTC')
    expect(textOf(page, 'amount-sats')).toBe('250.000 <span class="unit">sats')
    expect(page).toContain('245,31 <span class="unit">USD</span>')
    expect(textOf(page, 'status-text')).toBe('Đang chờ thanh toán')
    expect(textOf(page, 'time-left')).toBe('1 ngày 00:00:00')
    expect(page).toContain('aria-label="Mã QR của địa chỉ Bitcoin và số tiền"')
    expect(attr(page, 'open-wallet')).toContain(`href="bitcoin:${BIP84_ADDRESS}?amount=0.0025"`)
    expect(page).toContain('>Mở trong ví</a>')
    expect(textOf(page, 'payment-text')).toBe(BIP84_ADDRESS)
  })

  it('escapes the ampersands of a BIP21 URI in the wallet link', async () => {
    const uri = `bitcoin:${BIP84_ADDRESS}?amount=0.0025&label=Acme`
    const page = await renderInvoicePage(onchainView({ paymentUri: uri }), 'en', OPTS)
    expect(attr(page, 'open-wallet')).toContain(
      `href="bitcoin:${BIP84_ADDRESS}?amount=0.0025&amp;label=Acme"`,
    )
  })

  it('omits the fiat line when no rate is known', async () => {
    const page = await renderInvoicePage(lightningView({ fiat: undefined }), 'en', OPTS)
    expect(page).not.toContain('data-testid="amount-fiat"')
  })

  it('shows confirmations and no way to pay again once the payment is seen', async () => {
    const page = await renderInvoicePage(
      onchainView({ state: 'seen', confirmations: { have: 1, need: 3 } }),
      'en',
      OPTS,
    )
    checkBalanced(page)
    expect(attr(page, 'status')).toContain('data-state="seen"')
    expect(attr(page, 'status')).toContain('data-confirmations="1/3"')
    expect(textOf(page, 'status-text')).toBe('Payment detected. Confirmations: 1 of 3')
    expect(page).not.toContain('data-testid="qr"')
    expect(page).not.toContain('data-testid="countdown"')
    expect(page).not.toContain(BIP84_ADDRESS)
    // The stream is still followed until the payment is final.
    expect(page).toContain('<script src="/pay/assets/page.js"')

    const vi = await renderInvoicePage(
      onchainView({ state: 'seen', confirmations: { have: 2, need: 6 } }),
      'vi',
      OPTS,
    )
    expect(textOf(vi, 'status-text')).toBe('Đã phát hiện thanh toán. Số xác nhận: 2/6')
  })

  it('shows a paid page without the invoice', async () => {
    const page = await renderInvoicePage(lightningView({ state: 'paid' }), 'vi', OPTS)
    expect(page).toContain('<body data-state="paid"')
    expect(textOf(page, 'status-text')).toBe('Đã thanh toán. Cảm ơn bạn!')
    expect(page).not.toContain('data-testid="pay-block"')
    expect(page).not.toContain(BOLT11_COFFEE)
  })

  it('shows what arrived when a bitcoin receive was paid short or over, in both languages', async () => {
    const short = onchainView({
      state: 'paid',
      amountBtc: '0.001',
      amountSats: '100000',
      paid: { outcome: 'underpaid', arrived: '40000' },
    })
    const en = await renderInvoicePage(short, 'en', OPTS)
    checkBalanced(en)
    expect(textOf(en, 'status-text')).toBe(
      'Paid less than asked: 0.0004 BTC arrived of the 0.001 BTC requested.',
    )
    expect(attr(en, 'status')).toContain('data-outcome="underpaid"')
    expect(textOf(en, 'arrived-label')).toBe('Received')
    expect(textOf(en, 'amount-arrived')).toBe('0.0004 BTC')
    expect(attr(en, 'amount-arrived')).not.toContain('hidden')
    expect(en).not.toContain('data-testid="pay-block"')
    const vi = await renderInvoicePage(
      lightningView({ state: 'paid', paid: { outcome: 'overpaid', arrived: '1250000000' } }),
      'vi',
      OPTS,
    )
    expect(textOf(vi, 'status-text')).toBe(
      'Thanh toán thừa: đã nhận 12,5 BTC, nhiều hơn số tiền yêu cầu 0,0025 BTC.',
    )
    expect(textOf(vi, 'arrived-label')).toBe('Đã nhận')
    expect(textOf(vi, 'amount-arrived')).toBe('12,5 BTC')
  })

  it('keeps the received line hidden and empty when the amount asked arrived', async () => {
    const page = await renderInvoicePage(lightningView({ state: 'paid' }), 'en', OPTS)
    expect(textOf(page, 'status-text')).toBe('Paid. Thank you!')
    expect(attr(page, 'amount-arrived')).toContain('hidden')
    expect(textOf(page, 'amount-arrived')).toBe('')
    expect(attr(page, 'status')).not.toContain('data-outcome')
  })

  it('shows an expired page, also when the caller still says awaiting_payment past the expiry', async () => {
    for (const view of [
      lightningView({ state: 'expired' }),
      lightningView({ expiresAtMs: NOW_MS }),
      lightningView({ expiresAtMs: NOW_MS - 60_000 }),
    ]) {
      const page = await renderInvoicePage(view, 'en', OPTS)
      expect(page).toContain('<body data-state="expired"')
      expect(textOf(page, 'status-text')).toBe('This payment request has expired. Do not pay it.')
      expect(page).not.toContain('data-testid="qr"')
      expect(page).not.toContain(BOLT11_COFFEE)
    }
  })

  it('places the script inline with the nonce when no script URL is given', async () => {
    const { scriptUrl: _unused, ...inline } = OPTS
    const page = await renderInvoicePage(lightningView(), 'en', inline)
    expect(page).toContain(`<script nonce="${NONCE}">${PAGE_SCRIPT}</script>`)
    expect(page.match(/<script\b/g)).toHaveLength(1)
  })

  it('needs nothing the CSP forbids: no style attributes, handlers or foreign URLs', async () => {
    const page = await renderInvoicePage(lightningView(), 'en', OPTS)
    for (const tag of startTags(page)) {
      expect(tag).not.toMatch(/\sstyle=/)
      expect(tag).not.toMatch(/\son\w+=/i)
    }
    expect(page).not.toMatch(/javascript:/i)
    expect(page).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg")/)
    for (const tag of page.match(/<(script|style)\b[^>]*>/g) ?? []) expect(tag).toContain(`nonce="${NONCE}"`)
  })

  it('refuses views that would mislead the payer or run code', async () => {
    const bad = [
      lightningView({ paymentUri: 'javascript:alert(1)' }),
      lightningView({ paymentUri: `bitcoin:${BIP84_ADDRESS}` }),
      onchainView({ paymentUri: `lightning:${BOLT11_COFFEE}` }),
      lightningView({ amountSats: '250001' }),
      lightningView({ amountBtc: '0.00250000001', amountSats: '250000' }),
      lightningView({ amountBtc: '2.5e-3' }),
      lightningView({ fiat: { ccy: '<b>', amount: '1' } }),
      lightningView({ fiat: { ccy: 'USD', amount: '1e3' } }),
      lightningView({ confirmations: { have: -1, need: 3 } }),
      lightningView({ kind: 'bank' as 'lightning' }),
    ]
    for (const view of bad) await expect(renderInvoicePage(view, 'en', OPTS)).rejects.toThrow()
    await expect(
      renderInvoicePage(lightningView(), 'en', { ...OPTS, nonce: 'x" onload="y' }),
    ).rejects.toThrow()
    await expect(renderInvoicePage(lightningView(), 'fr' as 'en', OPTS)).rejects.toThrow()
  })
})

describe('renderInvoicePage for a VND bank transfer (VietQR)', () => {
  /** The QR code's SVG in the page, read back by jsQR. */
  const scanPageQr = (page: string, label: string) => {
    const m = new RegExp(
      `<div class="qr" role="img" aria-label="${label}" data-testid="qr">(<svg [\\s\\S]*?</svg>)</div>`,
    ).exec(page)
    expect(m, 'QR code').not.toBeNull()
    return scanQrSvg(m![1]!)
  }

  it('renders the transfer in English: QR of the exact payload, bank, account, holder, amount, memo', async () => {
    const view = vietQrView()
    const page = await renderInvoicePage(view, 'en', OPTS)
    checkBalanced(page)
    expect(page.startsWith('<!doctype html>\n<html lang="en">')).toBe(true)
    expect(page).toMatch(/<body data-state="awaiting_payment" data-kind="vietqr" /)
    expect(textOf(page, 'method')).toBe('Bank transfer in VND (VietQR)')
    expect(textOf(page, 'amount-vnd')).toBe('500,000 VND')
    expect(page).not.toContain('data-testid="amount-btc"')
    expect(page).not.toContain('data-testid="open-wallet"')
    expect(scanPageQr(page, 'VietQR code of the bank transfer: bank, account, amount and memo')).toBe(
      view.vietQr,
    )
    expect(textOf(page, 'bank-name')).toBe('<bdi>Vietcombank')
    expect(textOf(page, 'account-name')).toBe('<bdi>CONG TY TNHH SVCPAY')
    expect(attr(page, 'account-number')).toContain('value="0011001932418" readonly')
    expect(attr(page, 'transfer-amount')).toContain('value="500000" readonly')
    expect(attr(page, 'memo')).toContain('value="SVCPAY 7F3KQ2" readonly')
    expect(attr(page, 'memo')).toContain('class="payment-text memo"')
    expect(page).toContain('<label class="field-label" for="memo">Transfer memo</label>')
    expect(textOf(page, 'memo-note')).toMatch(/^Include this exact memo/)
    for (const id of ['account-number', 'transfer-amount', 'memo']) {
      const copy = attr(page, `copy-${id}`)
      expect(copy).toContain(`data-copy-for="${id}"`)
      expect(copy).toContain(' hidden>')
    }
    expect(textOf(page, 'status-text')).toBe('Waiting for payment')
    expect(textOf(page, 'time-left')).toBe('15:00')
  })

  it('renders it in Vietnamese with the đồng sign', async () => {
    const page = await renderInvoicePage(vietQrView({ amountVnd: '1250000' }), 'vi', OPTS)
    checkBalanced(page)
    expect(page.startsWith('<!doctype html>\n<html lang="vi">')).toBe(true)
    expect(page).toContain('<title>Thanh toán cho Cà phê Sài Gòn</title>')
    expect(textOf(page, 'method')).toBe('Chuyển khoản ngân hàng bằng VND (VietQR)')
    expect(textOf(page, 'amount-vnd')).toBe('1.250.000 ₫')
    expect(page).toContain('<dt id="bank-label">Ngân hàng</dt>')
    expect(page).toContain('<dt>Chủ tài khoản</dt>')
    expect(page).toContain('<label class="field-label" for="account-number">Số tài khoản</label>')
    expect(page).toContain('<label class="field-label" for="memo">Nội dung chuyển khoản</label>')
    expect(textOf(page, 'memo-note')).toMatch(/^Ghi chính xác nội dung này/)
    expect(page).toContain('>Sao chép</button>')
    expect(textOf(page, 'status-text')).toBe('Đang chờ thanh toán')
    const qrPayload = scanPageQr(
      page,
      'Mã VietQR của giao dịch chuyển khoản: ngân hàng, số tài khoản, số tiền và nội dung',
    )
    expect(qrPayload).toContain('54071250000')
  })

  it('escapes the bank and holder names', async () => {
    const page = await renderInvoicePage(
      vietQrView({ bankName: '<img src=x onerror=alert(1)>', accountName: '"><script>x</script>' }),
      'en',
      OPTS,
    )
    checkBalanced(page)
    expect(page).not.toMatch(/<img|<script>x/)
    expect(textOf(page, 'bank-name')).toBe('<bdi>&lt;img src=x onerror=alert(1)&gt;')
    for (const tag of startTags(page)) expect(tag).not.toMatch(/\son\w+=|\sstyle=/i)
  })

  it('shows no QR code or transfer details once paid or expired', async () => {
    for (const view of [
      vietQrView({ state: 'paid' }),
      vietQrView({ state: 'expired' }),
      vietQrView({ expiresAtMs: NOW_MS }),
    ]) {
      const page = await renderInvoicePage(view, 'en', OPTS)
      expect(page).not.toContain('data-testid="pay-block"')
      expect(page).not.toContain('0011001932418')
      expect(page).not.toContain('SVCPAY 7F3KQ2')
    }
    expect(await renderInvoicePage(vietQrView({ state: 'paid' }), 'en', OPTS)).toContain(
      '<body data-state="paid"',
    )
  })

  it('says a transfer was short or over and shows what arrived, in both languages', async () => {
    const short = vietQrView({ state: 'paid', paid: { outcome: 'underpaid', arrived: '400000' } })
    const en = await renderInvoicePage(short, 'en', OPTS)
    expect(textOf(en, 'amount-vnd')).toBe('500,000 VND')
    expect(textOf(en, 'amount-arrived')).toBe('400,000 VND')
    expect(textOf(en, 'status-text')).toBe(
      'Paid less than asked: 400,000 VND arrived of the 500,000 VND requested.',
    )
    expect(en).not.toContain('Paid. Thank you!')
    const vi = await renderInvoicePage(short, 'vi', OPTS)
    expect(textOf(vi, 'amount-arrived')).toBe('400.000 ₫')
    expect(textOf(vi, 'status-text')).toBe(
      'Thanh toán thiếu: đã nhận 400.000 ₫, ít hơn số tiền yêu cầu 500.000 ₫.',
    )
    const over = vietQrView({ state: 'paid', paid: { outcome: 'overpaid', arrived: '600000' } })
    expect(textOf(await renderInvoicePage(over, 'en', OPTS), 'status-text')).toBe(
      'Paid more than asked: 600,000 VND arrived for the 500,000 VND requested.',
    )
    expect(textOf(await renderInvoicePage(over, 'vi', OPTS), 'status-text')).toBe(
      'Thanh toán thừa: đã nhận 600.000 ₫, nhiều hơn số tiền yêu cầu 500.000 ₫.',
    )
  })

  it('refuses a view whose QR code would not say what the page says', async () => {
    const good = vietQrView()
    const bad = [
      { ...good, memo: 'SVCPAY 7F3KQ3' },
      { ...good, amountVnd: '500001' },
      { ...good, accountNumber: '0011001932419' },
      { ...good, bankBin: '970415' },
      { ...good, vietQr: good.vietQr.slice(0, -4) + '0000' },
      { ...good, amountVnd: '0' },
      { ...good, amountVnd: '0500000' },
      { ...good, amountVnd: '500000.5' },
      { ...good, memo: '' },
      vietQrView({ bankName: ' ' }),
      vietQrView({ accountName: '' }),
    ]
    for (const view of bad) await expect(renderInvoicePage(view, 'en', OPTS)).rejects.toThrow()
  })
})

describe('renderMessagePage', () => {
  it('sends unknown pages with 404, expired ones with 410 and a client over its limit 429', () => {
    expect(MESSAGE_PAGE_STATUS).toEqual({ not_found: 404, expired: 410, too_many_requests: 429 })
  })

  it('renders the too-many-requests message in both languages', () => {
    const en = renderMessagePage('too_many_requests', 'en', { nonce: NONCE })
    checkBalanced(en)
    expect(textOf(en, 'message-title')).toBe('Too many requests')
    expect(textOf(en, 'message-body')).toBe(
      'Too many requests came from your network. Please wait a minute and reload this page.',
    )
    const vi = renderMessagePage('too_many_requests', 'vi', { nonce: NONCE })
    expect(textOf(vi, 'message-title')).toBe('Quá nhiều yêu cầu')
    expect(() => renderMessagePage('toString' as 'expired', 'en')).toThrow()
  })

  it('renders the expired message in both languages', () => {
    const en = renderMessagePage('expired', 'en', { nonce: NONCE })
    checkBalanced(en)
    expect(en).toContain('<html lang="en">')
    expect(textOf(en, 'message-title')).toBe('Payment request expired')
    expect(textOf(en, 'message-body')).toBe(
      'This payment request has expired. Do not pay it; ask the merchant for a new one.',
    )
    const vi = renderMessagePage('expired', 'vi', { nonce: NONCE })
    expect(vi).toContain('<html lang="vi">')
    expect(textOf(vi, 'message-title')).toBe('Yêu cầu thanh toán đã hết hạn')
  })

  it('renders the not-found message without any script', () => {
    const page = renderMessagePage('not_found', 'vi', { nonce: NONCE })
    checkBalanced(page)
    expect(textOf(page, 'message-title')).toBe('Không tìm thấy trang thanh toán')
    expect(page).not.toContain('<script')
    expect(page).toContain(`<style nonce="${NONCE}">`)
    expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
  })

  it('links the stylesheet when given a URL instead of a nonce, and stays readable without either', () => {
    expect(renderMessagePage('not_found', 'en', { stylesheetUrl: '/pay/assets/page.css' })).toContain(
      '<link rel="stylesheet" href="/pay/assets/page.css">',
    )
    const plain = renderMessagePage('not_found', 'en')
    expect(plain).not.toContain('<style')
    expect(textOf(plain, 'message-title')).toBe('Payment page not found')
  })
})

describe('PAGE_SCRIPT', () => {
  it('is valid JavaScript that writes no markup', () => {
    expect(() => new Function(PAGE_SCRIPT)).not.toThrow()
    expect(PAGE_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/)
    expect(PAGE_SCRIPT).not.toContain('</script')
  })

  it('carries the status texts of both languages', () => {
    expect(PAGE_SCRIPT).toContain('"statusPaid":"Paid. Thank you!"')
    expect(PAGE_SCRIPT).toContain('"statusPaid":"Đã thanh toán. Cảm ơn bạn!"')
  })
})
