/**
 * The LND adapter against a local HTTPS server that answers as LND's REST gateway does: snake_case
 * fields, int64 as strings, base64 bytes, `{ code, message, details }` errors, and streaming
 * endpoints that write `{ "result": ... }` lines and may stay open.
 */
import https from 'node:https'
import type http from 'node:http'
import type { AddressInfo } from 'node:net'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { afterEach, describe, expect, it } from 'vitest'

import { RailFailure } from '../../rails/rail.js'
import { encodeInvoice } from '../bolt11.js'
import { createLndRail } from './lnd.js'
import { LND_TLS_CERT, LND_TLS_KEY } from '../../../test/standins/lnd.js'

const MACAROON_HEX =
  '0201036c6e6402f801030a10b3e2a7a4e1c6a2f53a1e4f0c9a7d2b1f1201301a160a0761646472657373120472656164120577726974651a'

interface Seen {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: unknown
}

type Handler = (req: Seen, res: http.ServerResponse) => void

const servers: https.Server[] = []

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** A fake LND REST listener; every request is recorded before the handler answers it. */
async function fakeLnd(handler: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = https.createServer({ cert: LND_TLS_CERT, key: LND_TLS_KEY }, (req, res) => {
    let text = ''
    req.on('data', (c: Buffer) => (text += c.toString()))
    req.on('end', () => {
      const entry = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      }
      seen.push(entry)
      handler(entry, res)
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/** A streaming answer: one line, and the connection kept open as LND does while a payment is tracked. */
function streamLine(res: http.ServerResponse, status: number, message: unknown, end = false): void {
  res.writeHead(status, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' })
  res.write(JSON.stringify(message) + '\n')
  if (end) res.end()
}

function rail(url: string, timeoutMs = 2000) {
  return createLndRail({
    url,
    macaroonHex: MACAROON_HEX,
    tlsCertPem: LND_TLS_CERT,
    network: 'regtest',
    timeoutMs,
  })
}

const NODE_KEY = new Uint8Array(32).fill(7)
const PREIMAGE = new Uint8Array(32).fill(0xab)
const PAYMENT_HASH = bytesToHex(sha256(PREIMAGE))

function invoice(amountMsat?: bigint, paymentHash = sha256(PREIMAGE)): string {
  return encodeInvoice(
    {
      network: 'regtest',
      amountMsat,
      paymentHash,
      paymentSecret: new Uint8Array(32).fill(1),
      description: 'coffee',
      expirySeconds: 3600,
      timestampSec: Math.floor(Date.now() / 1000),
    },
    NODE_KEY,
  )
}

/** An `lnrpc.Payment` as LND's REST gateway prints it. */
function payment(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    payment_hash: PAYMENT_HASH,
    value: '150',
    creation_date: '1700000000',
    fee: '0',
    payment_preimage: '0000000000000000000000000000000000000000000000000000000000000000',
    value_sat: '150',
    value_msat: '150000',
    payment_request: '',
    status,
    fee_sat: '0',
    fee_msat: '0',
    creation_time_ns: '1700000000000000000',
    htlcs: [],
    payment_index: '12',
    failure_reason: 'FAILURE_REASON_NONE',
    first_hop_custom_records: {},
    ...extra,
  }
}

const SUCCEEDED = payment('SUCCEEDED', {
  payment_preimage: bytesToHex(PREIMAGE),
  fee: '1',
  fee_sat: '1',
  fee_msat: '1234',
})

async function failureOf(promise: Promise<unknown>): Promise<RailFailure> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(RailFailure)
  return err as RailFailure
}

/** The track path LND's gateway expects: the hash's bytes in URL-safe base64. */
const TRACK_PATH = `/v2/router/track/${Buffer.from(PAYMENT_HASH, 'hex').toString('base64url')}=`

describe('createLndRail: invoices', () => {
  it('adds an invoice with value_msat and expiry as strings and returns the hash in hex', async () => {
    const rHash = sha256(new Uint8Array([1, 2, 3]))
    const lnd = await fakeLnd((_req, res) =>
      json(res, 200, {
        r_hash: Buffer.from(rHash).toString('base64'),
        payment_request: 'lnbcrt1500n1pjexample',
        add_index: '7',
        payment_addr: Buffer.alloc(32, 9).toString('base64'),
      }),
    )
    const issued = await rail(lnd.url).createInvoice({
      amountMsat: 150_000n,
      description: 'Order 42',
      expirySeconds: 900,
    })
    expect(issued).toEqual({ paymentRequest: 'lnbcrt1500n1pjexample', paymentHash: bytesToHex(rHash) })
    const [req] = lnd.seen
    expect(req!.method).toBe('POST')
    expect(req!.path).toBe('/v1/invoices')
    expect(req!.headers['grpc-metadata-macaroon']).toBe(MACAROON_HEX)
    expect(req!.headers['content-type']).toBe('application/json')
    // Route hints for private channels by default, so that a node without announced channels can be paid.
    expect(req!.body).toEqual({ value_msat: '150000', memo: 'Order 42', expiry: '900', private: true })
  })

  it('maps each invoice state, reading amt_paid_msat only when settled', async () => {
    const states: Record<string, Record<string, unknown>> = {
      ['a'.repeat(64)]: { state: 'OPEN', amt_paid_msat: '0', settled: false },
      ['b'.repeat(64)]: { state: 'ACCEPTED', amt_paid_msat: '0', settled: false },
      ['c'.repeat(64)]: { state: 'SETTLED', amt_paid_msat: '151000', settled: true },
      ['d'.repeat(64)]: { state: 'CANCELED', amt_paid_msat: '0', settled: false },
    }
    const lnd = await fakeLnd((req, res) => {
      const hash = req.path.replace('/v1/invoice/', '')
      json(res, 200, {
        memo: 'x',
        r_hash: Buffer.from(hash, 'hex').toString('base64'),
        value_msat: '150000',
        ...states[hash],
      })
    })
    const lightning = rail(lnd.url)
    expect(await lightning.lookupInvoice('a'.repeat(64))).toEqual({ state: 'open', amountPaidMsat: 0n })
    expect(await lightning.lookupInvoice('b'.repeat(64))).toEqual({ state: 'open', amountPaidMsat: 0n })
    expect(await lightning.lookupInvoice('c'.repeat(64))).toEqual({
      state: 'settled',
      amountPaidMsat: 151_000n,
    })
    expect(await lightning.lookupInvoice('d'.repeat(64))).toEqual({ state: 'canceled', amountPaidMsat: 0n })
    expect(lnd.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      `GET /v1/invoice/${'a'.repeat(64)}`,
      `GET /v1/invoice/${'b'.repeat(64)}`,
      `GET /v1/invoice/${'c'.repeat(64)}`,
      `GET /v1/invoice/${'d'.repeat(64)}`,
    ])
  })

  it('cancels an invoice by its base64 payment hash, and takes an already cancelled one as done', async () => {
    // invoices/invoiceregistry.go cancelInvoiceImpl answers success for an invoice already
    // canceled. Nodes from before that answered "invoice already canceled" (gRPC Unknown, 500).
    let calls = 0
    const lnd = await fakeLnd((_req, res) =>
      ++calls <= 2
        ? json(res, 200, {})
        : json(res, 500, { code: 2, message: 'invoice already canceled', details: [] }),
    )
    const hash = 'ab'.repeat(32)
    await rail(lnd.url).cancelInvoice(hash)
    await rail(lnd.url).cancelInvoice(hash)
    await rail(lnd.url).cancelInvoice(hash)
    expect(lnd.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'POST /v2/invoices/cancel',
      'POST /v2/invoices/cancel',
      'POST /v2/invoices/cancel',
    ])
    expect(lnd.seen[0]!.body).toEqual({ payment_hash: Buffer.from(hash, 'hex').toString('base64') })
  })

  it('reports an unknown invoice as a final invoice_not_found', async () => {
    const lnd = await fakeLnd((_req, res) =>
      json(res, 404, { code: 5, message: 'unable to locate invoice', details: [] }),
    )
    const failure = await failureOf(rail(lnd.url).lookupInvoice('e'.repeat(64)))
    expect(failure.code).toBe('invoice_not_found')
    expect(failure.retryable).toBe(false)
  })
})

describe('createLndRail: payments', () => {
  it('sends with fee_limit_msat as a string and no_inflight_updates, and maps a success', async () => {
    const lnd = await fakeLnd((_req, res) => streamLine(res, 200, { result: SUCCEEDED }, true))
    const paymentRequest = invoice(150_000n)
    const state = await rail(lnd.url).sendPayment({
      paymentRequest,
      amountMsat: 150_000n,
      feeLimitMsat: 2_000n,
    })
    expect(state).toEqual({ status: 'succeeded', preimage: bytesToHex(PREIMAGE), feeMsat: 1234n })
    const [req] = lnd.seen
    expect(`${req!.method} ${req!.path}`).toBe('POST /v2/router/send')
    expect(req!.headers['grpc-metadata-macaroon']).toBe(MACAROON_HEX)
    // The invoice carries its amount, so none is sent alongside it.
    expect(req!.body).toEqual({
      payment_request: paymentRequest,
      fee_limit_msat: '2000',
      timeout_seconds: 60,
      no_inflight_updates: true,
    })
  })

  it('sends amt_msat for an invoice without an amount', async () => {
    const lnd = await fakeLnd((_req, res) => streamLine(res, 200, { result: SUCCEEDED }, true))
    await rail(lnd.url).sendPayment({ paymentRequest: invoice(), amountMsat: 99_000n, feeLimitMsat: 500n })
    expect(lnd.seen[0]!.body).toMatchObject({ amt_msat: '99000', fee_limit_msat: '500' })
  })

  it('maps each failure reason to a short code', async () => {
    const reasons: Record<string, string> = {
      FAILURE_REASON_TIMEOUT: 'timeout',
      FAILURE_REASON_NO_ROUTE: 'route_not_found',
      FAILURE_REASON_ERROR: 'error',
      FAILURE_REASON_INCORRECT_PAYMENT_DETAILS: 'incorrect_payment_details',
      FAILURE_REASON_INSUFFICIENT_BALANCE: 'insufficient_balance',
      FAILURE_REASON_CANCELED: 'payment_canceled',
      FAILURE_REASON_NONE: 'error',
      FAILURE_REASON_SOMETHING_NEW: 'error',
    }
    let next = ''
    const lnd = await fakeLnd((_req, res) =>
      streamLine(res, 200, { result: payment('FAILED', { failure_reason: next }) }, true),
    )
    const lightning = rail(lnd.url)
    for (const [lndReason, ours] of Object.entries(reasons)) {
      next = lndReason
      const state = await lightning.sendPayment({
        paymentRequest: invoice(150_000n),
        amountMsat: 150_000n,
        feeLimitMsat: 1n,
      })
      expect(state).toEqual({ status: 'failed', reason: ours })
    }
  })

  it('never pays twice: a second send for the same hash reports the first payment', async () => {
    // LND's own rule, simulated: one payment per hash; a second SendPaymentV2 is refused with
    // AlreadyExists (HTTP 409) while in flight or once paid.
    const payments = new Map<string, Record<string, unknown>>()
    let paid = 0
    const lnd = await fakeLnd((req, res) => {
      if (req.path === '/v2/router/send') {
        if (payments.has(PAYMENT_HASH)) {
          const message =
            payments.get(PAYMENT_HASH)!.status === 'SUCCEEDED'
              ? 'invoice is already paid'
              : 'payment is in transition'
          return streamLine(res, 409, { error: { code: 6, message, details: [] } }, true)
        }
        paid++
        payments.set(PAYMENT_HASH, SUCCEEDED)
        return streamLine(res, 200, { result: SUCCEEDED }, true)
      }
      if (req.path === TRACK_PATH) return streamLine(res, 200, { result: payments.get(PAYMENT_HASH) })
      json(res, 404, { code: 5, message: 'Not Found', details: [] })
    })
    const lightning = rail(lnd.url)
    const input = { paymentRequest: invoice(150_000n), amountMsat: 150_000n, feeLimitMsat: 2_000n }
    const first = await lightning.sendPayment(input)
    const second = await lightning.sendPayment(input)
    expect(second).toEqual(first)
    expect(paid).toBe(1)
    expect(lnd.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'POST /v2/router/send',
      'POST /v2/router/send',
      `GET ${TRACK_PATH}`,
    ])
  })

  it('resolves "payment is in transition" through tracking', async () => {
    // router_server.go SendPaymentV2 sends ErrPaymentInFlight as AlreadyExists; being a stream,
    // grpc-gateway (runtime/handler.go) writes it as an error line with HTTP 409.
    const lnd = await fakeLnd((req, res) => {
      if (req.path === '/v2/router/send')
        return streamLine(
          res,
          409,
          { error: { code: 6, message: 'payment is in transition', details: [] } },
          true,
        )
      // Tracking writes the current state at once and keeps the stream open for later updates.
      streamLine(res, 200, { result: payment('IN_FLIGHT') })
    })
    const state = await rail(lnd.url).sendPayment({
      paymentRequest: invoice(150_000n),
      amountMsat: 150_000n,
      feeLimitMsat: 1n,
    })
    expect(state).toEqual({ status: 'in_flight' })
    expect(lnd.seen[1]!.path).toBe(TRACK_PATH)
    expect(lnd.seen[1]!.headers['grpc-metadata-macaroon']).toBe(MACAROON_HEX)
  })

  it('reports in flight when the outcome takes longer than the deadline but LND has the payment', async () => {
    const lnd = await fakeLnd((req, res) => {
      if (req.path === '/v2/router/send') return // Routing takes longer than we wait.
      streamLine(res, 200, { result: payment('IN_FLIGHT') })
    })
    const started = Date.now()
    const state = await rail(lnd.url, 300).sendPayment({
      paymentRequest: invoice(150_000n),
      amountMsat: 150_000n,
      feeLimitMsat: 1n,
    })
    expect(state).toEqual({ status: 'in_flight' })
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('fails retryably within the deadline when LND never answers and has no such payment', async () => {
    const lnd = await fakeLnd((req, res) => {
      if (req.path === '/v2/router/send') return
      json(res, 404, { code: 5, message: "payment isn't initiated", details: [] })
    })
    const started = Date.now()
    const failure = await failureOf(
      rail(lnd.url, 300).sendPayment({
        paymentRequest: invoice(150_000n),
        amountMsat: 150_000n,
        feeLimitMsat: 1n,
      }),
    )
    expect(failure.code).toBe('node_timeout')
    expect(failure.retryable).toBe(true)
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('looks up payments: succeeded, failed, and unknown when never initiated', async () => {
    let answer: () => [number, unknown] = () => [200, { result: SUCCEEDED }]
    const lnd = await fakeLnd((_req, res) => {
      const [status, body] = answer()
      if (status === 200) streamLine(res, status, body)
      else json(res, status, body)
    })
    const lightning = rail(lnd.url)
    expect(await lightning.lookupPayment(PAYMENT_HASH)).toEqual({
      status: 'succeeded',
      preimage: bytesToHex(PREIMAGE),
      feeMsat: 1234n,
    })
    answer = () => [200, { result: payment('FAILED', { failure_reason: 'FAILURE_REASON_NO_ROUTE' }) }]
    expect(await lightning.lookupPayment(PAYMENT_HASH)).toEqual({
      status: 'failed',
      reason: 'route_not_found',
    })
    answer = () => [404, { code: 5, message: "payment isn't initiated", details: [] }]
    expect(await lightning.lookupPayment(PAYMENT_HASH)).toEqual({ status: 'unknown' })
    expect(lnd.seen.every((s) => s.method === 'GET' && s.path === TRACK_PATH)).toBe(true)
  })

  it('refuses invoices that are malformed, for another network or for another amount, before calling LND', async () => {
    const lnd = await fakeLnd((_req, res) => json(res, 500, {}))
    const lightning = rail(lnd.url)
    const bad = await failureOf(
      lightning.sendPayment({ paymentRequest: 'lnbcrt1nonsense', amountMsat: 1n, feeLimitMsat: 1n }),
    )
    expect([bad.code, bad.retryable]).toEqual(['invalid_invoice', false])
    const mainnet = createLndRail({
      url: lnd.url,
      macaroonHex: MACAROON_HEX,
      tlsCertPem: LND_TLS_CERT,
      network: 'mainnet',
    })
    const wrongNet = await failureOf(
      mainnet.sendPayment({ paymentRequest: invoice(150_000n), amountMsat: 150_000n, feeLimitMsat: 1n }),
    )
    expect(wrongNet.code).toBe('invalid_invoice')
    const mismatch = await failureOf(
      lightning.sendPayment({ paymentRequest: invoice(150_000n), amountMsat: 140_000n, feeLimitMsat: 1n }),
    )
    expect(mismatch.code).toBe('amount_mismatch')
    expect(lnd.seen).toHaveLength(0)
  })
})

describe('createLndRail: errors and transport', () => {
  it('retries a node that is not ready, never a request LND refused (even as a 500) or a macaroon refusal', async () => {
    let next: [number, unknown] = [
      500,
      { code: 2, message: 'unable to add invoice: database is locked', details: [] },
    ]
    const lnd = await fakeLnd((_req, res) => json(res, next[0], next[1]))
    const lightning = rail(lnd.url)
    const input = { amountMsat: 1_000n, description: 'x', expirySeconds: 60 }
    const server = await failureOf(lightning.createInvoice(input))
    expect([server.code, server.retryable]).toEqual(['node_error', true])
    next = [503, { code: 14, message: 'the RPC server is in the process of starting up', details: [] }]
    expect((await failureOf(lightning.createInvoice(input))).retryable).toBe(true)
    // A validation error of LND is a plain Go error: gRPC Unknown, HTTP 500, and permanent.
    next = [500, { code: 2, message: 'memo too large: 700 bytes (maxsize=639)', details: [] }]
    expect(await failureOf(lightning.createInvoice(input))).toMatchObject({
      code: 'node_error',
      retryable: false,
    })
    next = [400, { code: 3, message: 'memo too large', details: [] }]
    const client = await failureOf(lightning.createInvoice(input))
    expect([client.code, client.retryable]).toEqual(['node_error', false])
    next = [
      500,
      { code: 2, message: 'verification failed: signature mismatch after caveat verification', details: [] },
    ]
    const auth = await failureOf(lightning.createInvoice(input))
    expect([auth.code, auth.retryable]).toEqual(['unauthorized', false])
  })

  it('times out on a node that never answers, retryably and within the deadline', async () => {
    const lnd = await fakeLnd(() => {})
    const started = Date.now()
    const failure = await failureOf(rail(lnd.url, 250).lookupInvoice('a'.repeat(64)))
    expect([failure.code, failure.retryable]).toEqual(['node_timeout', true])
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it("trusts LND's certificate only when it is given", async () => {
    const lnd = await fakeLnd((_req, res) => json(res, 200, { state: 'OPEN', amt_paid_msat: '0' }))
    const unpinned = createLndRail({
      url: lnd.url,
      macaroonHex: MACAROON_HEX,
      network: 'regtest',
      timeoutMs: 2000,
    })
    const failure = await failureOf(unpinned.lookupInvoice('a'.repeat(64)))
    expect(failure.code).toBe('node_tls_error')
    expect(await rail(lnd.url).lookupInvoice('a'.repeat(64))).toEqual({ state: 'open', amountPaidMsat: 0n })
  })

  it('refuses a macaroon that is not hex at construction', () => {
    expect(() =>
      createLndRail({ url: 'https://127.0.0.1:1', macaroonHex: 'not-hex', network: 'regtest' }),
    ).toThrow(/hex/)
  })
})
