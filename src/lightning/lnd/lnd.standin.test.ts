/**
 * The LND adapter against the truthful LND stand-in (test/standins/lnd.ts): request bodies checked
 * against LND's own REST definitions, the node's cancel and payment rules, its failures, and
 * `check()` against good and misconfigured nodes.
 */
import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import bolt11 from 'bolt11'

import { startLndStandIn, type LndStandIn } from '../../../test/standins/lnd.js'
import {
  bodySchema,
  loadLndSwagger,
  LND_SWAGGER_VERSION,
  matchPath,
  schemaProblems,
} from '../../../test/standins/swagger.js'
import type { Network } from '../../config/network.js'
import { RailFailure } from '../../rails/rail.js'
import { classifyLndError, createLndRail, FAILURE_REASONS } from './lnd.js'

/** The `bolt11` package's description of regtest (it knows the prefix but wants it spelled out). */
const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] }

const nodes: LndStandIn[] = []
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.close()
})

async function standIn(network: Network = 'regtest') {
  const n = await startLndStandIn({ network })
  nodes.push(n)
  return n
}

function rail(n: LndStandIn, opts: { macaroonHex?: string; network?: Network; timeoutMs?: number } = {}) {
  return createLndRail({
    url: n.url,
    macaroonHex: opts.macaroonHex ?? n.macaroonHex,
    tlsCertPem: n.certPem,
    network: opts.network ?? 'regtest',
    timeoutMs: opts.timeoutMs ?? 2_000,
  })
}

async function failureOf(promise: Promise<unknown>): Promise<RailFailure> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(RailFailure)
  return err as RailFailure
}

describe('an invoice that commits to a description hash (LNURL-pay, LUD-06)', () => {
  it('carries the hash in its `h` field and no description, as invoicesrpc/addinvoice.go writes it', async () => {
    const n = await standIn()
    const hash = createHash('sha256').update('[["text/plain","hi"]]').digest('hex')
    const issued = await rail(n).createInvoice({
      amountMsat: 21_000n,
      description: 'kept as the memo only',
      descriptionHash: hash,
      expirySeconds: 600,
    })
    const decoded = bolt11.decode(issued.paymentRequest, REGTEST)
    expect(decoded.tags.find((t) => t.tagName === 'purpose_commit_hash')?.data).toBe(hash)
    expect(decoded.tags.find((t) => t.tagName === 'description')).toBeUndefined()
    expect(n.seen.at(-1)!.body).toMatchObject({
      description_hash: Buffer.from(hash, 'hex').toString('base64'),
    })
  })
})

describe(`LND request bodies against LND ${LND_SWAGGER_VERSION}'s REST definitions`, () => {
  it('every request the adapter makes is a path of the fixture and every body conforms to its schema', async () => {
    const n = await standIn()
    const lnd = rail(n)
    const issued = await lnd.createInvoice({
      amountMsat: 150_000n,
      description: 'Order 1',
      expirySeconds: 600,
    })
    await lnd.lookupInvoice(issued.paymentHash)
    await lnd.cancelInvoice(issued.paymentHash)
    await lnd.createInvoice({
      amountMsat: 21_000n,
      description: 'LNURL-pay',
      descriptionHash: 'ab'.repeat(32),
      expirySeconds: 600,
    })
    const fixed = n.outsideInvoice({ amountMsat: 20_000n })
    await lnd.sendPayment({ paymentRequest: fixed.paymentRequest, amountMsat: 20_000n, feeLimitMsat: 2_000n })
    const open = n.outsideInvoice()
    await lnd.sendPayment({ paymentRequest: open.paymentRequest, amountMsat: 7_000n, feeLimitMsat: 2_000n })
    await lnd.lookupPayment(fixed.hash)
    await lnd.check!()
    // The fallback probes of check(), with a macaroon that may not read macaroons.
    await rail(n, { macaroonHex: n.bake(['info:read', 'offchain:read']) }).check!()

    const swagger = loadLndSwagger()
    const templates = new Set<string>()
    for (const req of n.seen) {
      const route = matchPath(swagger, req.method, req.path.split('?')[0]!)
      expect(route, `${req.method} ${req.path} is not in the fixture`).toBeDefined()
      templates.add(`${req.method} ${route!.template}`)
      const schema = bodySchema(route!.operation)
      if (req.method === 'POST') {
        expect(schema, `${req.method} ${route!.template} takes a body`).toBeDefined()
        expect(schemaProblems(swagger, schema!, req.body), `${req.method} ${req.path}`).toEqual([])
      }
    }
    expect([...templates].sort()).toEqual([
      'GET /v1/balance/channels',
      'GET /v1/getinfo',
      'GET /v1/invoice/{r_hash_str}',
      'GET /v2/router/track/{payment_hash}',
      'POST /v1/invoices',
      'POST /v1/macaroon/checkpermissions',
      'POST /v2/invoices/cancel',
      'POST /v2/router/send',
    ])
  })

  it('a field renamed upstream is caught: the checker names it, and LND refuses it with InvalidArgument', async () => {
    const swagger = loadLndSwagger()
    const send = bodySchema(matchPath(swagger, 'POST', '/v2/router/send')!.operation)!
    expect(
      schemaProblems(swagger, send, {
        payment_request: 'lnbcrt1',
        fee_limit_msats: '10',
        timeout_seconds: 60,
      }),
    ).toEqual(['body: unknown field "fee_limit_msats"'])
    expect(schemaProblems(swagger, send, { fee_limit_msat: 10 })).toEqual([
      'body.fee_limit_msat: expected a string, got 10',
    ])
    const n = await standIn()
    const res = await fetchJson(n, 'POST', '/v1/invoices', { value_msats: '1000' })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({
      code: 3,
      message: expect.stringContaining('unknown field "value_msats"'),
    })
  })

  it('every failure reason of the fixture enum is mapped, and every mapped reason is in the enum', () => {
    const swagger = loadLndSwagger()
    const reasons = swagger.definitions.lnrpcPaymentFailureReason!.enum!
    expect(Object.keys(FAILURE_REASONS).sort()).toEqual([...reasons].sort())
    expect(FAILURE_REASONS.FAILURE_REASON_CANCELED).toBe('payment_canceled')
  })
})

describe('LND stand-in: invoices', () => {
  it('issues invoices with route hints for private channels, unless told not to', async () => {
    const n = await standIn()
    const issued = await rail(n).createInvoice({ amountMsat: 1_000n, description: 'x', expirySeconds: 60 })
    expect(n.invoices.get(issued.paymentHash)!.private).toBe(true)
    const plain = createLndRail({
      url: n.url,
      macaroonHex: n.macaroonHex,
      tlsCertPem: n.certPem,
      network: 'regtest',
      privateInvoices: false,
    })
    const other = await plain.createInvoice({ amountMsat: 1_000n, description: 'x', expirySeconds: 60 })
    expect(n.invoices.get(other.paymentHash)!.private).toBe(false)
  })

  it('cancel: idempotent for a cancelled invoice, invoice_already_settled for a paid one, final for an unknown one', async () => {
    const n = await standIn()
    const lnd = rail(n)
    const a = await lnd.createInvoice({ amountMsat: 5_000n, description: 'a', expirySeconds: 600 })
    await lnd.cancelInvoice(a.paymentHash)
    await lnd.cancelInvoice(a.paymentHash)
    expect(await lnd.lookupInvoice(a.paymentHash)).toEqual({ state: 'canceled', amountPaidMsat: 0n })

    const b = await lnd.createInvoice({ amountMsat: 5_000n, description: 'b', expirySeconds: 600 })
    n.payInvoice(b.paymentHash)
    const settled = await failureOf(lnd.cancelInvoice(b.paymentHash))
    expect([settled.code, settled.retryable]).toEqual(['invoice_already_settled', false])
    // The money stays: the invoice is still settled with what was paid.
    expect(await lnd.lookupInvoice(b.paymentHash)).toEqual({ state: 'settled', amountPaidMsat: 5_000n })

    const unknown = await failureOf(lnd.cancelInvoice('ee'.repeat(32)))
    expect([unknown.code, unknown.retryable]).toEqual(['node_error', false])
  })

  it('an invoice left open past its expiry reads as cancelled, as the expiry watcher makes it', async () => {
    const n = await standIn()
    const lnd = rail(n)
    const a = await lnd.createInvoice({ amountMsat: 5_000n, description: 'a', expirySeconds: 60 })
    n.clockOffsetMs = 61_000
    expect((await lnd.lookupInvoice(a.paymentHash)).state).toBe('canceled')
  })
})

describe('LND stand-in: payments', () => {
  it('after the invoice expired, a send for a hash LND paid reports the payment, not the refusal', async () => {
    const n = await standIn()
    n.policy = () => ({ hold: true })
    const lnd = rail(n, { timeoutMs: 600 })
    const inv = n.outsideInvoice({ amountMsat: 10_000n, expirySeconds: 60 })
    const input = { paymentRequest: inv.paymentRequest, amountMsat: 10_000n, feeLimitMsat: 1_000n }
    expect(await lnd.sendPayment(input)).toEqual({ status: 'in_flight' })
    n.clockOffsetMs = 120_000
    n.resolvePayment(inv.hash, { succeed: true, feeMsat: 700n })
    // SendPaymentV2 now answers 500 "invoice expired" (router_backend.go checks the expiry first).
    const state = await lnd.sendPayment(input)
    expect(state).toMatchObject({ status: 'succeeded', feeMsat: 700n })
    expect(n.payments.get(inv.hash)!.attempts).toBe(1)
  })

  it('a payment LND says exists but will not show (no offchain:read) is a retryable failure, never a final one', async () => {
    const n = await standIn()
    n.policy = () => ({ hold: true })
    const inv = n.outsideInvoice({ amountMsat: 10_000n })
    const input = { paymentRequest: inv.paymentRequest, amountMsat: 10_000n, feeLimitMsat: 1_000n }
    expect(await rail(n, { timeoutMs: 600 }).sendPayment(input)).toEqual({ status: 'in_flight' })
    const writeOnly = rail(n, { macaroonHex: n.bake(['offchain:write']) })
    const failure = await failureOf(writeOnly.sendPayment(input))
    expect([failure.code, failure.retryable]).toEqual(['unauthorized', true])
    expect(n.payments.get(inv.hash)!.attempts).toBe(1)
  })

  it('an expired invoice never paid is a permanent failure, not retried for ever', async () => {
    const n = await standIn()
    const inv = n.outsideInvoice({ amountMsat: 10_000n, expirySeconds: 60 })
    n.clockOffsetMs = 120_000
    const failure = await failureOf(
      rail(n).sendPayment({ paymentRequest: inv.paymentRequest, amountMsat: 10_000n, feeLimitMsat: 1_000n }),
    )
    expect([failure.code, failure.retryable]).toEqual(['invoice_expired', false])
    expect(failure.message).toMatch(/invoice expired/)
    expect(n.payments.size).toBe(0)
  })

  it('LND errors are classified: validation permanent, not-ready and proxies retryable, AlreadyExists tracked', () => {
    expect(classifyLndError({ status: 500, code: 2, message: 'invoice expired. Valid until 2026' })).toBe(
      'permanent',
    )
    expect(classifyLndError({ status: 500, code: 2, message: 'self-payments not allowed' })).toBe('permanent')
    expect(classifyLndError({ status: 400, code: 3, message: 'proto: unknown field' })).toBe('permanent')
    expect(classifyLndError({ status: 409, code: 6, message: 'payment is in transition' })).toBe(
      'already_started',
    )
    expect(classifyLndError({ status: 500, code: 2, message: 'invoice is already paid' })).toBe(
      'already_started',
    )
    expect(classifyLndError({ status: 500, code: 2, message: 'permission denied' })).toBe('unauthorized')
    expect(
      classifyLndError({
        status: 500,
        code: 2,
        message: 'the RPC server is in the process of starting up, but not yet ready to accept calls',
      }),
    ).toBe('transient')
    expect(classifyLndError({ status: 500, code: 2, message: 'routerrpc server shutting down' })).toBe(
      'transient',
    )
    expect(classifyLndError({ status: 503, code: 14, message: 'connection error' })).toBe('transient')
    expect(classifyLndError({ status: 502, code: undefined, message: 'HTTP 502' })).toBe('transient')
    expect(classifyLndError({ status: 404, code: undefined, message: 'HTTP 404' })).toBe('permanent')
  })

  it('a refusal that came after LND recorded the payment is not believed: the payment is tracked', async () => {
    const n = await standIn()
    n.policy = () => ({ hold: true })
    const inv = n.outsideInvoice({ amountMsat: 10_000n })
    // LND records the payment, then the answer is lost with the connection.
    n.fault('drop-answer', { path: /^\/v2\/router\/send/ })
    const state = await rail(n).sendPayment({
      paymentRequest: inv.paymentRequest,
      amountMsat: 10_000n,
      feeLimitMsat: 1_000n,
    })
    expect(state).toEqual({ status: 'in_flight' })
    expect(n.payments.get(inv.hash)!.attempts).toBe(1)
  })

  it('a half-written stream, a stall, a proxy error and a starting node all end in LND’s own record or a retry', async () => {
    const n = await standIn()
    const lnd = rail(n, { timeoutMs: 600 })
    const pay = async (amountMsat: bigint) => {
      const inv = n.outsideInvoice({ amountMsat })
      return {
        inv,
        state: await lnd.sendPayment({
          paymentRequest: inv.paymentRequest,
          amountMsat,
          feeLimitMsat: 2_000n,
        }),
      }
    }
    n.fault('cut', { path: /^\/v2\/router\/send/ })
    // The cut came before LND saw the request: no payment, a retryable failure.
    expect((await failureOf(pay(1_000n))).retryable).toBe(true)

    n.fault('stall', { path: /^\/v2\/router\/send/ })
    expect((await failureOf(pay(2_000n))).retryable).toBe(true)

    n.fault('proxy502')
    expect((await failureOf(pay(3_000n))).retryable).toBe(true)

    n.fault('starting')
    expect((await failureOf(pay(4_000n))).retryable).toBe(true)

    const ok = await pay(5_000n)
    expect(ok.state).toMatchObject({ status: 'succeeded' })
  })

  it('a payment in flight survives a restart of the node and is read from its record', async () => {
    const n = await standIn()
    n.policy = () => ({ hold: true })
    const lnd = rail(n, { timeoutMs: 600 })
    const inv = n.outsideInvoice({ amountMsat: 9_000n })
    const pending = lnd
      .sendPayment({ paymentRequest: inv.paymentRequest, amountMsat: 9_000n, feeLimitMsat: 1_000n })
      .then(
        (state) => state,
        (err: unknown) => err,
      )
    for (let i = 0; i < 100 && !n.payments.has(inv.hash); i++) await new Promise((r) => setTimeout(r, 10))
    await n.restart(400)
    // The stream was cut: either the node was back and said in flight, or it was still down and
    // the failure is retryable. Never a failure that would release the hold.
    const outcome = await pending
    if (outcome instanceof RailFailure) expect(outcome.retryable).toBe(true)
    else expect(outcome).toEqual({ status: 'in_flight' })
    n.resolvePayment(inv.hash, { fail: 'FAILURE_REASON_NO_ROUTE' })
    expect(await lnd.lookupPayment(inv.hash)).toEqual({ status: 'failed', reason: 'route_not_found' })
  })
})

describe('LND stand-in: check()', () => {
  it('a good node: reachable, version, network, synced, every permission, and the channel balance', async () => {
    const n = await standIn()
    const report = await rail(n).check!()
    expect(report).toEqual({
      rail: 'lightning',
      adapter: 'lnd',
      reachable: true,
      version: '0.21.2-beta commit=v0.21.2-beta',
      network: 'regtest',
      synced: true,
      permissions: ['info:read', 'offchain:read', 'offchain:write', 'invoices:read', 'invoices:write'],
      balances: { BTC: '0.005' },
      problems: [],
    })
  })

  it('a node on another network, or not synced, is reported', async () => {
    const n = await standIn('testnet')
    const report = await rail(n, { network: 'regtest' }).check!()
    expect(report.network).toBe('testnet')
    expect(report.problems).toContain('LND is on testnet, the service is configured for regtest')
    n.synced = false
    const unsynced = await rail(n, { network: 'testnet' }).check!()
    expect(unsynced.synced).toBe(false)
    expect(unsynced.problems).toEqual(['LND is not synced to the chain (synced_to_chain is false)'])
    n.synced = true
    n.localBalanceMsat = 0n
    const empty = await rail(n, { network: 'testnet' }).check!()
    expect(empty.balances).toEqual({ BTC: '0' })
    expect(empty.problems).toEqual(['LND has no outbound channel balance: it cannot pay anything'])
  })

  it('a macaroon lacking offchain:write or invoices:write is reported, through checkpermissions', async () => {
    const n = await standIn()
    const mac = n.bake(['info:read', 'offchain:read', 'invoices:read', 'macaroon:read'])
    const report = await rail(n, { macaroonHex: mac }).check!()
    expect(report.permissions).toEqual(['info:read', 'offchain:read', 'invoices:read'])
    expect(report.problems).toEqual([
      'the macaroon lacks offchain:write',
      'the macaroon lacks invoices:write',
    ])
  })

  it('without macaroon:read the permissions are found by harmless probes', async () => {
    const n = await standIn()
    const mac = n.bake(['info:read', 'offchain:read', 'offchain:write', 'invoices:read'])
    const report = await rail(n, { macaroonHex: mac }).check!()
    expect(report.permissions).toEqual(['info:read', 'offchain:read', 'offchain:write', 'invoices:read'])
    expect(report.problems).toEqual(['the macaroon lacks invoices:write'])
    // The probes changed nothing on the node.
    expect(n.payments.size).toBe(0)
    expect(n.invoices.size).toBe(0)
  })

  it('a macaroon the node does not know, and a node that does not answer', async () => {
    const n = await standIn()
    const report = await rail(n, { macaroonHex: 'ab'.repeat(40) }).check!()
    expect(report.reachable).toBe(true)
    expect(report.permissions).toEqual([])
    expect(report.problems[0]).toMatch(/getinfo was refused: verification failed/)
    await n.close()
    nodes.splice(nodes.indexOf(n), 1)
    const down = await rail(n, { timeoutMs: 600 }).check!()
    expect(down.reachable).toBe(false)
    expect(down.problems).toHaveLength(1)
  })
})

/** A raw request to the stand-in, as a client other than the adapter would make it. */
async function fetchJson(n: LndStandIn, method: string, path: string, body?: unknown) {
  const https = await import('node:https')
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = https.request(
      n.url + path,
      {
        method,
        ca: n.certPem,
        headers: { 'grpc-metadata-macaroon': n.macaroonHex, 'content-type': 'application/json' },
      },
      (res) => {
        let text = ''
        res.on('data', (c: Buffer) => (text += c.toString()))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
      },
    )
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}
