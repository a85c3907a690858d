/**
 * HTML escaping for the hosted invoice page. Every value that reaches the page from outside this
 * folder (merchant name, invoice text, URLs) goes through `escapeHtml`, either directly or through
 * the `markup` tagged template, which escapes every interpolation unless it is marked `raw`.
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/**
 * Escape text for use both in element content and in a quoted attribute value. Quotes of both
 * kinds are escaped so the result is safe whichever quote the attribute uses.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
}

/** Markup that is already safe to place in a page as it is. */
export class SafeHtml {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html
  }
}

/**
 * Mark trusted markup (our own CSS, script and the QR code SVG) as safe. Never pass it anything that
 * contains outside text.
 */
export function raw(trusted: string): SafeHtml {
  return new SafeHtml(trusted)
}

/** Values an `markup` template accepts: text is escaped, `SafeHtml` kept, empty values dropped. */
export type HtmlValue =
  SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[]

function toHtml(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.html
  if (value === null || value === undefined || value === false || value === true) return ''
  if (Array.isArray(value)) return value.map((v: HtmlValue) => toHtml(v)).join('')
  return escapeHtml(String(value))
}

/**
 * Tagged template that escapes every interpolated value. (It is not named `html` so that code
 * formatters leave the exact markup alone.) Escaping by default means a forgotten
 * call cannot open a hole; only `raw(...)` and nested `markup` results pass through unchanged.
 */
export function markup(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += toHtml(values[i]) + strings[i + 1]!
  return new SafeHtml(out)
}
