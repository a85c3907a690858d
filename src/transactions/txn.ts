import type { TxnKind, TxnState } from './state-machine.js'

/**
 * A transaction. Amounts (`…Minor`) are minor units of their side's currency, as bigint; times
 * (`…AtMs`) are milliseconds since the epoch, which a number holds exactly.
 */
export interface Txn {
  id: string
  accountId: string
  extRefId: string | null
  requestHash: string
  kind: TxnKind
  state: TxnState
  msg: string
  note: string | null
  deductFeesFromDest: boolean
  srcCcy: string
  srcMethod: string
  srcAmountMinor: bigint
  srcFeeMinor: bigint
  srcNetworkFeeMinor: bigint
  srcSettledMinor: bigint | null
  srcDetails: Record<string, unknown>
  srcCreatedAtMs: number
  srcUpdatedAtMs: number
  destCcy: string
  destMethod: string
  destAmountMinor: bigint
  destSettledMinor: bigint | null
  destDetails: Record<string, unknown>
  destCreatedAtMs: number
  destUpdatedAtMs: number
  fxRate: string
  expiresAtMs: number
  kyc: Record<string, unknown> | null
  sourceOfFunds: Record<string, unknown> | null
  railRef: string | null
  pageId: string | null
  nextCheckAtMs: number | null
  createdAtMs: number
  updatedAtMs: number
}

/**
 * How a field is stored: its column, and how its value is converted: a time is an int8 column (it
 * comes back as bigint), details are jsonb (written as their JSON text).
 */
type Column = readonly [name: string, kind?: 'time' | 'json']

/** The one place that knows the columns of `transactions`: every field of Txn, in column order. */
const COLUMNS: { readonly [F in keyof Txn]: Column } = {
  id: ['id'],
  accountId: ['account_id'],
  extRefId: ['ext_ref_id'],
  requestHash: ['request_hash'],
  kind: ['kind'],
  state: ['state'],
  msg: ['msg'],
  note: ['note'],
  deductFeesFromDest: ['deduct_fees_from_dest'],
  srcCcy: ['src_ccy'],
  srcMethod: ['src_method'],
  srcAmountMinor: ['src_amount'],
  srcFeeMinor: ['src_fee'],
  srcNetworkFeeMinor: ['src_network_fee'],
  srcSettledMinor: ['src_settled'],
  srcDetails: ['src_details', 'json'],
  srcCreatedAtMs: ['src_created_at', 'time'],
  srcUpdatedAtMs: ['src_updated_at', 'time'],
  destCcy: ['dest_ccy'],
  destMethod: ['dest_method'],
  destAmountMinor: ['dest_amount'],
  destSettledMinor: ['dest_settled'],
  destDetails: ['dest_details', 'json'],
  destCreatedAtMs: ['dest_created_at', 'time'],
  destUpdatedAtMs: ['dest_updated_at', 'time'],
  fxRate: ['fx_rate'],
  expiresAtMs: ['expires_at', 'time'],
  kyc: ['kyc', 'json'],
  sourceOfFunds: ['source_of_funds', 'json'],
  railRef: ['rail_ref'],
  pageId: ['page_id'],
  nextCheckAtMs: ['next_check_at', 'time'],
  createdAtMs: ['created_at', 'time'],
  updatedAtMs: ['updated_at', 'time'],
}

const FIELDS = Object.keys(COLUMNS) as Array<keyof Txn>

/** Fields a new transaction is inserted without: later changes set them (the message has a default). */
const SET_LATER = ['msg', 'srcSettledMinor', 'destSettledMinor', 'railRef', 'pageId'] as const

/** A transaction as it is inserted. */
export type NewTxn = Omit<Txn, (typeof SET_LATER)[number]>

/** Fields a transition may change besides the state. */
export type TxnPatch = Partial<
  Pick<
    Txn,
    | 'msg'
    | 'srcSettledMinor'
    | 'destSettledMinor'
    | 'srcDetails'
    | 'destDetails'
    | 'srcNetworkFeeMinor'
    | 'railRef'
    | 'pageId'
    | 'expiresAtMs'
    | 'nextCheckAtMs'
  >
>

/** A row of `transactions` (`SELECT *`, or `RETURNING *`) as a Txn; other columns it has are left out. */
export function txnFromRow(row: Record<string, unknown>): Txn {
  const txn: Record<string, unknown> = {}
  for (const field of FIELDS) {
    const [name, kind] = COLUMNS[field]
    const value = row[name]
    txn[field] = kind === 'time' && value !== null && value !== undefined ? Number(value) : value
  }
  return txn as unknown as Txn
}

/** A value as it is sent for its column. */
function columnValue(kind: Column[1], value: unknown): unknown {
  if (kind === 'json') return value === null || value === undefined ? null : JSON.stringify(value)
  return value
}

/** The columns and values of a new transaction, in column order. */
export function insertColumns(txn: NewTxn): Array<[column: string, value: unknown]> {
  const later = new Set<string>(SET_LATER)
  return FIELDS.filter((field) => !later.has(field)).map((field) => {
    const [name, kind] = COLUMNS[field]
    return [name, columnValue(kind, txn[field as keyof NewTxn])]
  })
}

/** The columns and values a patch sets, in the patch's own order. */
export function patchColumns(patch: TxnPatch): Array<[column: string, value: unknown]> {
  return Object.entries(patch).map(([field, value]) => {
    const [name, kind] = COLUMNS[field as keyof TxnPatch]
    return [name, columnValue(kind, value)]
  })
}
