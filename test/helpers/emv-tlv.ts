/**
 * A minimal reader of EMVCo merchant-presented QR payloads (EMV QRCPS, section 4.1: each data
 * object is an id of two digits, a length of two digits and that many characters of value), for
 * tests that read a VietQR payload back field by field. It refuses anything malformed rather than
 * guessing: a truncated object, a length that is not two digits, an id that repeats.
 */

export interface TlvField {
  id: string
  value: string
}

/** The data objects of `text` in order; throws on a malformed or truncated object. */
export function readTlv(text: string): TlvField[] {
  const fields: TlvField[] = []
  let at = 0
  while (at < text.length) {
    const id = text.slice(at, at + 2)
    const lengthText = text.slice(at + 2, at + 4)
    if (!/^\d\d$/.test(id) || !/^\d\d$/.test(lengthText)) throw new Error(`bad data object header at ${at}`)
    const length = Number(lengthText)
    const value = text.slice(at + 4, at + 4 + length)
    if (value.length !== length) throw new Error(`data object ${id} at ${at} is truncated`)
    if (fields.some((f) => f.id === id)) throw new Error(`data object ${id} appears twice`)
    fields.push({ id, value })
    at += 4 + length
  }
  return fields
}

/** The data objects of `text` by id (see `readTlv`). */
export function readTlvMap(text: string): Map<string, string> {
  return new Map(readTlv(text).map((f) => [f.id, f.value]))
}
