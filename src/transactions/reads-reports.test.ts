import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../db/sql.js'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { accountIdsOf, accountIdsWithExtRef, otherStateByRailRef, txnByRailRef } from './reads.js'
import { txnsByReference } from './reads-reports.js'
import type { TxnState } from './state-machine.js'
import { asTxnId, type TxnId } from '../shared/ids.js'

const swap = (extRefId: string) => ({
  extRefId,
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
})

describe('reads of transactions by reference', () => {
  let h: Harness
  let a: TestAccount
  let b: TestAccount
  let first: TxnId
  let second: string

  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Ref A' })
    b = await h.createAccount({ name: 'Ref B' })
    await h.fund(a.accountId, 'BTC', '0.01')
    first = asTxnId((await h.api('POST', '/api/v2/transaction', a.token, swap('order-1'))).body.txnId)
    second = (await h.api('POST', '/api/v2/transaction', a.token, swap('order-2'))).body.txnId
    // Arranged by hand: a rail reference and one in the details, as a rail's flow would set them.
    await h.c.db.query(
      sql`UPDATE transactions SET rail_ref = 'hash-1', src_details = ${{ paymentHash: 'hash-2' }}::jsonb WHERE id = ${first}`,
    )
    await h.c.db.query(
      sql`UPDATE transactions SET dest_details = ${{ txid: 'hash-2' }}::jsonb WHERE id = ${second}`,
    )
  })
  afterAll(async () => h?.close())

  it('finds by id, extRefId, rail reference and the details, newest first, never by another key', async () => {
    const ids = async (ref: string, keys = ['paymentHash', 'txid']) =>
      (await txnsByReference(h.c.db, ref, keys, 50)).map((t) => t.id)
    expect(await ids(first)).toEqual([first])
    expect(await ids('order-2')).toEqual([second])
    expect(await ids('hash-1')).toEqual([first])
    expect(await ids('hash-2')).toEqual([second, first])
    expect(await ids('hash-2', ['address'])).toEqual([])
    expect(await ids("' OR true --")).toEqual([])
    expect(await txnsByReference(h.c.db, 'hash-2', ['paymentHash', 'txid'], 1)).toHaveLength(1)
  })

  it('reads a row by kind and rail reference, and another live one of the same reference', async () => {
    expect((await txnByRailRef(h.c.db, 'swap', 'hash-1'))?.id).toBe(first)
    expect(await txnByRailRef(h.c.db, 'ln_receive', 'hash-1')).toBeUndefined()
    const other = (exceptId: string, states: TxnState[] = ['quoted', 'completed']) =>
      otherStateByRailRef(h.c.db, { kind: 'swap', railRef: 'hash-1', exceptId, states })
    expect(await other(second)).toBe('quoted')
    expect(await other(second, ['completed'])).toBeUndefined()
    expect(await other(first)).toBeUndefined()
  })

  it('maps transactions to their accounts, and finds accounts by extRefId inside another statement', async () => {
    expect(await accountIdsOf(h.c.db, [first, asTxnId('txn_none')])).toEqual(new Map([[first, a.accountId]]))
    expect(await accountIdsOf(h.c.db, [])).toEqual(new Map())
    const { rows } = await h.c.db.query<{ id: string }>(
      sql`SELECT id FROM accounts WHERE id IN (${accountIdsWithExtRef('order-1')}) OR id = ${b.accountId} ORDER BY id`,
    )
    expect(rows.map((r) => r.id).sort()).toEqual([a.accountId, b.accountId].sort())
  })
})
