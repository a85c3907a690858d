import type { Queryable } from '../db/db.js'
import { exportPostingBatch } from '../ledger/reads.js'
import { exportTxnBatch } from '../transactions/reads-reports.js'
import { formatMinor } from '../shared/amount.js'
import { csvNumber } from '../shared/csv.js'

/**
 * Exports for accountants: the transactions, or the ledger's postings, of one account or of the
 * whole service over a time range, as CSV rows. Rows are read in keyset order, a batch at a time
 * (the next batch starts after the last row of the previous one), on both engines: no cursor or
 * connection is held between batches, so a slow download pins nothing in the database, and only
 * one batch is ever in memory. Amounts are exact decimals of the row's currency.
 */
export interface ExportRange {
  /** Inclusive, epoch milliseconds. */
  fromMs: number
  /** Exclusive, epoch milliseconds. */
  toMs: number
  /** One account's rows (not its sub-accounts'); the whole service when absent. */
  accountId?: string
}

export const EXPORT_BATCH = 1_000

const iso = (ms: unknown) => new Date(Number(ms)).toISOString()
const amount = (minor: unknown, ccy: string) => csvNumber(formatMinor(BigInt(minor as bigint), ccy))
const maybeAmount = (minor: unknown, ccy: string) => (minor === null ? null : amount(minor, ccy))

export const TRANSACTION_COLUMNS = [
  'id',
  'created_at',
  'updated_at',
  'account_id',
  'ext_ref_id',
  'kind',
  'state',
  'src_ccy',
  'src_method',
  'src_amount',
  'src_fee',
  'src_network_fee',
  'src_settled',
  'dest_ccy',
  'dest_method',
  'dest_amount',
  'dest_settled',
  'fx_rate',
  'rail_ref',
  'note',
] as const

export async function* transactionRows(db: Queryable, range: ExportRange): AsyncGenerator<unknown[][]> {
  let after: [bigint, string] | undefined
  for (;;) {
    const rows = await exportTxnBatch(db, range, after, EXPORT_BATCH)
    if (rows.length === 0) return
    yield rows.map((r) => [
      r.id,
      iso(r.created_at),
      iso(r.updated_at),
      r.account_id,
      r.ext_ref_id,
      r.kind,
      r.state,
      r.src_ccy,
      r.src_method,
      amount(r.src_amount, r.src_ccy),
      amount(r.src_fee, r.src_ccy),
      amount(r.src_network_fee, r.src_ccy),
      maybeAmount(r.src_settled, r.src_ccy),
      r.dest_ccy,
      r.dest_method,
      amount(r.dest_amount, r.dest_ccy),
      maybeAmount(r.dest_settled, r.dest_ccy),
      r.fx_rate,
      r.rail_ref,
      r.note,
    ])
    if (rows.length < EXPORT_BATCH) return
    const last = rows[rows.length - 1]
    after = [BigInt(last.created_at), last.id]
  }
}

export const LEDGER_ENTRY_COLUMNS = [
  'posting_id',
  'entry_id',
  'created_at',
  'txn_id',
  'entry_kind',
  'ledger_account_id',
  'account_id',
  'ledger_account_kind',
  'ccy',
  'amount',
] as const

/** One row per posting: a journal entry's postings follow each other and sum to zero per currency. */
export async function* ledgerEntryRows(db: Queryable, range: ExportRange): AsyncGenerator<unknown[][]> {
  let after: [bigint, bigint, bigint] | undefined
  for (;;) {
    const rows = await exportPostingBatch(db, range, after, EXPORT_BATCH)
    if (rows.length === 0) return
    yield rows.map((r) => [
      String(r.posting_id),
      String(r.entry_id),
      iso(r.created_at),
      r.txn_id,
      r.entry_kind,
      r.ledger_account_id,
      r.account_id,
      r.ledger_account_kind,
      r.ccy,
      amount(r.amount, r.ccy),
    ])
    if (rows.length < EXPORT_BATCH) return
    const last = rows[rows.length - 1]
    after = [BigInt(last.created_at), BigInt(last.entry_id), BigInt(last.posting_id)]
  }
}
