import { amountJson, DecimalText } from '../shared/amount.js'
import { reqStatuses } from './state-machine.js'
import type { Txn } from './txn.js'

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
