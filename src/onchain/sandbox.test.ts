import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { p2tr, p2wpkh } from '@scure/btc-signer'
import type { BTC_NETWORK } from '@scure/btc-signer/utils.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { createTestDb } from '../../test/helpers/harness.js'
import { migrate } from '../db/migrate.js'
import type { Db } from '../db/db.js'
import { createSandboxOnchainRail, type SandboxOnchainRail } from './sandbox.js'

const REGTEST: BTC_NETWORK = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }
const pub = secp256k1.getPublicKey(new Uint8Array(32).fill(5), true)
const ADDR = p2wpkh(pub, REGTEST).address!
const TAPROOT = p2tr(pub.subarray(1), undefined, REGTEST).address!

describe('the sandbox chain', () => {
  let db: Db
  let drop: () => Promise<void>
  let chain: SandboxOnchainRail
  beforeAll(async () => {
    ;({ db, drop } = await createTestDb())
    await migrate(db)
    chain = createSandboxOnchainRail({ db, network: 'regtest' })
  })
  afterAll(async () => {
    await db?.close()
    await drop?.()
  })

  it('puts outside payments in the mempool and counts confirmations as blocks are mined', async () => {
    const start = await chain.height()
    const { txid } = await chain.sendFromOutside({ address: ADDR, amountSats: 12_345n })
    expect(txid).toMatch(/^[0-9a-f]{64}$/)
    expect(await chain.listOutputs(ADDR)).toEqual([{ txid, vout: 0, amountSats: 12_345n, confirmations: 0 }])
    expect(await chain.getTransaction(txid)).toEqual({ confirmations: 0 })
    expect(await db.tx((q) => chain.mine(q, 1))).toBe(start + 1)
    expect((await chain.listOutputs(ADDR))[0]!.confirmations).toBe(1)
    // A transaction sent after a block waits for the next one.
    const later = await chain.sendFromOutside({ address: ADDR, amountSats: 1n })
    expect(await db.tx((q) => chain.mine(q, 5))).toBe(start + 6)
    expect(await chain.getTransaction(txid)).toEqual({ confirmations: 6 })
    expect(await chain.getTransaction(later.txid)).toEqual({ confirmations: 5 })
    expect(await chain.getTransaction('ff'.repeat(32))).toBeNull()
    await expect(db.tx((q) => chain.mine(q, 0))).rejects.toThrow(RangeError)
  })

  it('sends from the hot wallet idempotently by request id, with a sha256 txid', async () => {
    const send = () =>
      chain.send({ address: TAPROOT, amountSats: 50_000n, feeRateSatPerVb: 10n, requestId: 'txn_abc' })
    const [a, b] = await Promise.all([send(), send(), send()])
    expect(a).toEqual(b)
    expect(a!.txid).toBe(createHash('sha256').update('svcpay-sandbox-send:txn_abc').digest('hex'))
    const outs = await chain.listOutputs(TAPROOT)
    expect(outs).toHaveLength(1)
    const { rows } = await db.query('SELECT fee_sats FROM sandbox_chain_txs WHERE txid = $1', [a!.txid])
    // 10 sat/vB for a P2TR send of 153 vB.
    expect(rows[0].fee_sats).toBe(1_530n)
    const bad = chain.send({ address: 'bc1qnotours', amountSats: 1n, feeRateSatPerVb: 1n, requestId: 'x' })
    await expect(bad).rejects.toMatchObject({ code: 'invalid_address', retryable: false })
  })

  it('estimates lower fee rates for later confirmation targets', async () => {
    const rates = await Promise.all([1, 3, 6, 25].map((t) => chain.estimateFeeRate(t)))
    expect(rates).toEqual([25n, 12n, 6n, 2n])
  })
})

describe('the sandbox chain: payments() for reconciliation', () => {
  let db: Db
  let drop: () => Promise<void>
  beforeAll(async () => {
    ;({ db, drop } = await createTestDb())
    await migrate(db)
  })
  afterAll(async () => {
    await db?.close()
    await drop?.()
  })

  it('lists our sends by their latest txid with the fee, once they have the confirmations the service needs', async () => {
    const chain = createSandboxOnchainRail({ db, network: 'regtest', creditConfirmations: 2 })
    const since = Date.now() - 1_000
    const sent = await chain.send({
      address: TAPROOT,
      amountSats: 50_000n,
      feeRateSatPerVb: 10n,
      requestId: 'pay-1',
    })
    const bumped = await chain.bumpFee!(sent.txid, 20n)
    // An outside payment to an address that is not ours is no payment of ours.
    await chain.sendFromOutside({ address: ADDR, amountSats: 7_000n })
    expect(await chain.payments!(since)).toEqual([])
    await db.tx((q) => chain.mine(q, 1))
    expect(await chain.payments!(since)).toEqual([])
    await db.tx((q) => chain.mine(q, 1))
    const listed = await chain.payments!(since)
    expect(listed).toEqual([
      { ref: bumped.txid, direction: 'out', amountMinor: 50_000n + bumped.feeSats!, at: expect.any(Number) },
    ])
    // Two days of look-back before the window; nothing after it.
    expect(await chain.payments!(Date.now() + 3 * 86_400_000)).toEqual([])
  })
})
