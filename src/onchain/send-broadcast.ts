import { PAUSED_RECHECK_MS, RailFailure } from '../rails/rail.js'
import { nowBy } from '../shared/clock.js'
import type { Txn } from '../transactions/txn.js'
import { recordSendRate } from '../transactions/repository.js'
import { checkAgainAt } from '../bitcoin/schedule.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { CONFIRMATION_POLL_MS, RAIL_RETRY_MS } from './polling.js'
import { FEE_TARGET_BLOCKS } from './send-quote.js'
import { failSend } from './send-release.js'
import { onchainSendDetails, type OnchainSendDetails } from './send-details.js'
import { ONCHAIN_SEND } from './kinds.js'

/** How long a send waits for the network fee to come back within its quote before it fails. */
export const FEE_WAIT_MAX_MS = 30 * 60_000
/** How often the fee is looked at again meanwhile. */
const FEE_RECHECK_MS = 60_000

/** What the rail is asked to send for `txn`; the transaction id makes the call idempotent. */
export function sendInput(txn: Txn, feeRateSatPerVb: bigint) {
  return {
    address: onchainSendDetails(txn).address,
    amountSats: txn.destAmountMinor,
    feeRateSatPerVb,
    requestId: txn.id,
  }
}

/**
 * The rate to send at: the network's current estimate, never above the rate the customer was
 * quoted (the network fee they pay was priced on it). Null, with the send put off, while the
 * network wants more than that; failed once it has for longer than FEE_WAIT_MAX_MS.
 */
async function sendRate(deps: BitcoinDeps, txn: Txn): Promise<bigint | null> {
  const quoted = BigInt(onchainSendDetails(txn).feeRateSatPerVb)
  let current: bigint
  try {
    current = await deps.rails.onchain.estimateFeeRate(FEE_TARGET_BLOCKS)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    // No estimate now: the quoted rate was the network's own a moment ago and is the cap anyway.
    if (!err.retryable) return quoted
    await checkAgainAt(deps.db, txn, nowBy(deps) + RAIL_RETRY_MS)
    return null
  }
  if (current <= quoted) return current
  // The wait counts from when the send was free to go: its quote, or its approval when it waited
  // for one (docs/operators.md, "Approvals").
  const waitedMs = nowBy(deps) - ((await deps.releasedAt(deps.db, txn.id)) ?? txn.createdAtMs)
  if (waitedMs >= FEE_WAIT_MAX_MS) {
    deps.log?.warn(
      { txnId: txn.id, quotedSatPerVb: quoted.toString(), neededSatPerVb: current.toString() },
      'on-chain send failed: the network fee rose above the quoted rate',
    )
    await failSend(deps, txn.id, 'srccreated', 'network_fee_above_quote')
    return null
  }
  deps.log?.warn(
    { txnId: txn.id, quotedSatPerVb: quoted.toString(), neededSatPerVb: current.toString() },
    'on-chain send waits: the network fee is above the quoted rate',
  )
  await checkAgainAt(deps.db, txn, nowBy(deps) + FEE_RECHECK_MS)
  return null
}

/** Broadcast a send at the rate it may pay, and move it to destsent with its txid. */
export async function broadcast(deps: BitcoinDeps, txn: Txn) {
  // The brake holds the rail: nothing is broadcast (not even a send asked for before, whose answer
  // was lost); the send waits in srccreated, its funds held, and is looked at again.
  if (await deps.brake.pausedFor(deps.db, ONCHAIN_SEND.rail)) {
    deps.log?.warn({ txnId: txn.id }, 'on-chain send waits: sends on the rail are paused')
    await checkAgainAt(deps.db, txn, nowBy(deps) + PAUSED_RECHECK_MS)
    return
  }
  // A send already attempted (its answer lost, a crash) may be in the network: it is only ever
  // asked for again at the same rate, never re-priced or failed for its fee.
  const attempted = onchainSendDetails(txn).feeRateSentSatPerVb
  let rate: bigint
  if (attempted !== undefined) rate = BigInt(attempted)
  else {
    const chosen = await sendRate(deps, txn)
    if (chosen === null) return
    rate = chosen
    await recordSendRate(deps.db, txn.id, Number(rate))
  }
  let txid: string
  try {
    ;({ txid } = await deps.rails.onchain.send(sendInput(txn, rate)))
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    if (err.retryable) {
      deps.log?.warn({ txnId: txn.id, code: err.code, error: err.message }, 'on-chain send will be retried')
      await checkAgainAt(deps.db, txn, nowBy(deps) + RAIL_RETRY_MS)
    } else {
      deps.log?.warn({ txnId: txn.id, code: err.code, error: err.message }, 'on-chain send refused')
      await failSend(deps, txn.id, 'srccreated', err.code)
    }
    return
  }
  await deps.transactions().apply(txn.id, async (_q, t, move) => {
    if (t.state !== 'srccreated') return
    const at = nowBy(deps)
    // The hold stays open: the money is posted once the transaction confirms.
    await move('destsent', {
      destDetails: {
        ...onchainSendDetails(t),
        txid,
        feeRateSentSatPerVb: Number(rate),
      } satisfies OnchainSendDetails,
      nextCheckAtMs: at + CONFIRMATION_POLL_MS,
    })
  })
}
