import { RailFailure, type OnchainTxState } from '../rails/rail.js'
import { nowBy } from '../shared/clock.js'
import { setDestDetails } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import { postWalletEntry } from '../transactions/wallet-entry.js'
import { checkAgainAt } from '../bitcoin/schedule.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { isPassingRefusal } from './refusal.js'
import { CONFIRMATION_POLL_MS, RAIL_RETRY_MS } from './polling.js'
import { sendInput } from './send-broadcast.js'
import { hasEntry } from '../ledger/reads.js'
import { failSend, sendPostings } from './send-release.js'
import { onchainSendDetails, type OnchainSendDetails } from './send-details.js'
import { SEND_REORG_POLL_MS } from './send-reorgs.js'

/** Follow a broadcast send until it has its confirmations (completed), or cannot confirm. */
export async function watchConfirmations(deps: BitcoinDeps, txn: Txn) {
  const txid = String(onchainSendDetails(txn).txid)
  let tx: OnchainTxState | null
  try {
    tx = await deps.rails.onchain.getTransaction(txid)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    await checkAgainAt(deps.db, txn, nowBy(deps) + RAIL_RETRY_MS)
    return
  }
  if (tx?.replacedBy) return followReplacement(deps, txn, tx.replacedBy)
  if (tx?.conflictedDepth !== undefined) {
    // Another transaction spent the same coins and is in the chain: ours can never confirm. Once
    // that is as deep as a deposit needs to be credited, the money is known not to have left.
    if (tx.conflictedDepth >= deps.config.onchainConfirmations) {
      deps.log?.error({ txnId: txn.id, txid }, 'on-chain send conflicted by a transaction in the chain')
      await failSend(deps, txn.id, 'destsent', 'conflicted')
    } else await checkAgainAt(deps.db, txn, nowBy(deps) + CONFIRMATION_POLL_MS)
    return
  }
  if (tx === null && !deps.rails.onchain.resendsSameTransaction) {
    // The wallet that sent it no longer knows it. Sending again could pay twice: a person decides.
    deps.log?.error({ txnId: txn.id, txid }, 'the node no longer knows an on-chain send')
    await deps.transactions().apply(txn.id, async (_q, t, move) => {
      if (t.state === 'destsent') await move('error', { msg: 'transaction_unknown' })
    })
    return
  }
  if (tx === null || tx.inMempool === false) return rebroadcast(deps, txn, txid)
  if (tx.confirmations < deps.config.onchainConfirmations) {
    await checkAgainAt(deps.db, txn, nowBy(deps) + CONFIRMATION_POLL_MS)
    return
  }
  await deps.transactions().apply(txn.id, async (q, t, move) => {
    if (t.state !== 'destsent') return
    // A send that reached destsent before holds were kept there was posted then; never twice.
    if (!(await hasEntry(q, t.id)))
      await postWalletEntry(
        deps.accounts,
        q,
        t,
        { kind: 'onchain_send', now: nowBy(deps), settleHolds: true },
        (walletId) => sendPostings(t, walletId),
      )
    // Still looked at until it is deep: its block may leave the best chain (send-reorgs.ts).
    await move('completed', {
      srcSettledMinor: t.srcAmountMinor,
      destSettledMinor: t.destAmountMinor,
      nextCheckAtMs: nowBy(deps) + SEND_REORG_POLL_MS,
    })
  })
}

/** Put the send on the txid of the transaction that replaced its own (a fee bump). */
async function followReplacement(deps: BitcoinDeps, txn: Txn, replacement: string) {
  await deps.transactions().apply(txn.id, async (q, t) => {
    const now = onchainSendDetails(t)
    if (t.state !== 'destsent' || now.txid !== onchainSendDetails(txn).txid) return
    const replaced = [...(now.replacedTxids ?? []), ...(now.txid === undefined ? [] : [now.txid])]
    await setDestDetails(
      q,
      t.id,
      { ...now, txid: replacement, replacedTxids: replaced } satisfies OnchainSendDetails,
      nowBy(deps),
    )
  })
}

/**
 * The node does not know the send, or holds it outside its mempool: offer the same transaction
 * again (the rail rebroadcasts it, never builds another). Refused, it can never confirm, and the
 * send fails with its hold released.
 */
async function rebroadcast(deps: BitcoinDeps, txn: Txn, txid: string) {
  const details = onchainSendDetails(txn)
  const rate = BigInt(details.feeRateSentSatPerVb ?? details.feeRateSatPerVb)
  try {
    const again = await deps.rails.onchain.send(sendInput(txn, rate))
    if (again.txid !== txid) return followReplacement(deps, txn, again.txid)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    if (err.retryable) {
      await checkAgainAt(deps.db, txn, nowBy(deps) + RAIL_RETRY_MS)
      return
    }
    if (isPassingRefusal(err.message)) {
      // Refused for now (a fee, a mempool conflict): other nodes may still hold it and a miner
      // include it, so it is not dead. It waits, in the log and the stuck list; a fee bump helps.
      deps.log?.warn(
        { txnId: txn.id, txid, error: err.message },
        'on-chain send not relayed by the node for now',
      )
      await checkAgainAt(deps.db, txn, nowBy(deps) + CONFIRMATION_POLL_MS)
      return
    }
    deps.log?.error(
      { txnId: txn.id, txid, code: err.code, error: err.message },
      'on-chain send refused on rebroadcast',
    )
    await failSend(deps, txn.id, 'destsent', err.code === 'rejected' ? 'broadcast_refused' : err.code)
    return
  }
  await checkAgainAt(deps.db, txn, nowBy(deps) + CONFIRMATION_POLL_MS)
}
