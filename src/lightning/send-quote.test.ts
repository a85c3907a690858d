import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { encodeInvoice } from './bolt11.js'
import type { Network } from '../config/network.js'
import type { CreateInput } from '../transactions/flow.js'
import { isFlowRefusal, refusalApiError } from '../transactions/errors.js'
import { invoiceAmountSats, parseInvoice, PAYMENT_REQUEST_FIELD, routingFeeLimitSats } from './send-quote.js'
import { asAccountId } from '../shared/ids.js'

/** The pure parts of a Lightning send's quote: the routing-fee limit and the invoice check. */

const NODE_KEY = new Uint8Array(32).fill(3)
const HASH = sha256(utf8ToBytes('lightning-send-quote'))
const ISSUED_SEC = 1_800_000_000
const EXPIRY_SEC = 600
const EXPIRES_AT_MS = (ISSUED_SEC + EXPIRY_SEC) * 1000

const invoice = (network: Network) =>
  encodeInvoice(
    {
      network,
      amountMsat: 5_000_000n,
      paymentHash: HASH,
      paymentSecret: new Uint8Array(32).fill(9),
      description: 'quote test',
      expirySeconds: EXPIRY_SEC,
      timestampSec: ISSUED_SEC,
    },
    NODE_KEY,
  )

const send = (paymentRequest: string): CreateInput => ({
  accountId: asAccountId('acc_x'),
  deductNetworkFeesFromDest: false,
  sourceReq: { ccy: 'BTC', method: 'svcpay' },
  destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
})

/** The issue of the field error `parse` returns, as the service answers it. */
function refusal(parse: () => ReturnType<typeof parseInvoice>): string {
  const parsed = parse()
  if (!isFlowRefusal(parsed)) throw new Error('expected the invoice to be refused')
  const { code, details } = refusalApiError(parsed)
  expect(code).toBe('invalid_payment_request')
  expect(details?.[0]?.field).toBe(PAYMENT_REQUEST_FIELD)
  return details?.[0]?.issue ?? ''
}

describe('routingFeeLimitSats', () => {
  it('is 10 sats up to 2,000 sats, then 0.5% rounded up', () => {
    expect(routingFeeLimitSats(1n)).toBe(10n)
    expect(routingFeeLimitSats(2_000n)).toBe(10n)
    expect(routingFeeLimitSats(2_001n)).toBe(11n)
    expect(routingFeeLimitSats(2_200n)).toBe(11n)
    expect(routingFeeLimitSats(2_201n)).toBe(12n)
    expect(routingFeeLimitSats(100_000_000n)).toBe(500_000n)
  })
})

describe('parseInvoice', () => {
  const text = invoice('regtest')

  it('takes an upper-case invoice behind a lightning: scheme, and stores it lower case', () => {
    const parsed = parseInvoice('regtest', send(`  LIGHTNING:${text.toUpperCase()} `), EXPIRES_AT_MS - 1)
    if (isFlowRefusal(parsed)) throw new Error('expected the invoice to be taken')
    expect(parsed.text).toBe(text)
    expect(parsed.decoded).toMatchObject({ paymentHash: bytesToHex(HASH), amountMsat: 5_000_000n })
  })

  it('refuses a missing, a mixed-case, a foreign-network and an expired invoice', () => {
    expect(refusal(() => parseInvoice('regtest', send(' '), 0))).toBe('is required: a BOLT11 invoice')
    const mixed = text.slice(0, 10).toUpperCase() + text.slice(10)
    expect(refusal(() => parseInvoice('regtest', send(mixed), 0))).toMatch(/^mixed case/)
    expect(refusal(() => parseInvoice('mainnet', send(text), 0))).toBe(
      'the invoice is for regtest; this service runs on mainnet',
    )
    expect(refusal(() => parseInvoice('regtest', send(text), EXPIRES_AT_MS))).toBe('the invoice has expired')
    expect(refusal(() => parseInvoice('regtest', send(text.slice(0, -1)), 0))).not.toBe('')
  })
})

describe('invoiceAmountSats', () => {
  const dest = (minor: bigint) => ({ side: 'dest' as const, minor })
  const code = (result: bigint | { code: string }) => (typeof result === 'bigint' ? result : result.code)

  it("takes the invoice's own amount, which a requested amount must match", () => {
    expect(invoiceAmountSats(5_000_000n, undefined, false)).toBe(5_000n)
    expect(invoiceAmountSats(5_000_000n, dest(5_000n), false)).toBe(5_000n)
    expect(code(invoiceAmountSats(5_000_000n, dest(4_999n), false))).toBe('amount_not_invoice_amount')
    expect(code(invoiceAmountSats(5_000_001n, undefined, false))).toBe('invoice_fractional_sat')
    expect(invoiceAmountSats(5_000_000n, undefined, true)).toMatchObject({
      code: 'deduct_from_fixed_amount',
      error: 'invalid_request',
    })
  })

  it('takes the requested amount for an invoice without one, and needs it', () => {
    expect(invoiceAmountSats(null, dest(7n), false)).toBe(7n)
    expect(invoiceAmountSats(null, undefined, false)).toMatchObject({
      code: 'amount_missing',
      error: 'invalid_payment_request',
    })
  })

  it('names the field the amount came in', () => {
    const refused = invoiceAmountSats(5_000_000n, { side: 'src', minor: 1n }, false)
    expect(typeof refused !== 'bigint' && refused.details).toEqual([
      { field: 'sourceReq.amtRequested', issue: 'does not match the invoice amount of 0.00005 BTC' },
    ])
  })
})
