import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import bolt11 from 'bolt11'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { createTestDb } from '../../test/helpers/harness.js'
import { migrate } from '../db/migrate.js'
import type { Db } from '../db/db.js'
import { createSandboxLightningRail, type SandboxLightningRail } from './sandbox.js'

const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] }

describe('the sandbox Lightning node', () => {
  let db: Db
  let drop: () => Promise<void>
  let rail: SandboxLightningRail
  const nodeKey = new Uint8Array(randomBytes(32))
  const nodePub = bytesToHex(secp256k1.getPublicKey(nodeKey, true))
  beforeAll(async () => {
    ;({ db, drop } = await createTestDb())
    await migrate(db)
    rail = createSandboxLightningRail({ db, network: 'regtest', nodePrivateKey: nodeKey })
  })
  afterAll(async () => {
    await db?.close()
    await drop?.()
  })
  const outside = (amountSats?: bigint, outcome: 'succeed' | 'fail' = 'succeed') =>
    rail.createOutsideInvoice({
      ...(amountSats === undefined ? {} : { amountMsat: amountSats * 1000n }),
      outcome,
    })

  it('issues BOLT11 invoices signed by our node key that an independent decoder accepts', async () => {
    const inv = await rail.createInvoice({
      amountMsat: 2_500_000n,
      description: 'svcpay Test',
      expirySeconds: 900,
    })
    const d = bolt11.decode(inv.paymentRequest, REGTEST)
    expect(d.payeeNodeKey).toBe(nodePub)
    expect(d.millisatoshis).toBe('2500000')
    expect(d.tagsObject.payment_hash).toBe(inv.paymentHash)
    expect(d.tagsObject.description).toBe('svcpay Test')
    expect(d.timeExpireDate! - d.timestamp!).toBe(900)
    expect(d.tagsObject.payment_secret).toMatch(/^[0-9a-f]{64}$/)
    // A node restarted with the same key is the same node.
    const again = createSandboxLightningRail({ db, network: 'regtest', nodePrivateKey: nodeKey })
    const inv2 = await again.createInvoice({ amountMsat: 1_000n, description: 'x', expirySeconds: 60 })
    expect(bolt11.decode(inv2.paymentRequest, REGTEST).payeeNodeKey).toBe(nodePub)
    // Outside invoices come from another node.
    const out = await outside(1000n)
    expect(bolt11.decode(out.paymentRequest, REGTEST).payeeNodeKey).toBe(rail.outsideNodePublicKey)
    expect(rail.outsideNodePublicKey).not.toBe(nodePub)
    expect(bolt11.decode((await outside()).paymentRequest, REGTEST).satoshis).toBeNull()
  })

  it('settles our invoice when an outside payer pays it, once, and reports it', async () => {
    const inv = await rail.createInvoice({ amountMsat: 5_000_000n, description: 'd', expirySeconds: 60 })
    expect(await rail.lookupInvoice(inv.paymentHash)).toEqual({ state: 'open', amountPaidMsat: 0n })
    const paid = await db.tx((q) => rail.payOurInvoice(q, inv.paymentRequest.toUpperCase()))
    expect(paid).toEqual({ ok: true, paymentHash: inv.paymentHash, amountPaidMsat: 5_000_000n })
    expect(await rail.lookupInvoice(inv.paymentHash)).toEqual({
      state: 'settled',
      amountPaidMsat: 5_000_000n,
    })
    expect(await db.tx((q) => rail.payOurInvoice(q, inv.paymentRequest))).toEqual({
      ok: false,
      issue: 'the invoice is already paid',
    })
    const out = await outside(10n)
    expect(await db.tx((q) => rail.payOurInvoice(q, out.paymentRequest))).toMatchObject({ ok: false })
  })

  it('reports an expired invoice as cancelled, and refuses to pay it', async () => {
    const inv = await rail.createInvoice({ amountMsat: 1_000n, description: 'd', expirySeconds: 60 })
    await db.query('UPDATE sandbox_ln_invoices SET expires_at = $2 WHERE payment_hash = $1', [
      inv.paymentHash,
      Date.now() - 1,
    ])
    expect((await rail.lookupInvoice(inv.paymentHash)).state).toBe('canceled')
    expect(await db.tx((q) => rail.payOurInvoice(q, inv.paymentRequest))).toEqual({
      ok: false,
      issue: 'the invoice has expired',
    })
  })

  it('pays outside invoices with a preimage that hashes to the payment hash, charging 1 sat + 0.1% within the limit', async () => {
    const out = await outside(200_000n)
    const r = await rail.sendPayment({
      paymentRequest: out.paymentRequest,
      amountMsat: 200_000_000n,
      feeLimitMsat: 1_000_000n,
    })
    expect(r.status).toBe('succeeded')
    if (r.status !== 'succeeded') return
    expect(bytesToHex(sha256(hexToBytes(r.preimage)))).toBe(out.paymentHash)
    expect(r.feeMsat).toBe(201_000n)
    expect(await rail.lookupPayment(out.paymentHash)).toEqual(r)
  })

  it('is idempotent by payment hash: repeated and concurrent sends pay once', async () => {
    const out = await outside(1_000n)
    const send = () =>
      rail.sendPayment({ paymentRequest: out.paymentRequest, amountMsat: 1_000_000n, feeLimitMsat: 10_000n })
    const results = await Promise.all([send(), send(), send(), send()])
    expect(
      new Set(results.map((x) => JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? String(v) : v)))).size,
    ).toBe(1)
    expect(results[0]!.status).toBe('succeeded')
    expect((await send()).status).toBe('succeeded')
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM sandbox_ln_payments WHERE payment_hash = $1',
      [out.paymentHash],
    )
    expect(rows[0].n).toBe(1)
  })

  it('fails what a real network would not route: fail outcome, unknown node, own invoice, expired, too low a fee limit', async () => {
    const fail = await outside(1_000n, 'fail')
    const pay = (pr: string, amountMsat = 1_000_000n, feeLimitMsat = 10_000n) =>
      rail.sendPayment({ paymentRequest: pr, amountMsat, feeLimitMsat })
    expect(await pay(fail.paymentRequest)).toEqual({ status: 'failed', reason: 'route_not_found' })
    const ours = await rail.createInvoice({ amountMsat: 1_000_000n, description: 'd', expirySeconds: 60 })
    expect(await pay(ours.paymentRequest)).toEqual({ status: 'failed', reason: 'self_payment' })
    const expired = await outside(1_000n)
    await db.query('UPDATE sandbox_ln_invoices SET expires_at = 0 WHERE payment_hash = $1', [
      expired.paymentHash,
    ])
    expect(await pay(expired.paymentRequest)).toEqual({ status: 'failed', reason: 'invoice_expired' })
    const stranger = createSandboxLightningRail({
      db,
      network: 'regtest',
      nodePrivateKey: new Uint8Array(32).fill(3),
    })
    const unknown = await stranger.createOutsideInvoice({ amountMsat: 1_000_000n, outcome: 'succeed' })
    await db.query('DELETE FROM sandbox_ln_invoices WHERE payment_hash = $1', [unknown.paymentHash])
    expect(await pay(unknown.paymentRequest)).toEqual({ status: 'failed', reason: 'route_not_found' })
    const pricey = await outside(1_000n)
    expect(await pay(pricey.paymentRequest, 1_000_000n, 1_000n)).toEqual({
      status: 'failed',
      reason: 'route_not_found',
    })
    expect(await pay('lnbcrt1garbage')).toEqual({ status: 'failed', reason: 'invalid_payment_request' })
    expect(await rail.lookupPayment('00'.repeat(32))).toEqual({ status: 'unknown' })
  })
})
