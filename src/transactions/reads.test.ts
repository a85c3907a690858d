import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, createTestDb, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { createTxnReader } from './reads.js'
import { asTxnId, type TxnId } from '../shared/ids.js'

const swap = {
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
}

describe('transaction reads coalesced per turn of the event loop', () => {
  let h: Harness
  let a: TestAccount
  let b: TestAccount
  const ids: TxnId[] = []

  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Reader A' })
    b = await h.createAccount({ name: 'Reader B' })
    await h.fund(a.accountId, 'BTC', '0.01')
    for (let i = 0; i < 5; i++)
      ids.push(asTxnId((await h.api('POST', '/api/v2/transaction', a.token, swap)).body.txnId))
  })
  afterAll(async () => h?.close())

  /** A reader over the harness's database that counts the statements it sends. */
  const countingReader = () => {
    const seen = { statements: 0 }
    const reader = createTxnReader({
      query: (sql, params) => {
        seen.statements++
        return h.c.db.query(sql, params)
      },
    })
    return { reader, seen }
  }

  it('answers many reads made together with one statement, each with its own row', async () => {
    const { reader, seen } = countingReader()
    const rows = await Promise.all([...ids, ids[0]!].map((id) => reader.get(id, a.accountId)))
    expect(seen.statements).toBe(1)
    expect(rows.map((r) => r?.id)).toEqual([...ids, ids[0]])
    expect(rows.every((r) => r?.accountId === a.accountId)).toBe(true)
  })

  it("gives nothing for another account's transaction or an unknown id, even in the same batch", async () => {
    const { reader, seen } = countingReader()
    const [own, others, unknown] = await Promise.all([
      reader.get(ids[1]!, a.accountId),
      reader.get(ids[1]!, b.accountId),
      reader.get(asTxnId('txn_doesnotexist'), a.accountId),
    ])
    expect(seen.statements).toBe(1)
    expect(own?.id).toBe(ids[1])
    expect(others).toBeUndefined()
    expect(unknown).toBeUndefined()
    expect(await reader.get(ids[2]!, b.accountId)).toBeUndefined()
  })

  it('sees a change committed before the read was asked for', async () => {
    const { reader } = countingReader()
    expect((await reader.get(ids[3]!, a.accountId))?.state).toBe('quoted')
    await h.api('PUT', `/api/v2/transaction/${ids[3]}/confirm`, a.token)
    expect((await reader.get(ids[3]!, a.accountId))?.state).toBe('completed')
  })

  it('splits a large batch into statements of at most 200 reads', async () => {
    const { reader, seen } = countingReader()
    const many = Array.from({ length: 450 }, (_, i) =>
      i < ids.length ? ids[i]! : asTxnId(`txn_missing_${i}`),
    )
    const rows = await Promise.all(many.map((id) => reader.get(id, a.accountId)))
    expect(seen.statements).toBe(3)
    expect(rows.filter(Boolean).map((r) => r!.id)).toEqual(ids)
  })

  it('rejects every read of a batch whose statement failed', async () => {
    const gone = await createTestDb()
    await gone.db.close()
    const reader = createTxnReader(gone.db)
    const results = await Promise.allSettled([
      reader.get(ids[0]!, a.accountId),
      reader.get(ids[1]!, a.accountId),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    await gone.drop()
  })
})
