import { afterEach, describe, expect, it } from 'vitest'

import { createBitcoindRail } from './bitcoind.js'
import { deriveAccountXpub, deriveReceiveAddress, newMasterKey } from '../../bitcoin/bip84.js'
import { payFromOutside } from '../../../test/standins/chain.js'
import { startBitcoindStandin, type BitcoindStandin } from '../../../test/standins/bitcoind.js'

/**
 * The Bitcoin Core adapter's reserves() and payments() against the stand-in: both wallets'
 * getbalances, deposits below the confirmations the service needs reported as incoming, and a
 * fee-bumped send listed once, under its replacement, with the replacement's fee.
 */
const PAYEE = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
const stands: BitcoindStandin[] = []
afterEach(async () => {
  for (const s of stands.splice(0)) await s.close()
})

async function node() {
  const standin = await startBitcoindStandin()
  stands.push(standin)
  standin.createWallet('svcpay-hot', { privateKeys: true })
  standin.fundWallet('svcpay-hot', 1_000_000n)
  const master = newMasterKey('regtest')
  const onchain = createBitcoindRail({
    url: standin.url,
    user: standin.user,
    password: standin.password,
    wallet: 'svcpay-hot',
    accountXpub: deriveAccountXpub(master, 'regtest'),
    descriptorRangeAhead: 20,
    network: 'regtest',
    timeoutMs: 2000,
    creditConfirmations: 3,
  })
  return { standin, onchain, address: (i: number) => deriveReceiveAddress(master, i, 'regtest') }
}

describe('Bitcoin Core reserves() and payments()', () => {
  it('adds the hot and the watch wallet; a deposit counts as incoming until it has the confirmations', async () => {
    const { standin, onchain, address } = await node()
    expect(await onchain.reserves!()).toEqual({ balances: { BTC: 1_000_000n }, incoming: { BTC: 0n } })
    await onchain.watchAddress(address(0), 0)
    const paid = payFromOutside(standin.chain, address(0), 40_000n)
    // In the mempool, from an outside payer: untrusted_pending, and incoming.
    expect(await onchain.reserves!()).toEqual({ balances: { BTC: 1_040_000n }, incoming: { BTC: 40_000n } })
    expect(await onchain.payments!(0)).toEqual([])
    standin.chain.mine(2)
    expect((await onchain.reserves!()).incoming.BTC).toBe(40_000n)
    expect(await onchain.payments!(0)).toEqual([])
    standin.chain.mine(1)
    expect(await onchain.reserves!()).toEqual({ balances: { BTC: 1_040_000n }, incoming: { BTC: 0n } })
    expect(await onchain.payments!(0)).toEqual([
      { ref: paid.txid, direction: 'in', amountMinor: 40_000n, at: expect.any(Number) },
    ])
  })

  it('a fee-bumped send is listed once, under its replacement, with amount and the fee paid', async () => {
    const { standin, onchain } = await node()
    const { txid } = await onchain.send({
      address: PAYEE,
      amountSats: 100_000n,
      feeRateSatPerVb: 5n,
      requestId: 'r1',
    })
    const bumped = await onchain.bumpFee!(txid, 12n)
    // Spent from the balance at once, with the replacement's fee (its change is trusted).
    expect((await onchain.reserves!()).balances.BTC).toBe(1_000_000n - 100_000n - 12n * 141n)
    standin.chain.mine(3)
    const listed = await onchain.payments!(0)
    expect(listed).toEqual([
      { ref: bumped.txid, direction: 'out', amountMinor: 100_000n + 12n * 141n, at: expect.any(Number) },
    ])
    expect(await onchain.reserves!()).toEqual({
      balances: { BTC: 1_000_000n - 100_000n - 12n * 141n },
      incoming: { BTC: 0n },
    })
  })
})
