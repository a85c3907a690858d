import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDb } from '../../../test/helpers/harness.js'
import { migrate } from '../../db/migrate.js'
import type { Db } from '../../db/db.js'
import { createSandboxTronRail, SANDBOX_TRON_FAIL_REASON } from './sandbox.js'
import { RailFailure } from '../../rails/rail.js'

const GOOD = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const FAILING = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7'

describe('sandbox TRON rail', () => {
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
  const rail = () => createSandboxTronRail({ db, failAddresses: [FAILING], delayMs: 1500, now: () => clock })

  it('sends with a 64-hex transaction hash, pending until the delay has passed, then completed', async () => {
    const { txHash } = await rail().sendUsdt({ to: GOOD, amountMinor: 5_000_000n, requestId: 'txn_a' })
    expect(txHash).toMatch(/^[0-9a-f]{64}$/)
    expect(await rail().getTransfer(txHash)).toEqual({ status: 'pending' })
    clock += 1499
    expect(await rail().getTransfer(txHash)).toEqual({ status: 'pending' })
    clock += 1
    expect(await rail().getTransfer(txHash)).toEqual({ status: 'completed' })
  })

  it('is idempotent by request id', async () => {
    const first = await rail().sendUsdt({ to: GOOD, amountMinor: 1n, requestId: 'txn_b' })
    const again = await rail().sendUsdt({ to: GOOD, amountMinor: 1n, requestId: 'txn_b' })
    expect(again.txHash).toBe(first.txHash)
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM sandbox_payouts WHERE request_id = 'txn_b'`,
    )
    expect(rows[0].n).toBe(1)
  })

  it('fails transfers to a SANDBOX_TRON_FAIL address once settled', async () => {
    const { txHash } = await rail().sendUsdt({ to: FAILING, amountMinor: 2n, requestId: 'txn_c' })
    expect(await rail().getTransfer(txHash)).toEqual({ status: 'pending' })
    clock += 1500
    expect(await rail().getTransfer(txHash)).toEqual({ status: 'failed', reason: SANDBOX_TRON_FAIL_REASON })
  })

  it('reports an unknown hash as a permanent rail failure', async () => {
    const err = await rail()
      .getTransfer('00'.repeat(32))
      .catch((e) => e)
    expect(err).toBeInstanceOf(RailFailure)
    expect(err.retryable).toBe(false)
  })
})
