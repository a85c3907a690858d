import QRCode from 'qrcode'
import { assert } from '../shared/assert.js'

/**
 * QR codes for the invoice page, as inline SVG so the page needs no image request and no script.
 */

/**
 * The longest payment URI we put in a QR code. A version 40 code at level M holds 2,331 bytes;
 * this leaves room and still fits long BOLT11 invoices with routing hints.
 */
export const QR_TEXT_MAX_CHARS = 2000

/** Error correction M (15 %) balances density against damage; a quiet zone of two modules. */
const QR_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M', margin: 2 } as const

/**
 * Render `text` as an SVG QR code, black modules on a white square. The content is exactly `text`
 * (for example `lightning:lnbc...` as issued, or a BIP21 URI), never rewritten, so scanning the
 * code gives back the very string the page shows.
 */
export async function qrSvg(text: string): Promise<string> {
  assert(text.length > 0 && text.length <= QR_TEXT_MAX_CHARS, `QR text length ${text.length} out of range`)
  const svg = await QRCode.toString(text, QR_OPTIONS)
  // The library writes a bare <svg ...>; we rely on that shape when we place it in the page.
  assert(svg.startsWith('<svg ') && svg.trimEnd().endsWith('</svg>'), 'unexpected QR SVG output')
  return svg.trim()
}
