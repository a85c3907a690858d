/**
 * A payout's state, read from the chain, and the work that keeps a pending one moving: a
 * transaction the node lost is broadcast again (the same bytes), a nonce gap below ours is filled
 * with our own stored transactions, and one not mined within `replaceAfterMs` is replaced (same
 * nonce, fees bumped as geth's pool demands, never over the cap) or reported `stuck`.
 *
 * Success only from the receipt (status 0x1) together with Tether's `Transfer(from = hot wallet,
 * to, value)` log from the contract for exactly the amount (Tether's `transfer` returns no value);
 * `status: 0x0` is a failure only once its block is final. Final means at or below the node's
 * `finalized` block and at least `confirmations` deep. A receipt whose block is no longer the
 * canonical one at its height (a reorg under way) counts as not mined: the payout is pending and is
 * followed to wherever its transaction is included next.
 *
 * Sources (ethereum/go-ethereum): internal/ethapi/api.go (GetTransactionReceipt answers null for a
 * transaction in no canonical block, MarshalReceipt's fields), core/types/log.go (a log's address,
 * topics, data), rpc/types.go (the `finalized` block tag), eth/api_backend.go (`finalized block not
 * found` before the chain has one).
 */
import { RailFailure, type EthTransferState } from '../../rails/rail.js'
import { EthRpcError, hexQuantity, object } from './jsonrpc-client.js'
import { transactionCount, type EthDeps } from './jsonrpc-deps.js'
import { feeMarket, replacementFees } from './jsonrpc-fees.js'
import { broadcast } from './jsonrpc-payout.js'
import {
  getSend,
  recordReplacement,
  sendsAtNonces,
  setStuck,
  type EthSend,
  type EthSentTx,
} from './jsonrpc-sends.js'
import { findMined, type MinedTx } from './jsonrpc-mined.js'
import {
  addressWord,
  normalizeAddress,
  signEip1559,
  transferCallData,
  TRANSFER_TOPIC,
  uintWord,
} from './jsonrpc-tx.js'

/** Whether the receipt's logs hold Tether's Transfer(from hot wallet, to, amount), from the contract. */
export function hasTransferLog(deps: EthDeps, logs: unknown[], to: string, amountMinor: bigint): boolean {
  const topics = [TRANSFER_TOPIC, '0x' + addressWord(deps.address), '0x' + addressWord(to)]
  return logs.some((entry) => {
    if (typeof entry !== 'object' || entry === null) return false
    const log = entry as { address?: unknown; topics?: unknown; data?: unknown; removed?: unknown }
    if (typeof log.address !== 'string' || log.address.toLowerCase() !== deps.usdt) return false
    if (log.removed === true) return false
    if (!Array.isArray(log.topics) || log.topics.length !== 3) return false
    if (!log.topics.every((t, i) => typeof t === 'string' && t.toLowerCase() === topics[i])) return false
    return typeof log.data === 'string' && log.data.toLowerCase() === '0x' + uintWord(amountMinor)
  })
}

/** Whether a block is final: at or below the `finalized` block, and `confirmations` deep. */
async function isFinal(deps: EthDeps, blockNumber: bigint): Promise<boolean> {
  const head = hexQuantity(await deps.rpc('eth_blockNumber', []), 'eth_blockNumber')
  if (head - blockNumber + 1n < BigInt(deps.confirmations)) return false
  let finalized: unknown
  try {
    finalized = await deps.rpc('eth_getBlockByNumber', ['finalized', false])
  } catch (err) {
    // Before the chain has a finalized block geth answers an error rather than null.
    if (err instanceof RailFailure && err.code === 'eth_no_finalized_block') return false
    throw err
  }
  if (finalized === null) return false
  return blockNumber <= hexQuantity(object(finalized, 'finalized block').number, 'finalized.number')
}

export async function getTransfer(
  deps: EthDeps,
  requestId: string,
  expected: { to: string; amountMinor: bigint },
): Promise<EthTransferState> {
  const send = await getSend(deps.db, requestId)
  if (!send)
    throw new RailFailure('send_record_missing', `no Ethereum send is recorded for ${requestId}`, true)
  if (send.to !== normalizeAddress(expected.to) || send.amountMinor !== expected.amountMinor)
    throw new RailFailure('request_conflict', `request ${requestId} was a different transfer`, false)
  const mined = await findMined(deps, send)
  if (mined) return minedState(deps, send, mined)
  return keepMoving(deps, send)
}

async function minedState(deps: EthDeps, send: EthSend, mined: MinedTx): Promise<EthTransferState> {
  const txHash = mined.tx.txHash
  if (send.stuck !== null) await setStuck(deps.db, send.requestId, null)
  if (mined.succeeded && !hasTransferLog(deps, mined.logs, send.to, send.amountMinor)) {
    // Mined and successful, yet no Transfer of exactly this amount: never completed, never failed
    // (money may have moved); an operator must look.
    const stuck = `transaction ${txHash} succeeded without Tether's Transfer of ${send.amountMinor} to ${send.to}`
    await setStuck(deps.db, send.requestId, stuck)
    return { status: 'pending', txHash, stuck }
  }
  if (!(await isFinal(deps, mined.blockNumber))) return { status: 'pending', txHash }
  if (mined.succeeded) return { status: 'completed', txHash, feeWei: mined.feeWei }
  return { status: 'failed', reason: 'transfer_reverted', txHash, feeWei: mined.feeWei }
}

/** Not mined: make sure the node has our transaction (or a better one) for the nonce. */
async function keepMoving(deps: EthDeps, send: EthSend): Promise<EthTransferState> {
  let current = send.txs[send.txs.length - 1]!
  if ((await transactionCount(deps, 'latest')) > send.nonce) {
    // The nonce is used and none of ours holds it: a transaction not ours (the key used elsewhere)
    // took it, or ours is mined in a block the node does not index yet. Never failed from here
    // (a lagging node could be wrong), never sent again: an operator decides.
    const stuck = `nonce ${send.nonce} of the hot wallet is used by a transaction that is none of this payout's`
    await setStuck(deps.db, send.requestId, stuck)
    return { status: 'pending', txHash: current.txHash, stuck }
  }
  const known = (await deps.rpc('eth_getTransactionByHash', [current.txHash])) !== null
  const due = deps.now() - current.signedAt >= deps.replaceAfterMs
  let stuck: string | null = null
  if (due) {
    const fees = replacementFees(current, await feeMarket(deps), current.gasLimit, send.maxFeeWei)
    if (fees) {
      const signed = signEip1559(
        {
          chainId: deps.chainId,
          nonce: send.nonce,
          ...fees,
          gasLimit: current.gasLimit,
          to: deps.usdt,
          data: transferCallData(send.to, send.amountMinor),
        },
        deps.privateKey,
      )
      const updated = await recordReplacement(deps.db, send.requestId, {
        txHash: signed.hash,
        raw: signed.raw,
        gasLimit: current.gasLimit,
        ...fees,
        attempt: current.attempt + 1,
        signedAt: deps.now(),
      })
      send = updated
      current = updated.txs[updated.txs.length - 1]!
      stuck = await tryBroadcast(deps, send, current)
    } else {
      stuck = `not mined after ${deps.now() - current.signedAt} ms and the fee cap of ${send.maxFeeWei} wei leaves no room for the pool's 10% bump`
      if (!known) stuck = (await tryBroadcast(deps, send, current)) ?? stuck
    }
  } else if (!known) {
    // Dropped from the pool, lost in a restart, or never arrived: the very same bytes again.
    stuck = await tryBroadcast(deps, send, current)
  }
  await fillGap(deps, send)
  await setStuck(deps.db, send.requestId, stuck)
  return stuck === null
    ? { status: 'pending', txHash: current.txHash }
    : { status: 'pending', txHash: current.txHash, stuck }
}

/** A broadcast whose refusal is reported (as the stuck reason) rather than thrown. */
async function tryBroadcast(deps: EthDeps, send: EthSend, tx: EthSentTx): Promise<string | null> {
  try {
    await broadcast(deps, send, tx)
    return null
  } catch (err) {
    if (err instanceof EthRpcError) return `the node refuses ${tx.txHash}: ${err.rpcMessage}`
    throw err
  }
}

/**
 * A nonce below ours that the node's pool has no transaction for holds ours back (geth queues it,
 * core/txpool/legacypool/legacypool.go `enqueueTx`). Each such nonce of ours gets its current
 * transaction broadcast again.
 */
async function fillGap(deps: EthDeps, send: EthSend): Promise<void> {
  const pendingCount = await transactionCount(deps, 'pending')
  if (pendingCount >= send.nonce) return
  for (const lower of await sendsAtNonces(deps.db, send.address, pendingCount, send.nonce)) {
    const tx = lower.txs[lower.txs.length - 1]
    if (tx) await tryBroadcast(deps, lower, tx)
  }
}
