import { assert } from '../shared/assert.js'
import { markup, raw } from './escape.js'
import { isValidNonce } from './headers.js'
import { LANGS, STRINGS, fill, type Lang } from './i18n.js'
import { qrSvg } from './qr.js'
import { document, pageHead } from './render.js'
import { PAGE_CSS } from './styles.js'

/** What the hosted page of a Lightning Address shows: nothing about the account behind it. */
export interface LnAddressPageView {
  username: string
  /** `username@domain`, or undefined where no address is advertised (lnurl.ts, addressDomain). */
  address: string | undefined
  /** The LUD-01 LNURL of the address, upper case (denser in a QR code). */
  lnurl: string
}

/**
 * The hosted page of a Lightning Address (`/pay/ln/{username}`), for a customer who scans: a QR
 * code of its LNURL (LUD-01, upper case) with a link that opens a wallet, and a QR code and the
 * text of the address itself (LUD-16) where one is advertised; otherwise the LNURL alone, under
 * the username (LUD-16 has no port, so `user@localhost:8080` is no address). The amount is chosen in the wallet, so the page has no
 * status and no script. Every value is escaped.
 */
export async function renderLnAddressPage(
  view: LnAddressPageView,
  lang: Lang,
  nonce: string,
): Promise<string> {
  assert(LANGS.includes(lang), `unsupported language ${String(lang)}`)
  assert(isValidNonce(nonce), 'invalid CSP nonce')
  assert(/^LNURL1[02-9AC-HJ-NP-Z]+$/.test(view.lnurl), 'lnurl must be an upper-case LNURL')
  const s = STRINGS[lang]
  const { address } = view
  const title = fill(s.lnAddressTitle, { address: address ?? view.username })
  const head = pageHead(title, markup`<style nonce="${nonce}">${raw(PAGE_CSS)}</style>`)
  const body = markup`<body data-kind="ln-address">
<main class="card" aria-labelledby="page-title">
<div class="summary">
<header>
<p class="eyebrow">${address === undefined ? s.lnurlText : s.lnAddressText}</p>
<h1 id="page-title" data-testid="address"><bdi>${address ?? view.username}</bdi></h1>
<p class="method" data-testid="method">${s.lnAddressMethod}</p>
</header>
</div>
<section class="pay" data-testid="pay-block" aria-labelledby="lnurl-label">
<div class="qr" role="img" aria-label="${s.lnAddressQrLnurl}" data-testid="qr-lnurl">${raw(await qrSvg(view.lnurl))}</div>
<p class="hint">${s.lnAddressHint}</p>
<a class="button primary" href="lightning:${view.lnurl}" data-testid="open-wallet">${s.openInWallet}</a>
<label class="field-label" id="lnurl-label" for="lnurl-text">${s.lnurlText}</label>
<textarea id="lnurl-text" class="payment-text" data-testid="lnurl-text" readonly rows="4" spellcheck="false" autocapitalize="off" autocomplete="off">${view.lnurl}</textarea>
${address === undefined ? '' : await addressBlock(address, lang)}
</section>
</main>
</body>`
  return document(lang, head, body)
}

/** The QR code and the text of the address itself. */
async function addressBlock(address: string, lang: Lang) {
  const s = STRINGS[lang]
  return markup`<div class="qr" role="img" aria-label="${s.lnAddressQrAddress}" data-testid="qr-address">${raw(await qrSvg(address))}</div>
<label class="field-label" id="address-label" for="address-text">${s.lnAddressText}</label>
<textarea id="address-text" class="payment-text" data-testid="address-text" readonly rows="1" spellcheck="false" autocapitalize="off" autocomplete="off">${address}</textarea>`
}
