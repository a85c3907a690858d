import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDb } from '../../../test/helpers/harness.js'
import { migrate } from '../../db/migrate.js'
import type { Db } from '../../db/db.js'
import { createSandboxBankRail } from './sandbox.js'

const payout = (bankAcctNum: string, requestId: string) => ({
  requestId,
  amountMinor: 500_000n,
  ccy: 'VND' as const,
  bankAcctNum,
  institutionCode: '970436',
  beneficiary: { type: 'individual' as const, legalFullName: 'Nguyen Van A', countryCode: 'VN' },
  sourceOfFunds: { purpose: 1, source: 1, relationship: 1 },
})

describe('sandbox bank rail', () => {
  let db: Db
  let drop: () => Promise<void>
  let clock = 5_000_000
  beforeAll(async () => {
    ;({ db, drop } = await createTestDb())
    await migrate(db)
  })
  afterAll(async () => {
    await db.close()
    await drop()
  })
  const rail = () => createSandboxBankRail({ db, delayMs: 1000, now: () => clock })

  it('settles an ordinary account as completed after the delay, idempotently by request id', async () => {
    const { bankRef } = await rail().submitPayout(payout('0123456789', 'txn_1'))
    expect(bankRef).toMatch(/^SBX[0-9A-F]{16}$/)
    expect((await rail().submitPayout(payout('0123456789', 'txn_1'))).bankRef).toBe(bankRef)
    expect(await rail().getPayout(bankRef)).toEqual({ status: 'pending' })
    clock += 1000
    expect(await rail().getPayout(bankRef)).toEqual({ status: 'completed' })
  })

  it('rejects accounts ending 0000 and fails accounts ending 1111', async () => {
    const rejected = await rail().submitPayout(payout('9876540000', 'txn_2'))
    const failed = await rail().submitPayout(payout('9876541111', 'txn_3'))
    expect(await rail().getPayout(rejected.bankRef)).toEqual({ status: 'pending' })
    clock += 1000
    expect(await rail().getPayout(rejected.bankRef)).toEqual({
      status: 'rejected',
      reason: 'rejected_by_bank',
    })
    expect(await rail().getPayout(failed.bankRef)).toEqual({
      status: 'failed',
      reason: 'beneficiary_account_closed',
    })
  })

  it('keeps no account number or beneficiary name', async () => {
    const { rows } = await db.query('SELECT * FROM sandbox_payouts')
    const text = JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v))
    expect(text).not.toContain('9876540000')
    expect(text).not.toContain('Nguyen')
  })
})
