import type { Queryable } from '../db/db.js'
import type { AccountId, TxnId } from '../shared/ids.js'
import { ApiError } from '../shared/errors.js'
import { voidHolds } from '../ledger/ledger.js'
import { getTxn } from './repository.js'
import type { Txn } from './txn.js'
import type { TxnServiceDeps } from './service.js'

/** How a quote ends without a confirm: cancelled by its account, or expired at its deadline. */

/** Expires a quote in the caller's transaction: its hold released, its event written. */
export async function expireInTx(
  deps: Pick<TxnServiceDeps, 'repository'>,
  q: Queryable,
  txn: Txn,
  at: number,
): Promise<Txn> {
  await voidHolds(q, txn.id, at)
  return deps.repository.transition(q, txn, 'expired', { msg: 'quote_expired' }, { now: at })
}

export async function cancelQuote(deps: TxnServiceDeps, accountId: AccountId, txnId: TxnId): Promise<Txn> {
  const { now, transition } = deps.repository
  // Cancel sees the deadline as confirm does, under the same row lock: a quote past expiresAt
  // is expired (its hold released, its event sent) and the caller told so, whether or not the
  // expiry worker reached it yet. The expiry commits before the 409 is thrown.
  let expired = false
  const row = await deps.db.tx(async (q) => {
    const txn = await getTxn(q, txnId, { accountId, lock: true })
    if (!txn) throw new ApiError('not_found', 'Transaction not found')
    if (txn.state === 'expired' && txn.msg === 'quote_expired') {
      throw new ApiError('quote_expired', 'The quote expired before it was cancelled')
    }
    if (txn.state !== 'quoted') {
      throw new ApiError(
        'invalid_state',
        `Only a quoted transaction can be cancelled; this one is ${txn.state}`,
      )
    }
    const at = now()
    if (BigInt(at) >= txn.expiresAtMs) {
      expired = true
      return expireInTx(deps, q, txn, at)
    }
    await voidHolds(q, txn.id, at)
    return transition(q, txn, 'usercanceled', { msg: 'user_canceled' }, { now: now() })
  })
  if (expired) throw new ApiError('quote_expired', 'The quote expired before it was cancelled')
  return row
}

/** The worker's expiry of a quote whose time is up; a no-op when it moved on meanwhile. */
export async function expireQuote(deps: TxnServiceDeps, txnId: TxnId): Promise<void> {
  const { now } = deps.repository
  await deps.db.tx(async (q) => {
    const txn = await getTxn(q, txnId, { lock: true })
    if (!txn || txn.state !== 'quoted' || txn.expiresAtMs > BigInt(now())) return
    await expireInTx(deps, q, txn, now())
  })
}
