import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tronHexOfKey, TronGridStandIn } from '../../../test/standins/trongrid.js'
import { RailFailure } from '../../rails/rail.js'
import { createTronGridRail, type TronGridRail } from './trongrid.js'

/**
 * reserves() and payments() of the TronGrid adapter (reconciliation, issue 18) against the stand-in's
 * chain: the solidified USDT balance, the TRX as information, and the TRC-20 history from TronGrid's
 * v1 API, paged by fingerprint.
 */
const KEY = sha256(utf8ToBytes('svcpay trongrid history hot wallet'))
const HOT = tronHexOfKey(KEY)
const OTHER = '41' + bytesToHex(sha256(utf8ToBytes('history recipient'))).slice(0, 40)
const USDT = 1_000_000n
const TRX = 1_000_000n

describe('the TronGrid adapter reports what the hot wallet holds and sent', () => {
  let node: TronGridStandIn
  let rail: TronGridRail
  beforeEach(async () => {
    node = new TronGridStandIn({ apiKeys: ['history-key'] })
    node.produceBlocks(25)
    node.account(HOT).balance = 100_000n * TRX
    node.usdt.set(HOT, 10_000n * USDT)
    await node.start()
    rail = createTronGridRail({
      url: node.url,
      apiKey: 'history-key',
      privateKeyHex: bytesToHex(KEY),
      usdtContract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      feeLimitSun: 100_000_000n,
    })
  })
  afterEach(() => node.stop())

  it('reads USDT at the solidified state, and the TRX beside it', async () => {
    const first = node.transferSignedElsewhere(HOT, OTHER, 7n * USDT)
    node.produceBlocks(1)
    // In a block, not solidified: the solidity view still holds the 7 USDT, the head does not.
    expect(node.usdt.get(HOT)).toBe(9_993n * USDT)
    const before = await rail.reserves!()
    expect(before.balances.USDT).toBe(10_000n * USDT)
    expect(before.balances.TRX).toBe(node.account(HOT).balance)
    expect(before.incoming).toEqual({ USDT: 0n })
    expect(await rail.payments!(0)).toEqual([])
    node.solidify()
    expect((await rail.reserves!()).balances.USDT).toBe(9_993n * USDT)
    const listed = await rail.payments!(0)
    expect(listed).toEqual([{ ref: first, direction: 'out', amountMinor: 7n * USDT, at: expect.any(Number) }])
    expect(node.requests.map((r) => r.path)).toContain('/walletsolidity/triggerconstantcontract')
    const query = node.requests.find((r) => r.path.startsWith('/v1/'))!
    expect(query.headers['tron-pro-api-key']).toBe('history-key')
  })

  it('pages through more transfers than TronGrid answers at once, by fingerprint, from the time asked', async () => {
    // 403 transfers: three pages of 200 and one of 3 (the last full page's fingerprint leads to it).
    for (let i = 0; i < 403; i++) node.transferSignedElsewhere(HOT, OTHER, BigInt(i + 1))
    node.produceBlocks(1)
    // Blocks hold whatever the pool has: all 403 went into one block; one more goes in a later one.
    const late = node.transferSignedElsewhere(HOT, OTHER, 1_000n)
    node.produceBlocks(1)
    node.solidify()
    const all = await rail.payments!(0)
    expect(all).toHaveLength(404)
    expect(all.reduce((sum, p) => sum + p.amountMinor, 0n)).toBe((403n * 404n) / 2n + 1_000n)
    const pages = node.requests.filter((r) => r.path.startsWith('/v1/')).length
    expect(pages).toBe(3)
    // A transfer received is not a payment of the hot wallet: only_from.
    node.usdt.set(OTHER, 50n * USDT)
    node.account(OTHER).balance = 100n * TRX
    node.transferSignedElsewhere(OTHER, HOT, 10n * USDT)
    node.produceBlocks(1)
    node.solidify()
    expect(await rail.payments!(0)).toHaveLength(404)
    // From the time of the late block on, only what was sent since.
    const at = all.find((p) => p.ref === late)!.at
    expect((await rail.payments!(at)).map((p) => p.ref)).toEqual([late])
  })

  it("sums a transaction's transfers when Tether takes its fee out of the amount", async () => {
    node.basisPointsRate = 10n
    node.maximumFee = 5n * USDT
    const tx = node.transferSignedElsewhere(HOT, OTHER, 1_000n * USDT)
    node.produceBlocks(1)
    node.solidify()
    // Two Transfer events under one transaction: 999 to the recipient and 1 to Tether's owner.
    expect(node.transfers.filter((t) => t.txId === tx)).toHaveLength(2)
    expect(await rail.payments!(0)).toEqual([
      { ref: tx, direction: 'out', amountMinor: 1_000n * USDT, at: expect.any(Number) },
    ])
  })

  it('fails, so that reconciliation says unknown, on an error or an answer it cannot read', async () => {
    node.fault('/walletsolidity/triggerconstantcontract', { kind: 'status', status: 503 })
    await expect(rail.reserves!()).rejects.toBeInstanceOf(RailFailure)
    node.handlers.set('/wallet/getaccount', () => ({ json: { balance: 1.5 } }))
    await expect(rail.reserves!()).rejects.toThrow(/balance is not a whole number/)
    node.handlers.clear()
    const path = `/v1/accounts/${rail.hotWalletAddress}/transactions/trc20`
    node.handlers.set(path, () => ({
      json: {
        success: true,
        data: [
          {
            transaction_id: 'zz',
            from: rail.hotWalletAddress,
            token_info: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
            value: '1',
          },
        ],
        meta: {},
      },
    }))
    // TronGrid's 400 first (a fault comes before any handler), then an item that cannot be read.
    node.fault(path, {
      kind: 'status',
      status: 400,
      body: '{"success":false,"error":"Invalid address provided","statusCode":400}',
    })
    await expect(rail.payments!(0)).rejects.toThrow(/Invalid address provided/)
    await expect(rail.payments!(0)).rejects.toThrow(/without a transaction id or value/)
  })
})
