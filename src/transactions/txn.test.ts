import { describe, expect, it } from 'vitest'
import { insertColumns, patchColumns, TXN_COLUMNS, txnFromRow, type NewTxn, type Txn } from './txn.js'

/** The one mapping between a Txn and its row, alone (the engines test it through every flow). */

const row = {
  id: 'txn_1',
  account_id: 'acc_1',
  ext_ref_id: null,
  request_hash: 'h',
  kind: 'swap',
  state: 'completed',
  msg: '',
  note: null,
  deduct_fees_from_dest: false,
  src_ccy: 'BTC',
  src_method: 'svcpay',
  src_amount: 100n,
  src_fee: 1n,
  src_network_fee: 0n,
  src_settled: 100n,
  src_details: { a: 1 },
  src_created_at: 1_767_225_600_000n,
  src_updated_at: 1_767_225_600_001n,
  dest_ccy: 'USD',
  dest_method: 'svcpay',
  dest_amount: 9n,
  dest_settled: null,
  dest_details: {},
  dest_created_at: 1_767_225_600_000n,
  dest_updated_at: 1_767_225_600_001n,
  fx_rate: '0.09',
  expires_at: 1_767_225_900_000n,
  kyc: null,
  source_of_funds: null,
  rail_ref: null,
  page_id: null,
  next_check_at: null,
  created_at: 1_767_225_600_000n,
  updated_at: 1_767_225_600_001n,
}

describe('txn mapping', () => {
  it('reads a row: times as numbers, amounts as bigint, other columns left out', () => {
    const txn = txnFromRow({ ...row, enqueued: 1 })
    expect(txn.createdAtMs).toBe(1_767_225_600_000)
    expect(txn.expiresAtMs).toBe(1_767_225_900_000)
    expect(txn.nextCheckAtMs).toBeNull()
    expect(txn.srcAmountMinor).toBe(100n)
    expect(txn.destSettledMinor).toBeNull()
    expect(txn.srcDetails).toEqual({ a: 1 })
    expect(Object.keys(txn)).toHaveLength(34)
    expect('enqueued' in txn).toBe(false)
  })

  it('reads every field from the column TXN_COLUMNS names for it', () => {
    const txn = txnFromRow(row)
    for (const [field, [column, kind]] of Object.entries(TXN_COLUMNS)) {
      const stored = row[column as keyof typeof row]
      const expected = kind === 'time' && stored !== null ? Number(stored) : stored
      expect([field, txn[field as keyof Txn]]).toEqual([field, expected])
    }
    expect(Object.keys(txn).sort()).toEqual(Object.keys(TXN_COLUMNS).sort())
  })

  it('inserts the columns a new transaction has, in table order, details as JSON text', () => {
    const { msg: _m, src_settled: _s, dest_settled: _d, rail_ref: _r, page_id: _p, ...inserted } = row
    const txn = txnFromRow(row) as NewTxn
    const columns = insertColumns(txn)
    expect(columns.map(([column]) => column)).toEqual(Object.keys(inserted))
    expect(Object.fromEntries(columns)).toMatchObject({
      src_details: '{"a":1}',
      kyc: null,
      created_at: 1_767_225_600_000,
      src_amount: 100n,
    })
  })

  it('patches the columns of the fields given, in their order', () => {
    expect(patchColumns({ nextCheckAtMs: 5, destDetails: { txid: 't' }, srcSettledMinor: 3n })).toEqual([
      ['next_check_at', 5],
      ['dest_details', '{"txid":"t"}'],
      ['src_settled', 3n],
    ])
  })
})
