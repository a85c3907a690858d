/** The LND rail's pure parts, called alone: answers read, refusals named, messages mapped. */
import { describe, expect, it } from 'vitest'

import { RailFailure, type RailCheckReport } from '../../rails/rail.js'
import { formatMsatAsBtc, probeVerdict, readNodeInfo } from './lnd-check.js'
import { lndFailure, readLndAnswer } from './lnd-http.js'
import { invoiceState, issuedInvoice } from './lnd-invoices.js'
import { paymentState, sendRefusal } from './lnd-payments.js'

const what = 'LND POST /v2/router'

describe('readLndAnswer', () => {
  it('reads a unary answer bare, and an empty success as an empty object', () => {
    expect(readLndAnswer(what, 200, '{"a":"1"}', false)).toEqual({ ok: { a: '1' } })
    expect(readLndAnswer(what, 200, '  ', false)).toEqual({ ok: {} })
  })

  it("unwraps a stream line's result or error, and refuses a line with neither", () => {
    expect(readLndAnswer(what, 200, '{"result":{"status":"IN_FLIGHT"}}', true)).toEqual({
      ok: { status: 'IN_FLIGHT' },
    })
    expect(readLndAnswer(what, 200, '{"error":{"code":2,"message":"boom"}}', true)).toEqual({
      error: { status: 200, code: 2, message: 'boom' },
    })
    expect(() => readLndAnswer(what, 200, '{"status":"IN_FLIGHT"}', true)).toThrow(
      /stream line without result/,
    )
  })

  it("reports a proxy's page or an empty refusal as an error without a gRPC code", () => {
    expect(readLndAnswer(what, 502, '<html>bad gateway</html>', false)).toEqual({
      error: { status: 502, code: undefined, message: 'HTTP 502' },
    })
    expect(readLndAnswer(what, 503, '', false)).toEqual({
      error: { status: 503, code: undefined, message: 'HTTP 503 with no body' },
    })
    expect(() => readLndAnswer(what, 200, '<html>', false)).toThrow(RailFailure)
  })

  it("keeps LND's gRPC code and message", () => {
    expect(readLndAnswer(what, 404, '{"code":5,"message":"not found"}', false)).toEqual({
      error: { status: 404, code: 5, message: 'not found' },
    })
    expect(readLndAnswer(what, 500, '{"code":2}', false)).toEqual({
      error: { status: 500, code: 2, message: 'HTTP 500' },
    })
  })
})

describe('lndFailure and sendRefusal', () => {
  it('names an unauthorized refusal for good and a node not ready retryably', () => {
    expect(lndFailure({ status: 500, code: 2, message: 'verification failed' }, 'x')).toMatchObject({
      code: 'unauthorized',
      retryable: false,
    })
    expect(lndFailure({ status: 503, code: 14, message: 'unavailable' }, 'x')).toMatchObject({
      code: 'node_error',
      retryable: true,
    })
    expect(lndFailure({ status: 500, code: 2, message: 'nope' }, 'send')).toMatchObject({
      code: 'node_error',
      retryable: false,
      message: 'send: nope',
    })
  })

  it("gives SendPaymentV2's own refusals their reason codes, and leaves the rest", () => {
    const refusal = (message: string) => {
      const err = { status: 500, code: 2, message }
      return sendRefusal(err, lndFailure(err, 'send payment')).code
    }
    expect(refusal('invoice expired. Valid until ...')).toBe('invoice_expired')
    expect(refusal('self-payments not allowed')).toBe('self_payment')
    expect(refusal('invoice not for current active network')).toBe('invalid_invoice')
    expect(refusal('amount must not be specified')).toBe('amount_mismatch')
    expect(refusal('something else')).toBe('node_error')
    const transient = { status: 503, code: 14, message: 'invoice expired' }
    expect(sendRefusal(transient, lndFailure(transient, 'send payment'))).toMatchObject({
      code: 'node_error',
      retryable: true,
    })
  })
})

describe('paymentState', () => {
  it('reads each status of an lnrpc.Payment', () => {
    const preimage = 'ab'.repeat(32)
    expect(paymentState({ status: 'SUCCEEDED', payment_preimage: preimage, fee_msat: '1500' })).toEqual({
      status: 'succeeded',
      preimage,
      feeMsat: 1500n,
    })
    expect(paymentState({ status: 'FAILED', failure_reason: 'FAILURE_REASON_NO_ROUTE' })).toEqual({
      status: 'failed',
      reason: 'route_not_found',
    })
    expect(paymentState({ status: 'FAILED', failure_reason: 'FAILURE_REASON_NEW' })).toEqual({
      status: 'failed',
      reason: 'error',
    })
    expect(paymentState({ status: 'INITIATED' })).toEqual({ status: 'in_flight' })
  })

  it('refuses a success without a preimage and a status it does not know, retryably', () => {
    expect(() => paymentState({ status: 'SUCCEEDED' })).toThrow(/without a preimage/)
    expect(() =>
      paymentState({ status: 'SUCCEEDED', payment_preimage: 'ab'.repeat(32), fee_msat: 1.5 }),
    ).toThrow(/fee_msat/)
    expect(() => paymentState({ status: 'ODD' })).toThrow(/unknown payment status/)
  })
})

describe('invoices', () => {
  it('reads an invoice state; a hold invoice accepted is not paid yet', () => {
    expect(invoiceState({ state: 'SETTLED', amt_paid_msat: '5000' })).toEqual({
      state: 'settled',
      amountPaidMsat: 5000n,
    })
    expect(invoiceState({ state: 'ACCEPTED', amt_paid_msat: '5000' })).toEqual({
      state: 'open',
      amountPaidMsat: 0n,
    })
    expect(invoiceState({ state: 'CANCELED' })).toEqual({ state: 'canceled', amountPaidMsat: 0n })
    expect(() => invoiceState({ state: 'WEIRD' })).toThrow(/unknown state/)
  })

  it("reads AddInvoice's base64 hash as hex, and refuses an answer without one", () => {
    const hash = Buffer.alloc(32, 7)
    expect(issuedInvoice({ r_hash: hash.toString('base64'), payment_request: 'lnbcrt1x' })).toEqual({
      paymentRequest: 'lnbcrt1x',
      paymentHash: hash.toString('hex'),
    })
    expect(() =>
      issuedInvoice({ r_hash: Buffer.alloc(31).toString('base64'), payment_request: 'x' }),
    ).toThrow(/lacks r_hash/)
  })
})

describe('check parts', () => {
  const report = (): RailCheckReport => ({ rail: 'lightning', adapter: 'lnd', reachable: true, problems: [] })

  it('reads version, network and sync from GetInfo, naming what is wrong', () => {
    const good = report()
    readNodeInfo(
      good,
      { version: '0.18.0-beta', chains: [{ chain: 'bitcoin', network: 'testnet4' }], synced_to_chain: true },
      'testnet',
    )
    expect(good).toMatchObject({ version: '0.18.0-beta', network: 'testnet4', synced: true, problems: [] })
    const bad = report()
    readNodeInfo(bad, { version: '0.16.4', chains: [{ chain: 'bitcoin', network: 'mainnet' }] }, 'regtest')
    expect(bad.problems).toEqual([
      'LND is on mainnet, the service is configured for regtest',
      'LND is not synced to the chain (synced_to_chain is false)',
      'LND 0.16.4 is older than 0.17, the oldest version this rail supports',
    ])
  })

  it('tells a permission held, refused or not told from a probe', () => {
    expect(probeVerdict({ ok: {} })).toBe(true)
    expect(probeVerdict({ error: { status: 500, code: 2, message: 'permission denied' } })).toBe(false)
    expect(probeVerdict({ error: { status: 503, code: 14, message: 'x' } })).toBeNull()
    expect(probeVerdict({ error: { status: 500, code: 2, message: 'unable to locate invoice' } })).toBe(true)
  })

  it('writes msat as exact BTC', () => {
    expect([0n, 1n, 100_000_000_000n, 150_000_000_001n].map(formatMsatAsBtc)).toEqual([
      '0',
      '0.00000000001',
      '1',
      '1.50000000001',
    ])
  })
})
