import { encodeVietQr } from '../payins/vietqr.js'
import { formatMinor, parseAmount } from '../shared/amount.js'
import { assert } from '../shared/assert.js'
import { markup, raw, type SafeHtml } from './escape.js'
import { formatDecimalText, formatTimeLeft, formatVnd, isDecimalText } from './format.js'
import { isValidNonce } from './headers.js'
import { LANGS, STRINGS, fill, type Lang, type PageStrings } from './i18n.js'
import { PAGE_SCRIPT } from './page-script.js'
import {
  isValidConfirmations,
  isValidPaidAmount,
  type Confirmations,
  type PageState,
  type PaidAmount,
} from './page-status.js'
import { qrSvg } from './qr.js'
import { PAGE_CSS } from './styles.js'

/**
 * Server-side rendering of the hosted invoice page and of its "not found" and "expired" pages.
 * Pure functions of their arguments (and the clock, which can be passed in): the routes fetch the
 * data, pick the language and nonce, and send the result with `pageSecurityHeaders`.
 */

/** What every invoice page shows, whatever the payment method. Nothing here is private to the merchant. */
interface PageViewBase {
  pageId: string
  /** The receiving account's display name. */
  merchantName: string
  expiresAtMs: number
  state: PageState
  /** Paid short or over: what arrived, in the page's minor unit (sats, or đồng). */
  paid?: PaidAmount
}

/** A bitcoin receive, over Lightning or on-chain. */
export interface BitcoinPageView extends PageViewBase {
  kind: 'lightning' | 'onchain'
  /** Exact decimal text, e.g. `0.00012345`. */
  amountBtc: string
  /** Exact integer text, e.g. `12345`. */
  amountSats: string
  /** The amount's value in a fiat currency, exact decimal text, when a rate is known. */
  fiat?: { ccy: string; amount: string }
  /** `lightning:<bolt11>` or a BIP21 `bitcoin:` URI: the QR code's content and the wallet link. */
  paymentUri: string
  /** The bare BOLT11 invoice or address, shown for copying. */
  paymentText: string
  confirmations?: Confirmations
}

/** A receive in đồng by bank transfer, with its VietQR code (src/payins/vietqr.ts). */
export interface VietQrPageView extends PageViewBase {
  kind: 'vietqr'
  /** The receiving bank's NAPAS BIN (in the QR code, not shown). */
  bankBin: string
  bankName: string
  accountNumber: string
  /** The account holder's name as the bank knows it. */
  accountName: string
  /** Whole đồng, integer text. */
  amountVnd: string
  /** The transfer description that identifies the payment; printable ASCII. */
  memo: string
  /** The VietQR payload of exactly these bank, account, amount and memo: the QR code's content. */
  vietQr: string
}

export type InvoicePageView = BitcoinPageView | VietQrPageView

export interface InvoicePageOptions {
  /** The response's CSP nonce (see `createNonce` and `pageSecurityHeaders`). */
  nonce: string
  /** The page's public status stream, same origin (the CSP allows `connect-src 'self'` only). */
  streamUrl: string
  /** Where `PAGE_SCRIPT` is served; without it the script is placed inline with the nonce. */
  scriptUrl?: string
  /** The current time; defaults to the clock. */
  nowMs?: number
}

export type MessagePageKind = 'not_found' | 'expired' | 'too_many_requests'

/** The status code each message page is sent with. */
export const MESSAGE_PAGE_STATUS: Readonly<Record<MessagePageKind, 404 | 410 | 429>> = {
  not_found: 404,
  expired: 410,
  too_many_requests: 429,
}

const MESSAGE_TEXT: Readonly<Record<MessagePageKind, (s: PageStrings) => { title: string; text: string }>> = {
  not_found: (s) => ({ title: s.notFoundTitle, text: s.notFoundBody }),
  expired: (s) => ({ title: s.expiredTitle, text: s.expiredBody }),
  too_many_requests: (s) => ({ title: s.busyTitle, text: s.busyBody }),
}

export interface MessagePageOptions {
  /** Inline the stylesheet with this nonce. */
  nonce?: string
  /** Otherwise link to `PAGE_CSS` served here. Without either the page is plain but readable. */
  stylesheetUrl?: string
}

const PAYMENT_URI_RE = /^(lightning|bitcoin):/i
const FIAT_CCY_RE = /^[A-Z]{3,5}$/
const MERCHANT_NAME_MAX_CHARS = 200
/** Rows of the invoice text box: a BOLT11 invoice is a few hundred characters, an address ~60. */
const TEXT_ROWS: Readonly<Record<BitcoinPageView['kind'], number>> = { lightning: 5, onchain: 3 }
/** Bank and holder names are shown as the bank gives them, up to this length. */
const BANK_TEXT_MAX_CHARS = 200

/**
 * Render the hosted invoice page. Every value of `view` is escaped. The page is complete without
 * JavaScript (amounts, QR code, invoice text, time left, status); the client script makes it live.
 * A page still awaiting payment past its expiry is shown as expired, whatever the caller says.
 */
export async function renderInvoicePage(
  view: InvoicePageView,
  lang: Lang,
  opts: InvoicePageOptions,
): Promise<string> {
  checkView(view)
  assert(LANGS.includes(lang), `unsupported language ${String(lang)}`)
  assert(isValidNonce(opts.nonce), 'invalid CSP nonce')
  const s = STRINGS[lang]
  const nowMs = opts.nowMs ?? Date.now()
  const msLeft = view.expiresAtMs - nowMs
  const state: PageState = view.state === 'awaiting_payment' && msLeft <= 0 ? 'expired' : view.state
  const payable = state === 'awaiting_payment'
  const qr = payable ? raw(await qrSvg(view.kind === 'vietqr' ? view.vietQr : view.paymentUri)) : null
  const merchantName = view.merchantName.slice(0, MERCHANT_NAME_MAX_CHARS)
  const confirmations = state === 'seen' && view.kind !== 'vietqr' ? view.confirmations : undefined
  const paid = state === 'paid' ? view.paid : undefined
  const asked = askedMinor(view)

  const head = pageHead(
    fill(s.pageTitle, { merchant: merchantName }),
    markup`<style nonce="${opts.nonce}">${raw(PAGE_CSS)}</style>
${opts.scriptUrl ? markup`<script src="${opts.scriptUrl}" nonce="${opts.nonce}" defer></script>` : ''}`,
  )

  const summary = markup`<div class="summary">
<header>
<p class="eyebrow">${s.paymentRequest}</p>
<h1 id="page-title" data-testid="merchant-name"><bdi>${merchantName}</bdi></h1>
<p class="method" data-testid="method">${METHOD[view.kind](s)}</p>
</header>
<dl class="amount" data-testid="amount" data-asked="${asked}">
<dt>${s.amountHeading}</dt>
${view.kind === 'vietqr' ? markup`<dd class="amount-main" data-testid="amount-vnd">${formatVnd(view.amountVnd, lang)}</dd>` : bitcoinAmounts(view, s, lang)}
<dt class="arrived" data-testid="arrived-label"${paid ? '' : raw(' hidden')}>${s.arrivedHeading}</dt>
<dd class="amount-arrived" data-testid="amount-arrived"${paid ? '' : raw(' hidden')}>${paid ? moneyText(view.kind, paid.arrived, lang) : ''}</dd>
</dl>
<p class="status" role="status" aria-live="polite" data-testid="status" data-state="${state}"${paid ? markup` data-outcome="${paid.outcome}"` : ''}${confirmations ? markup` data-confirmations="${confirmations.have}/${confirmations.need}"` : ''}><span class="status-dot" aria-hidden="true"></span><span data-testid="status-text">${statusMessage(s, state, confirmations, paid && { ...paid, asked, kind: view.kind, lang })}</span></p>
${payable ? markup`<p class="countdown" data-testid="countdown">${s.timeLeft}: <span class="time-left" data-testid="time-left">${formatTimeLeft(msLeft, lang)}</span></p>` : ''}
${payable ? markup`<noscript><p class="noscript">${s.noScript}</p></noscript>` : ''}
</div>`

  const body = markup`<body data-state="${state}" data-kind="${view.kind}" data-stream-url="${opts.streamUrl}" data-expires-at="${view.expiresAtMs}" data-server-now="${nowMs}">
<main class="card" aria-labelledby="page-title">
${summary}
${qr ? (view.kind === 'vietqr' ? vietQrPaySection(view, s, qr) : paySection(view, s, qr)) : ''}
</main>
${opts.scriptUrl ? '' : markup`<script nonce="${opts.nonce}">${raw(PAGE_SCRIPT)}</script>`}
</body>`

  return document(lang, head, body)
}

const METHOD: Readonly<Record<InvoicePageView['kind'], (s: PageStrings) => string>> = {
  lightning: (s) => s.methodLightning,
  onchain: (s) => s.methodOnchain,
  vietqr: (s) => s.methodVietQr,
}

function bitcoinAmounts(view: BitcoinPageView, s: PageStrings, lang: Lang): SafeHtml {
  const fiat = view.fiat
    ? markup`<dd class="amount-fiat" data-testid="amount-fiat"><span aria-hidden="true">≈ </span><span class="visually-hidden">${s.fiatAbout} </span>${formatDecimalText(view.fiat.amount, lang)} <span class="unit">${view.fiat.ccy}</span></dd>`
    : ''
  return markup`<dd class="amount-main amount-btc" data-testid="amount-btc">${formatDecimalText(view.amountBtc, lang)} <span class="unit">BTC</span></dd>
<dd class="amount-sats" data-testid="amount-sats">${formatDecimalText(view.amountSats, lang)} <span class="unit">${s.sats}</span></dd>
${fiat}`
}

function paySection(view: BitcoinPageView, s: PageStrings, qr: SafeHtml): SafeHtml {
  const lightning = view.kind === 'lightning'
  return markup`<section class="pay" data-testid="pay-block" aria-labelledby="payment-text-label">
<div class="qr" role="img" aria-label="${lightning ? s.qrLabelLightning : s.qrLabelOnchain}" data-testid="qr">${qr}</div>
<p class="hint">${lightning ? s.hintLightning : s.hintOnchain}</p>
<a class="button primary" href="${view.paymentUri}" data-testid="open-wallet">${s.openInWallet}</a>
<label class="field-label" id="payment-text-label" for="payment-text">${lightning ? s.textLabelLightning : s.textLabelOnchain}</label>
<div class="copy-row">
<textarea id="payment-text" class="payment-text" data-testid="payment-text" readonly rows="${TEXT_ROWS[view.kind]}" spellcheck="false" autocapitalize="off" autocomplete="off">${view.paymentText}</textarea>
<button type="button" class="button" data-testid="copy" data-copy-for="payment-text" aria-describedby="copy-feedback" hidden>${s.copy}</button>
</div>
<p id="copy-feedback" class="copy-feedback" data-testid="copy-feedback" aria-live="polite"></p>
</section>`
}

/**
 * The QR code of a bank transfer, and the same details to type in by hand: the bank and holder to
 * check, and the account number, amount and memo to copy. The memo stands out: without it the
 * transfer cannot be matched to this request.
 */
function vietQrPaySection(view: VietQrPageView, s: PageStrings, qr: SafeHtml): SafeHtml {
  const copyRow = (
    id: string,
    label: string,
    value: string,
    extraClass = '',
  ) => markup`<label class="field-label" for="${id}">${label}</label>
<div class="copy-row">
<input id="${id}" class="payment-text${extraClass}" data-testid="${id}" type="text" value="${value}" readonly spellcheck="false" autocapitalize="off" autocomplete="off">
<button type="button" class="button" data-testid="copy-${id}" data-copy-for="${id}" aria-describedby="copy-feedback" hidden>${s.copy}</button>
</div>`
  return markup`<section class="pay" data-testid="pay-block" aria-labelledby="bank-label">
<div class="qr" role="img" aria-label="${s.qrLabelVietQr}" data-testid="qr">${qr}</div>
<p class="hint">${s.hintVietQr}</p>
<dl class="transfer">
<dt id="bank-label">${s.bankLabel}</dt>
<dd data-testid="bank-name"><bdi>${view.bankName.slice(0, BANK_TEXT_MAX_CHARS)}</bdi></dd>
<dt>${s.accountNameLabel}</dt>
<dd data-testid="account-name"><bdi>${view.accountName.slice(0, BANK_TEXT_MAX_CHARS)}</bdi></dd>
</dl>
${copyRow('account-number', s.accountNumberLabel, view.accountNumber)}
${copyRow('transfer-amount', s.transferAmountLabel, view.amountVnd)}
${copyRow('memo', s.memoLabel, view.memo, ' memo')}
<p class="memo-note" data-testid="memo-note">${s.memoNote}</p>
<p id="copy-feedback" class="copy-feedback" data-testid="copy-feedback" aria-live="polite"></p>
</section>`
}

/** The amount a page asks for, in its minor unit (sats, or đồng): the page script reads it too. */
function askedMinor(view: InvoicePageView): string {
  return view.kind === 'vietqr' ? view.amountVnd : view.amountSats
}

/**
 * An amount in the page's minor unit as the language writes it, unit included: `0.0004 BTC`, or
 * `400,000 VND` / `400.000 ₫`. The page script writes the same (page-script.ts).
 */
function moneyText(kind: InvoicePageView['kind'], minor: string, lang: Lang): string {
  if (kind === 'vietqr') return formatVnd(minor, lang)
  return `${formatDecimalText(formatMinor(BigInt(minor), 'BTC'), lang)} BTC`
}

function statusMessage(
  s: PageStrings,
  state: PageState,
  confirmations: Confirmations | undefined,
  paid?: PaidAmount & { asked: string; kind: InvoicePageView['kind']; lang: Lang },
): string {
  switch (state) {
    case 'awaiting_payment':
      return s.statusAwaiting
    case 'seen':
      return confirmations ? fill(s.statusSeenConfirmations, { ...confirmations }) : s.statusSeen
    case 'paid':
      if (paid)
        return fill(paid.outcome === 'underpaid' ? s.statusUnderpaid : s.statusOverpaid, {
          arrived: moneyText(paid.kind, paid.arrived, paid.lang),
          asked: moneyText(paid.kind, paid.asked, paid.lang),
        })
      return s.statusPaid
    case 'expired':
      return s.statusExpired
  }
}

/**
 * Render the page for an unknown link (send with status 404), an expired one (410) or a client
 * over its request limit (429), see `MESSAGE_PAGE_STATUS`. It holds no script and nothing about
 * any payment.
 */
export function renderMessagePage(kind: MessagePageKind, lang: Lang, opts: MessagePageOptions = {}): string {
  assert(Object.hasOwn(MESSAGE_TEXT, kind), `unknown message page ${String(kind)}`)
  assert(LANGS.includes(lang), `unsupported language ${String(lang)}`)
  assert(opts.nonce === undefined || isValidNonce(opts.nonce), 'invalid CSP nonce')
  const { title, text } = MESSAGE_TEXT[kind](STRINGS[lang])
  const style = opts.nonce
    ? markup`<style nonce="${opts.nonce}">${raw(PAGE_CSS)}</style>`
    : opts.stylesheetUrl
      ? markup`<link rel="stylesheet" href="${opts.stylesheetUrl}">`
      : ''
  const head = pageHead(title, style)
  const body = markup`<body data-message="${kind}">
<main class="card message" aria-labelledby="page-title">
<h1 id="page-title" data-testid="message-title">${title}</h1>
<p data-testid="message-body">${text}</p>
</main>
</body>`
  return document(lang, head, body)
}

/** The head every hosted page shares: its metadata and title, then what the page adds (style, script). */
export function pageHead(title: string, rest: SafeHtml | ''): SafeHtml {
  return markup`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="icon" href="data:,">
${rest}`
}

/** A whole page: the doctype, `<html lang>`, head and body. */
export function document(lang: Lang, head: SafeHtml, body: SafeHtml): string {
  return markup`<!doctype html>
<html lang="${lang}">
<head>
${head}
</head>
${body}
</html>
`.html
}

/** Reject views that would render a broken or misleading page; these are bugs in the caller. */
function checkView(view: InvoicePageView): void {
  assert(Object.hasOwn(METHOD, view.kind), `unknown page kind ${String(view.kind)}`)
  assert(Number.isSafeInteger(view.expiresAtMs), 'expiresAtMs must be an integer')
  assert(view.paid === undefined || isValidPaidAmount(view.paid), 'paid amount out of range')
  if (view.kind === 'vietqr') checkVietQrView(view)
  else checkBitcoinView(view)
}

function checkBitcoinView(view: BitcoinPageView): void {
  assert(isDecimalText(view.amountBtc), 'amountBtc must be decimal text')
  assert(/^\d+$/.test(view.amountSats) && view.amountSats.length <= 20, 'amountSats must be integer text')
  // Two amounts that disagree would leave the payer guessing which one to send.
  const btc = parseAmount(view.amountBtc, 'BTC')
  assert(btc.ok && btc.minor === BigInt(view.amountSats), 'amountBtc and amountSats disagree')
  if (view.fiat) {
    assert(FIAT_CCY_RE.test(view.fiat.ccy), 'fiat.ccy must be a currency code')
    assert(isDecimalText(view.fiat.amount), 'fiat.amount must be decimal text')
  }
  // Only payment schemes may become a link: a `javascript:` URI here would run in the page.
  const scheme = PAYMENT_URI_RE.exec(view.paymentUri)?.[1]?.toLowerCase()
  assert(
    scheme === (view.kind === 'lightning' ? 'lightning' : 'bitcoin'),
    'paymentUri scheme does not match kind',
  )
  assert(view.paymentText.length > 0 && view.paymentText.length <= 2000, 'paymentText length out of range')
  assert(
    view.confirmations === undefined || isValidConfirmations(view.confirmations),
    'confirmations out of range',
  )
}

function checkVietQrView(view: VietQrPageView): void {
  assert(/^[1-9]\d{0,12}$/.test(view.amountVnd), 'amountVnd must be a positive whole number of đồng')
  assert(view.bankName.trim().length > 0, 'bankName is empty')
  assert(view.accountName.trim().length > 0, 'accountName is empty')
  assert(view.memo.length > 0, 'memo is empty')
  // The QR code and the details beside it must say the same thing, or the payer would pay one and
  // read another: the payload is rebuilt from the details and must be the very same string.
  const expected = encodeVietQr({
    bankBin: view.bankBin,
    accountNumber: view.accountNumber,
    amount: BigInt(view.amountVnd),
    memo: view.memo,
  })
  assert(view.vietQr === expected, 'vietQr does not encode the bank, account, amount and memo shown')
}
