/**
 * VietQR: the NAPAS profile of the EMVCo merchant-presented QR code, built locally. A payload is a
 * string of fields, each an id of two digits, a length of two digits and a value; the last field
 * (63) holds the CRC-16/CCITT-FALSE of everything before it, its own id and length included.
 */

/** NAPAS's application identifier in the merchant account field (tag 38, sub-field 00). */
export const NAPAS_GUID = 'A000000727'
/** The NAPAS service code of a transfer to an account number (a card number would be QRIBFTTC). */
export const TRANSFER_TO_ACCOUNT = 'QRIBFTTA'

export interface VietQrInput {
  /** The receiving bank's six-digit NAPAS BIN. */
  bankBin: string
  /** The receiving account number. */
  accountNumber: string
  /** Whole đồng; left out for a static code the payer fills in. */
  amount?: bigint
  /** The transfer's description (tag 62, sub-field 08, "purpose of transaction"). */
  memo?: string
}

const TAG = {
  formatIndicator: '00',
  pointOfInitiation: '01',
  merchantAccount: '38',
  currency: '53',
  amount: '54',
  country: '58',
  additionalData: '62',
  crc: '63',
} as const

/** The transaction amount (tag 54) is at most 13 characters long (EMV QRCPS, section 4.7). */
const AMOUNT_MAX = 9_999_999_999_999n

/** One field: id, the value's length in two digits, the value. Values are ASCII, at most 99 long. */
function field(id: string, value: string): string {
  if (value.length > 99 || !/^[\x20-\x7e]*$/.test(value))
    throw new RangeError(`VietQR field ${id} cannot hold this value`)
  return `${id}${String(value.length).padStart(2, '0')}${value}`
}

/** CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR. */
export function crc16CcittFalse(text: string): string {
  let crc = 0xffff
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc.toString(16).toUpperCase().padStart(4, '0')
}

/** The payload of a VietQR transfer to an account; dynamic (point of initiation 12) when it has an amount. */
export function encodeVietQr(input: VietQrInput): string {
  if (!/^\d{6}$/.test(input.bankBin)) throw new RangeError('a NAPAS BIN has six digits')
  if (!/^[0-9A-Za-z]{1,19}$/.test(input.accountNumber))
    throw new RangeError('an account number has 1 to 19 letters or digits')
  if (input.amount !== undefined && (input.amount <= 0n || input.amount > AMOUNT_MAX))
    throw new RangeError('a VietQR amount is a positive whole number of at most 13 digits')
  const beneficiary = field('00', input.bankBin) + field('01', input.accountNumber)
  const merchantAccount =
    field('00', NAPAS_GUID) + field('01', beneficiary) + field('02', TRANSFER_TO_ACCOUNT)
  const body =
    field(TAG.formatIndicator, '01') +
    field(TAG.pointOfInitiation, input.amount === undefined ? '11' : '12') +
    field(TAG.merchantAccount, merchantAccount) +
    field(TAG.currency, '704') +
    (input.amount === undefined ? '' : field(TAG.amount, input.amount.toString())) +
    field(TAG.country, 'VN') +
    (input.memo ? field(TAG.additionalData, field('08', input.memo)) : '')
  const withCrcHeader = `${body}${TAG.crc}04`
  return withCrcHeader + crc16CcittFalse(withCrcHeader)
}
