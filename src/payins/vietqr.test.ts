import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { QRPay } from 'vietnam-qr-pay'
import { describe, expect, it } from 'vitest'
import { readTlv, readTlvMap } from '../../test/helpers/emv-tlv.js'
import { NAPAS_GUID, TRANSFER_TO_ACCOUNT, crc16CcittFalse, encodeVietQr, type VietQrInput } from './vietqr.js'

interface Vector {
  name: string
  bankBin: string
  accountNumber: string
  amount?: string
  memo?: string
  payload: string
}

/** Made by scripts/vietqr-vectors.ts with vietnam-qr-pay, an independent implementation. */
const VECTORS = JSON.parse(readFileSync(new URL('./vietqr.vectors.json', import.meta.url), 'utf8')) as {
  source: string
  cases: Vector[]
}

const inputOf = (v: Omit<Vector, 'name' | 'payload'>): VietQrInput => ({
  bankBin: v.bankBin,
  accountNumber: v.accountNumber,
  ...(v.amount === undefined ? {} : { amount: BigInt(v.amount) }),
  ...(v.memo === undefined ? {} : { memo: v.memo }),
})

/** What vietnam-qr-pay builds from the same input. */
const theirs = (input: VietQrInput): string =>
  QRPay.initVietQR({
    bankBin: input.bankBin,
    bankNumber: input.accountNumber,
    ...(input.amount === undefined ? {} : { amount: input.amount.toString() }),
    ...(input.memo === undefined ? {} : { purpose: input.memo }),
  }).build()

/** Read a payload back field by field with our own TLV reader, checking every field's place and value. */
function decodeOurs(payload: string) {
  const fields = readTlv(payload)
  const root = new Map(fields.map((f) => [f.id, f.value]))
  // Fixed order: 00 first, the CRC last and covering everything before its own value.
  expect(fields[0]?.id).toBe('00')
  expect(fields.at(-1)?.id).toBe('63')
  expect(payload.slice(-8, -4)).toBe('6304')
  expect(root.get('63')).toBe(crc16CcittFalse(payload.slice(0, -4)))
  const account = readTlvMap(root.get('38')!)
  const beneficiary = readTlvMap(account.get('01')!)
  const additional = root.has('62') ? readTlvMap(root.get('62')!) : new Map<string, string>()
  return {
    ids: fields.map((f) => f.id),
    formatIndicator: root.get('00'),
    pointOfInitiation: root.get('01'),
    guid: account.get('00'),
    accountIds: [...account.keys()],
    bankBin: beneficiary.get('00'),
    accountNumber: beneficiary.get('01'),
    beneficiaryIds: [...beneficiary.keys()],
    serviceCode: account.get('02'),
    currency: root.get('53'),
    amount: root.get('54'),
    country: root.get('58'),
    memo: additional.get('08'),
    additionalIds: [...additional.keys()],
  }
}

describe('crc16CcittFalse', () => {
  it('gives the catalogued check value of CRC-16/CCITT-FALSE', () => {
    // Greg Cook's CRC catalogue, CRC-16/IBM-3740 (alias CCITT-FALSE): check = 0x29B1.
    expect(crc16CcittFalse('123456789')).toBe('29B1')
    expect(crc16CcittFalse('')).toBe('FFFF')
  })

  it('pads to four hex digits', () => {
    // Some short input has a CRC below 0x1000; its text must still have four digits.
    const small = Array.from({ length: 5000 }, (_, i) => `x${i}`).find(
      (t) => parseInt(crc16CcittFalse(t), 16) < 0x1000,
    )!
    expect(crc16CcittFalse(small)).toMatch(/^0[0-9A-F]{3}$/)
  })
})

describe('encodeVietQr against the committed vectors', () => {
  it('has vectors from an independent implementation', () => {
    expect(VECTORS.source).toMatch(/vietnam-qr-pay/)
    expect(VECTORS.cases.length).toBeGreaterThanOrEqual(12)
  })

  it.each(VECTORS.cases.map((v) => [v.name, v] as const))('%s: byte for byte', (_name, v) => {
    const payload = encodeVietQr(inputOf(v))
    expect(payload).toBe(v.payload)
    // The CRC field is the CRC of everything before its value, its own id and length included.
    expect(payload.slice(-4)).toBe(crc16CcittFalse(payload.slice(0, -4)))
  })

  it.each(VECTORS.cases.map((v) => [v.name, v] as const))('%s: read back field by field', (_name, v) => {
    const d = decodeOurs(encodeVietQr(inputOf(v)))
    const dynamic = v.amount !== undefined
    expect(d.ids).toEqual([
      '00',
      '01',
      '38',
      '53',
      ...(dynamic ? ['54'] : []),
      '58',
      ...(v.memo ? ['62'] : []),
      '63',
    ])
    expect(d.formatIndicator).toBe('01')
    expect(d.pointOfInitiation).toBe(dynamic ? '12' : '11')
    expect(d.accountIds).toEqual(['00', '01', '02'])
    expect(d.guid).toBe(NAPAS_GUID)
    expect(d.guid).toBe('A000000727')
    expect(d.beneficiaryIds).toEqual(['00', '01'])
    expect(d.bankBin).toBe(v.bankBin)
    expect(d.accountNumber).toBe(v.accountNumber)
    expect(d.serviceCode).toBe(TRANSFER_TO_ACCOUNT)
    expect(d.serviceCode).toBe('QRIBFTTA')
    expect(d.currency).toBe('704')
    expect(d.amount).toBe(v.amount)
    expect(d.country).toBe('VN')
    expect(d.memo).toBe(v.memo)
    expect(d.additionalIds).toEqual(v.memo ? ['08'] : [])
  })

  it.each(VECTORS.cases.map((v) => [v.name, v] as const))(
    '%s: vietnam-qr-pay decodes it alike',
    (_name, v) => {
      const qr = new QRPay(encodeVietQr(inputOf(v)))
      expect(qr.isValid).toBe(true)
      expect(qr.version).toBe('01')
      expect(qr.initMethod).toBe(v.amount === undefined ? '11' : '12')
      expect(qr.provider.guid).toBe(NAPAS_GUID)
      expect(qr.provider.service).toBe(TRANSFER_TO_ACCOUNT)
      expect(qr.consumer.bankBin).toBe(v.bankBin)
      expect(qr.consumer.bankNumber).toBe(v.accountNumber)
      expect(qr.currency).toBe('704')
      expect(qr.amount).toBe(v.amount)
      expect(qr.nation).toBe('VN')
      expect(qr.additionalData.purpose).toBe(v.memo)
    },
  )

  it('a payload with one character changed fails its CRC', () => {
    const payload = VECTORS.cases[3]!.payload
    const tampered = payload.replace('10000', '90000')
    expect(new QRPay(tampered).isValid).toBe(false)
    expect(tampered.slice(-4)).not.toBe(crc16CcittFalse(tampered.slice(0, -4)))
  })
})

/** Inputs encodeVietQr accepts: printable ASCII memos that fit tag 62 (95 characters). */
const validInput = fc.record(
  {
    bankBin: fc.stringMatching(/^\d{6}$/),
    accountNumber: fc.stringMatching(/^[0-9A-Za-z]{1,19}$/),
    amount: fc.bigInt({ min: 1n, max: 999_999_999_999n }),
    memo: fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 95,
    }),
  },
  { requiredKeys: ['bankBin', 'accountNumber'] },
)

describe('encodeVietQr against vietnam-qr-pay on random inputs', () => {
  it('builds the same payload, which both decoders read back', () => {
    fc.assert(
      fc.property(validInput, (input) => {
        const payload = encodeVietQr(input)
        expect(payload).toBe(theirs(input))
        const d = decodeOurs(payload)
        expect(d.bankBin).toBe(input.bankBin)
        expect(d.accountNumber).toBe(input.accountNumber)
        expect(d.amount).toBe(input.amount?.toString())
        expect(d.memo).toBe(input.memo)
        expect(new QRPay(payload).isValid).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})

describe('encodeVietQr refusals', () => {
  const ok: VietQrInput = {
    bankBin: '970436',
    accountNumber: '0011001932418',
    amount: 500_000n,
    memo: 'SVCPAY 1',
  }

  it('accepts the base input', () => {
    expect(() => encodeVietQr(ok)).not.toThrow()
  })

  it.each([['97043'], ['9704361'], ['97043A'], [''], [' 970436']])('refuses the BIN %j', (bankBin) => {
    expect(() => encodeVietQr({ ...ok, bankBin })).toThrow(RangeError)
  })

  it.each([[''], ['1'.repeat(20)], ['0011-0019'], ['0011 0019'], ['0011001932418\n'], ['số123']])(
    'refuses the account number %j',
    (accountNumber) => {
      expect(() => encodeVietQr({ ...ok, accountNumber })).toThrow(RangeError)
    },
  )

  it.each([['Chuyển tiền'], ['tab\there'], ['line\nbreak'], ['emoji 😀'], ['del\x7f']])(
    'refuses the memo %j: the memo must be printable ASCII (strip accents first)',
    (memo) => {
      expect(() => encodeVietQr({ ...ok, memo })).toThrow(RangeError)
    },
  )

  it('refuses a memo longer than tag 62 can hold (95 characters, 99 with its own id and length)', () => {
    expect(() => encodeVietQr({ ...ok, memo: 'M'.repeat(95) })).not.toThrow()
    expect(() => encodeVietQr({ ...ok, memo: 'M'.repeat(96) })).toThrow(RangeError)
  })

  it.each([[0n], [-1n], [-500_000n]])('refuses the amount %s', (amount) => {
    expect(() => encodeVietQr({ ...ok, amount })).toThrow(RangeError)
  })

  it('refuses an amount longer than the 13 characters of tag 54', () => {
    expect(() => encodeVietQr({ ...ok, amount: 9_999_999_999_999n })).not.toThrow()
    expect(() => encodeVietQr({ ...ok, amount: 10_000_000_000_000n })).toThrow(RangeError)
  })
})
