import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDb } from '../../../test/helpers/harness.js'
import { migrate } from '../../db/migrate.js'
import type { Db } from '../../db/db.js'
import { RailFailure } from '../../rails/rail.js'
import { createSandboxEthRail, SANDBOX_ETH_FAIL_REASON } from './sandbox.js'

const GOOD = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const FAILING = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'
const CAP = 1_300_000_000_000_000n

describe('sandbox Ethereum rail', () => {
  let db: Db
  let drop: () => Promise<void>
  let clock = 1_000_000
  beforeAll(async () => {
    ;({ db, drop } = await createTestDb())
    await migrate(db)
  })
  afterAll(async () => {
    await db.close()
    await drop()
  })
  const rail = () => createSandboxEthRail({ db, failAddresses: [FAILING], delayMs: 1500, now: () => clock })
  const send = (requestId: string, to = GOOD, amountMinor = 5_000_000n, maxFeeWei = CAP) =>
    rail().sendUsdt({ to, amountMinor, requestId, maxFeeWei })

  it('quotes its fee cap and gas limit, whose product is the cap a send needs', async () => {
    const fee = await rail().feeQuote()
    expect(fee.maxFeePerGasWei * fee.gasLimit).toBe(CAP)
  })

  it('sends with a 0x and 64-hex hash, pending until final, then completed with the fee paid in ETH', async () => {
    const { txHash } = await send('txn_a')
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const expected = { to: GOOD, amountMinor: 5_000_000n }
    expect(await rail().getTransfer('txn_a', expected)).toEqual({ status: 'pending', txHash })
    clock += 1499
    expect((await rail().getTransfer('txn_a', expected)).status).toBe('pending')
    clock += 1
    expect(await rail().getTransfer('txn_a', expected)).toEqual({
      status: 'completed',
      txHash,
      feeWei: 552_000_000_000_000n,
    })
    await expect(rail().getTransfer('txn_a', { to: GOOD, amountMinor: 1n })).rejects.toMatchObject({
      code: 'transfer_mismatch',
    })
  })

  it('is idempotent by request id', async () => {
    const first = await send('txn_b')
    expect((await send('txn_b')).txHash).toBe(first.txHash)
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM sandbox_payouts WHERE request_id = 'txn_b'`,
    )
    expect(rows[0]).toEqual({ n: 1 })
  })

  it('reverts a transfer to a SANDBOX_ETH_FAIL address, whatever its case', async () => {
    await send('txn_c', FAILING.toLowerCase())
    clock += 1500
    expect(await rail().getTransfer('txn_c', { to: FAILING, amountMinor: 5_000_000n })).toMatchObject({
      status: 'failed',
      reason: SANDBOX_ETH_FAIL_REASON,
    })
  })

  it('refuses, final and before sending, a cap below its fee, and a non-positive amount', async () => {
    const low = send('txn_d', GOOD, 1n, CAP - 1n)
    await expect(low).rejects.toBeInstanceOf(RailFailure)
    await expect(low).rejects.toMatchObject({ code: 'fee_cap_too_low', retryable: false })
    await expect(send('txn_e', GOOD, 0n)).rejects.toMatchObject({ code: 'invalid_amount', retryable: false })
    const { rows } = await db.query(`SELECT 1 FROM sandbox_payouts WHERE request_id IN ('txn_d', 'txn_e')`)
    expect(rows).toHaveLength(0)
  })

  it('reports what its hot wallet paid out, and its payments', async () => {
    const reserves = await rail().reserves!()
    expect(reserves.balances.USDT).toBe(-10_000_000n)
    const payments = await rail().payments!(0)
    expect(payments.map((p) => p.amountMinor)).toEqual([5_000_000n, 5_000_000n])
    expect((await rail().check!()).balances).toEqual({ USDT: '-10' })
  })
})
