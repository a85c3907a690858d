import type { TxnKind, TxnState } from './state-machine.js'
import type { AccountId, TxnId } from '../shared/ids.js'
import { amountJson, DecimalText } from '../shared/amount.js'

/**
 * A transaction. Amounts (`…Minor`) are minor units of their side's currency, as bigint; times
 * (`…AtMs`) are milliseconds since the epoch, which a number holds exactly.
 */
export interface Txn {
  id: TxnId
  accountId: AccountId
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
export const TXN_COLUMNS: { readonly [F in keyof Txn]: Column } = {
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

const FIELDS = Object.keys(TXN_COLUMNS) as Array<keyof Txn>

/** Fields a new transaction is inserted without: later changes set them (the message has a default). */
const SET_LATER = ['msg', 'srcSettledMinor', 'destSettledMinor', 'railRef', 'pageId'] as const

/** The fields an insert writes, in column order. */
const INSERTED = FIELDS.filter((field) => !(SET_LATER as readonly string[]).includes(field))

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

/** A stored time (an int8 column comes back as bigint) as milliseconds. */
const ms = (value: unknown): number => Number(value)

/**
 * A row of `transactions` (`SELECT *`, or `RETURNING *`) as a Txn; other columns it has are left
 * out. Written out field by field rather than looped over TXN_COLUMNS: every read of a transaction
 * passes here, and an object built in one literal is several times cheaper to make and to read
 * (txn.test.ts checks it against TXN_COLUMNS, so the two cannot drift apart).
 */
export function txnFromRow(row: Record<string, any>): Txn {
  return {
    id: row.id,
    accountId: row.account_id,
    extRefId: row.ext_ref_id,
    requestHash: row.request_hash,
    kind: row.kind,
    state: row.state,
    msg: row.msg,
    note: row.note,
    deductFeesFromDest: row.deduct_fees_from_dest,
    srcCcy: row.src_ccy,
    srcMethod: row.src_method,
    srcAmountMinor: row.src_amount,
    srcFeeMinor: row.src_fee,
    srcNetworkFeeMinor: row.src_network_fee,
    srcSettledMinor: row.src_settled,
    srcDetails: row.src_details,
    srcCreatedAtMs: ms(row.src_created_at),
    srcUpdatedAtMs: ms(row.src_updated_at),
    destCcy: row.dest_ccy,
    destMethod: row.dest_method,
    destAmountMinor: row.dest_amount,
    destSettledMinor: row.dest_settled,
    destDetails: row.dest_details,
    destCreatedAtMs: ms(row.dest_created_at),
    destUpdatedAtMs: ms(row.dest_updated_at),
    fxRate: row.fx_rate,
    expiresAtMs: ms(row.expires_at),
    kyc: row.kyc,
    sourceOfFunds: row.source_of_funds,
    railRef: row.rail_ref,
    pageId: row.page_id,
    nextCheckAtMs:
      row.next_check_at === null || row.next_check_at === undefined ? null : ms(row.next_check_at),
    createdAtMs: ms(row.created_at),
    updatedAtMs: ms(row.updated_at),
  }
}

/** A value as it is sent for its column. */
function columnValue(kind: Column[1], value: unknown): unknown {
  if (kind === 'json') return value === null || value === undefined ? null : JSON.stringify(value)
  return value
}

/** The columns an insert writes, in the order of `insertColumns`. */
export const INSERT_COLUMN_NAMES: readonly string[] = INSERTED.map((field) => TXN_COLUMNS[field][0])

/** The columns and values of a new transaction, in column order. */
export function insertColumns(txn: NewTxn): Array<[column: string, value: unknown]> {
  return INSERTED.map((field) => {
    const [name, kind] = TXN_COLUMNS[field]
    return [name, columnValue(kind, txn[field as keyof NewTxn])]
  })
}

/** The columns and values a patch sets, in the patch's own order. */
export function patchColumns(patch: TxnPatch): Array<[column: string, value: unknown]> {
  return Object.entries(patch).map(([field, value]) => {
    const [name, kind] = TXN_COLUMNS[field as keyof TxnPatch]
    return [name, columnValue(kind, value)]
  })
}

// ---- The transaction as the contract shows it (the API's answers). ----

/** The contract's reqStatus of each side: '0' pending, '1' in progress, '2' completed, '3' failed. */
export function reqStatuses(state: TxnState): { src: string; dest: string } {
  switch (state) {
    case 'quoted':
    case 'srcintent':
      return { src: '0', dest: '0' }
    case 'srccreated':
    case 'processing':
      return { src: '1', dest: '0' }
    case 'destsent':
      return { src: '2', dest: '1' }
    case 'completed':
      return { src: '2', dest: '2' }
    default:
      return { src: '3', dest: '3' }
  }
}

/** A transaction in the spec's response shape, amounts as exact decimals. */
export function txnJson(txn: Txn, accountDisplayName: string) {
  const status = reqStatuses(txn.state)
  const side = (prefix: 'src' | 'dest') => {
    const ccy = prefix === 'src' ? txn.srcCcy : txn.destCcy
    const settled = prefix === 'src' ? txn.srcSettledMinor : txn.destSettledMinor
    return {
      ccy,
      method: prefix === 'src' ? txn.srcMethod : txn.destMethod,
      amtRequested: amountJson(prefix === 'src' ? txn.srcAmountMinor : txn.destAmountMinor, ccy),
      amtSettled: settled === null ? null : amountJson(settled, ccy),
      svcpayFees: amountJson(prefix === 'src' ? txn.srcFeeMinor : 0n, ccy),
      networkFees: amountJson(prefix === 'src' ? txn.srcNetworkFeeMinor : 0n, ccy),
      reqStatus: prefix === 'src' ? status.src : status.dest,
      expiresAt: txn.expiresAtMs,
      createAt: prefix === 'src' ? txn.srcCreatedAtMs : txn.destCreatedAtMs,
      updatedAt: prefix === 'src' ? txn.srcUpdatedAtMs : txn.destUpdatedAtMs,
      reqDetails: presentDetails(prefix === 'src' ? txn.srcDetails : txn.destDetails),
      ...(prefix === 'dest' && txn.kyc ? { kyc: txn.kyc } : {}),
    }
  }
  return {
    txnId: txn.id,
    accountId: txn.accountId,
    accountDisplayName,
    ...(txn.extRefId !== null ? { extRefId: txn.extRefId } : {}),
    txnState: txn.state,
    msg: txn.msg,
    ...(txn.note !== null ? { note: txn.note } : {}),
    deductNetworkFeesFromDest: txn.deductFeesFromDest,
    sourceReq: side('src'),
    destReq: side('dest'),
    ...(txn.sourceOfFunds ? { sourceOfFunds: txn.sourceOfFunds } : {}),
    fxRate: new DecimalText(txn.fxRate),
    createdAt: txn.createdAtMs,
    updatedAt: txn.updatedAtMs,
  }
}

/**
 * Details are stored as JSON; numbers that are amounts are stored as `{ "$dec": "0.001" }` so they
 * come out as exact decimals, never through a float.
 */
function presentDetails(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(details)) {
    out[k] =
      v && typeof v === 'object' && '$dec' in (v as object) ? new DecimalText(String((v as any).$dec)) : v
  }
  return out
}

/** Store an amount inside details so `presentDetails` writes it back exactly. */
export const decimalDetail = (text: string) => ({ $dec: text })
