import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { startLndStandIn, type LndStandIn } from '../../../test/standins/lnd.js'
import { createLndRail } from './lnd.js'
import type { LightningRail } from '../../rails/rail.js'

/**
 * The LND adapter's reserves() and payments() against the LND stand-in: units (msat in the channel
 * balance, sat in the wallet's), payments in flight, pages of ListPayments, and the macaroon.
 */
describe('LND reserves() and payments()', () => {
  let n: LndStandIn
  let rail: LightningRail
  const railWith = (macaroonHex: string) =>
    createLndRail({ url: n.url, macaroonHex, tlsCertPem: n.certPem, network: 'regtest', timeoutMs: 5000 })

  beforeAll(async () => {
    n = await startLndStandIn()
    n.localBalanceMsat = 1_000_500n
    rail = railWith(n.macaroonHex)
  })
  afterAll(async () => n?.close())

  it('adds the channels (msat, rounded down once) and the on-chain wallet (sat), a payment in flight already off', async () => {
    n.walletConfirmedSat = 70_000n
    n.walletUnconfirmedSat = 5_000n
    expect(await rail.reserves!()).toEqual({ balances: { BTC: 1_000n + 75_000n }, incoming: { BTC: 0n } })
    n.policy = () => ({ hold: true })
    const held = n.outsideInvoice({ amountMsat: 400_000n })
    n.payByHand(held.paymentRequest)
    expect((await rail.reserves!()).balances.BTC).toBe(600n + 75_000n)
    // A payment in flight is not listed; once it succeeds it is, with its fee rounded up to a
    // satoshi as the ledger books it (400 sat + 2.5 sat: 403, not 402).
    expect(await rail.payments!(0)).toEqual([])
    n.resolvePayment(held.hash, { succeed: true, feeMsat: 2_500n })
    expect((await rail.reserves!()).balances.BTC).toBe(598n + 75_000n)
    expect(await rail.payments!(0)).toEqual([
      { ref: held.hash, direction: 'out', amountMinor: 403n, at: expect.any(Number) },
    ])
    n.walletConfirmedSat = 0n
    n.walletUnconfirmedSat = 0n
    n.policy = () => ({ succeed: true })
  })

  it('reads every page of payments, leaves out failed ones and those before the window, and lists settled invoices', async () => {
    n.localBalanceMsat = 10_000_000_000n
    const before = n.payments.size
    for (let i = 0; i < 520; i++) n.payByHand(n.outsideInvoice({ amountMsat: 1_000_000n }).paymentRequest)
    n.policy = () => ({ fail: 'FAILURE_REASON_NO_ROUTE' })
    n.payByHand(n.outsideInvoice({ amountMsat: 1_000_000n }).paymentRequest)
    n.policy = () => ({ succeed: true })
    const invoice = await rail.createInvoice({ amountMsat: 7_000_000n, description: 'x', expirySeconds: 600 })
    n.payInvoice(invoice.paymentHash, 7_500_000n)
    const listed = await rail.payments!(Date.now() - 60_000)
    const out = listed.filter((p) => p.direction === 'out')
    expect(out.length).toBe(before + 520)
    expect(new Set(out.map((p) => p.ref)).size).toBe(out.length)
    expect(out.at(-1)!.amountMinor).toBe(1_001n)
    expect(listed.filter((p) => p.direction === 'in')).toEqual([
      { ref: invoice.paymentHash, direction: 'in', amountMinor: 7_500n, at: expect.any(Number) },
    ])
    // Two pages of ListPayments were asked for, the second after the first's last index.
    const pages = n.seen.filter((s) => s.path.startsWith('/v1/payments?'))
    expect(pages.at(-1)!.path).toMatch(/index_offset=[1-9]\d*&max_payments=500$/)
    // A window that starts in three days holds none of them, even with the two days read before it.
    expect(await rail.payments!(Date.now() + 3 * 86_400_000)).toEqual([])
  }, 60_000)

  it('a macaroon without onchain:read cannot read the wallet: the reading fails, never a channel-only figure', async () => {
    const limited = railWith(
      n.bake(['info:read', 'offchain:read', 'offchain:write', 'invoices:read', 'invoices:write']),
    )
    await expect(limited.reserves!()).rejects.toMatchObject({ code: 'unauthorized' })
  })
})
