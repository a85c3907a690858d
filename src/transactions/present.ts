import { amountJson, DecimalText } from '../shared/amount.js'
import { reqStatuses } from './state-machine.js'
import type { TxnRow } from './repository.js'

/** A transaction in the spec's response shape, amounts as exact decimals. */
export function txnJson(txn: TxnRow, accountDisplayName: string) {
  const status = reqStatuses(txn.state)
  const side = (prefix: 'src' | 'dest') => {
    const ccy = prefix === 'src' ? txn.src_ccy : txn.dest_ccy
    const settled = prefix === 'src' ? txn.src_settled : txn.dest_settled
    return {
      ccy,
      method: prefix === 'src' ? txn.src_method : txn.dest_method,
      amtRequested: amountJson(prefix === 'src' ? txn.src_amount : txn.dest_amount, ccy),
      amtSettled: settled === null ? null : amountJson(settled, ccy),
      svcpayFees: amountJson(prefix === 'src' ? txn.src_fee : 0n, ccy),
      networkFees: amountJson(prefix === 'src' ? txn.src_network_fee : 0n, ccy),
      reqStatus: prefix === 'src' ? status.src : status.dest,
      expiresAt: Number(txn.expires_at),
      createAt: Number(prefix === 'src' ? txn.src_created_at : txn.dest_created_at),
      updatedAt: Number(prefix === 'src' ? txn.src_updated_at : txn.dest_updated_at),
      reqDetails: presentDetails(prefix === 'src' ? txn.src_details : txn.dest_details),
      ...(prefix === 'dest' && txn.kyc ? { kyc: txn.kyc } : {}),
    }
  }
  return {
    txnId: txn.id,
    accountId: txn.account_id,
    accountDisplayName,
    ...(txn.ext_ref_id !== null ? { extRefId: txn.ext_ref_id } : {}),
    txnState: txn.state,
    msg: txn.msg,
    ...(txn.note !== null ? { note: txn.note } : {}),
    deductNetworkFeesFromDest: txn.deduct_fees_from_dest,
    sourceReq: side('src'),
    destReq: side('dest'),
    ...(txn.source_of_funds ? { sourceOfFunds: txn.source_of_funds } : {}),
    fxRate: new DecimalText(txn.fx_rate),
    createdAt: Number(txn.created_at),
    updatedAt: Number(txn.updated_at),
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
