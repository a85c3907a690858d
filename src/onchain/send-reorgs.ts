import { RailFailure, type OnchainTxState } from '../rails/rail.js'
import { nowBy } from '../shared/clock.js'
import { scheduleCheck, setDestDetails } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { REORG_WATCH_MS } from './deposits.js'
import { RAIL_RETRY_MS } from './polling.js'
import { onchainSendDetails, type OnchainSendDetails } from './send-details.js'

/**
 * A completed send is watched until its transaction (or a transaction in conflict with it) is this
 * deep, never less than ONCHAIN_CONFIRMATIONS: a reorganisation deeper than six blocks is not
 * expected, the same assumption the deposit watch makes.
 */
export const SEND_FINAL_DEPTH = 6
/** How often a completed send is looked at meanwhile: about half a block. */
export const SEND_REORG_POLL_MS = 5 * 60_000

/** The depth at which a completed send is no longer watched. */
export const sendFinalDepth = (deps: BitcoinDeps) =>
  Math.max(SEND_FINAL_DEPTH, deps.config.onchainConfirmations)

/** Why a completed send's transaction is no longer in the best chain. */
type LeftChain = NonNullable<OnchainSendDetails['leftChain']>

/**
 * The reorganisation watch of a completed send (docs/bitcoin.md, "Reorganisations"). The customer
 * was debited when the transaction confirmed; its block may still leave the best chain. Until the
 * transaction is `sendFinalDepth` deep, the worker asks the node about it every SEND_REORG_POLL_MS.
 * A transaction no longer confirmed is marked in the send's details (`leftChain`, `leftChainAt`),
 * logged as an error once per change and listed by the stuck listing (`left_chain`) for an operator:
 * the send stays `completed` and nothing is posted. Back in a block, the mark is cleared. The watch
 * ends when the transaction is deep enough, when a transaction spending the same coins is (the
 * payment is gone for good: a person decides what the customer is owed, the mark stays), or
 * REORG_WATCH_MS after the completion or the last mark, whichever is later.
 */
export async function watchCompleted(deps: BitcoinDeps, txn: Txn): Promise<void> {
  const details = onchainSendDetails(txn)
  const now = nowBy(deps)
  const watchFrom = Math.max(txn.destUpdatedAtMs, details.leftChainAt ?? 0)
  if (details.txid === undefined || now - watchFrom > REORG_WATCH_MS) return endWatch(deps, txn)
  let tx: OnchainTxState | null
  try {
    tx = await deps.rails.onchain.getTransaction(details.txid)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    await lookAgain(deps, txn, now + (err.retryable ? RAIL_RETRY_MS : SEND_REORG_POLL_MS))
    return
  }
  const depth = sendFinalDepth(deps)
  if (tx !== null && tx.confirmations > 0) {
    if (details.leftChain !== undefined) await mark(deps, txn, null, tx)
    if (tx.confirmations >= depth) return endWatch(deps, txn)
    return lookAgain(deps, txn, now + SEND_REORG_POLL_MS)
  }
  const why: LeftChain =
    tx === null ? 'unknown' : tx.conflictedDepth !== undefined ? 'conflicted' : 'unconfirmed'
  if (details.leftChain !== why) await mark(deps, txn, why, tx)
  // A conflict as deep as the watch goes is as final as a confirmation would be.
  if (why === 'conflicted' && tx!.conflictedDepth! >= depth) return endWatch(deps, txn)
  return lookAgain(deps, txn, now + SEND_REORG_POLL_MS)
}

/** Set (or, with `why` null, clear) the mark of a completed send, once, under its row lock. */
async function mark(deps: BitcoinDeps, seen: Txn, why: LeftChain | null, tx: OnchainTxState | null) {
  const txid = onchainSendDetails(seen).txid
  let changed = false
  await deps.transactions().apply(seen.id, async (q, t) => {
    const now = onchainSendDetails(t)
    if (t.state !== 'completed' || now.txid !== txid || (now.leftChain ?? null) === why) return
    const { leftChain: _l, leftChainAt: _a, ...rest } = now
    const next: OnchainSendDetails =
      why === null ? rest : { ...rest, leftChain: why, leftChainAt: now.leftChainAt ?? nowBy(deps) }
    await setDestDetails(q, t.id, next as unknown as Record<string, unknown>)
    changed = true
  })
  if (!changed) return
  const context = {
    txnId: seen.id,
    accountId: seen.accountId,
    txid,
    amountSats: seen.destAmountMinor.toString(),
    confirmations: tx?.confirmations ?? null,
    conflictedDepth: tx?.conflictedDepth ?? null,
  }
  if (why === null) deps.log?.warn(context, 'a completed on-chain send is back in the best chain')
  else
    deps.log?.error(
      { ...context, leftChain: why },
      'a completed on-chain send left the best chain (reorganisation): see GET /admin/transactions/stuck',
    )
}

/** The next look, while the send is still completed (a look nobody else sets: exactly then). */
const lookAgain = async (deps: BitcoinDeps, txn: Txn, at: number) => {
  await scheduleCheck(deps.db, txn.id, at, 'exact', { state: 'completed' })
}

/** Nothing more to watch: the worker leaves the send alone (a mark, if any, stays listed). */
const endWatch = async (deps: BitcoinDeps, txn: Txn) => {
  await scheduleCheck(deps.db, txn.id, null, 'exact', { state: 'completed' })
}
