import { Readable } from 'node:stream'

/**
 * CSV as RFC 4180 writes it (CRLF line ends; a field holding a comma, a quote or a line break is
 * quoted, its quotes doubled), made safe to open in a spreadsheet: a text field that would start a
 * formula (FORMULA_START: = + - @ | or a tab or line break, also behind leading blanks and in their
 * full-width forms) gets an apostrophe in front, as OWASP's "CSV Injection" page recommends. Numbers are not text: `csvNumber` writes a decimal as it
 * is, so that a negative amount stays the number -1.5 rather than the text '-1.5. Only strings that
 * are exact decimals are accepted there, so nothing else can reach a cell unprefixed.
 */
export class CsvNumber {
  constructor(readonly text: string) {
    if (!/^-?[0-9]+(\.[0-9]+)?$/.test(text)) throw new RangeError(`not a decimal number: ${text}`)
  }
}

export const csvNumber = (text: string): CsvNumber => new CsvNumber(text)

/**
 * A text a spreadsheet may run: after any leading blanks (spaces, tabs, NBSP and the other Unicode
 * spaces, which spreadsheets skip before a formula), one of = + - @, their full-width and small
 * forms (＝ ＋ － ＠ ﹦ ﹢ ﹣, which some read as the ASCII ones), a pipe (a DDE call), or a line break.
 */
const FORMULA_START =
  /^(?:[\t\r\n]|[\s\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]*[=+\-@|\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\uff5c])/u

/** One field: null and undefined are empty; objects are written as JSON; strings made inert. */
export function csvField(value: unknown): string {
  if (value instanceof CsvNumber) return value.text
  let text =
    value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value)
  if (FORMULA_START.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

export function csvLine(fields: readonly unknown[]): string {
  return fields.map(csvField).join(',') + '\r\n'
}

/**
 * A CSV document as a stream: the header line, then each batch of rows as one chunk. Batches are
 * pulled only when the reader wants more (Readable.from waits for the consumer), so a slow client
 * holds the producer at its current batch and memory stays at about one batch however long the
 * export; when the client goes away the stream is destroyed and the producer's generator returns.
 */
export function csvStream(header: readonly string[], batches: AsyncIterable<unknown[][]>): Readable {
  async function* lines(): AsyncGenerator<string> {
    yield csvLine(header)
    for await (const rows of batches) if (rows.length > 0) yield rows.map(csvLine).join('')
  }
  return Readable.from(lines(), { objectMode: false, highWaterMark: 64 * 1024 })
}
