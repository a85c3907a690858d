import { createHash } from 'node:crypto'
import { newTxnId, type AccountId } from '../shared/ids.js'
import type { NewTxn } from '../transactions/txn.js'

/**
 * A deposit: money that arrived for an account without a quote of its own (an on-chain payment
 * to a watched address, a second payment of a Lightning invoice, a late or second bank transfer
 * with a VND receive's memo), credited to its wallet in `ccy` (BTC unless said) less the receive
 * fee, or, with `credit`, to its wallet in another currency (a later payment for a receive into
 * that wallet, at the receive's quoted rate). `key` names the payment; its hash is the
 * transaction's request hash.
 */
export function newDeposit(d: {
  accountId: AccountId
  key: string
  method: 'on-chain' | 'lightning' | 'vnd-instant'
  ccy?: 'BTC' | 'VND'
  /** What arrived and the receive fee on it, in the source currency's minor units. */
  amountMinor: bigint
  feeMinor: bigint
  srcDetails: Record<string, unknown>
  at: number
  nextCheckAtMs: number | null
  credit?: { ccy: string; fxRate: string; amountMinor: bigint }
}): NewTxn {
  const { at } = d
  return {
    id: newTxnId(),
    accountId: d.accountId,
    extRefId: null,
    requestHash: createHash('sha256').update(d.key).digest('hex'),
    kind: 'deposit',
    state: 'srccreated',
    note: null,
    deductFeesFromDest: false,
    srcCcy: d.ccy ?? 'BTC',
    srcMethod: d.method,
    srcAmountMinor: d.amountMinor,
    srcFeeMinor: d.feeMinor,
    srcNetworkFeeMinor: 0n,
    srcDetails: d.srcDetails,
    srcCreatedAtMs: at,
    srcUpdatedAtMs: at,
    destCcy: d.credit?.ccy ?? d.ccy ?? 'BTC',
    destMethod: 'svcpay',
    destAmountMinor: d.credit?.amountMinor ?? d.amountMinor - d.feeMinor,
    destDetails: {},
    destCreatedAtMs: at,
    destUpdatedAtMs: at,
    fxRate: d.credit?.fxRate ?? '1',
    // Nothing about a deposit can expire; its expiry is its creation.
    expiresAtMs: at,
    kyc: null,
    sourceOfFunds: null,
    nextCheckAtMs: d.nextCheckAtMs,
    createdAtMs: at,
    updatedAtMs: at,
  }
}
