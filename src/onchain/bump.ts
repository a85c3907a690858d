import { RailFailure } from '../rails/rail.js'
import { asTxnId } from '../shared/ids.js'
import { ONCHAIN_SEND } from './kinds.js'
import { getTxn, setDestDetails } from '../transactions/repository.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { onchainSendDetails, type OnchainSendDetails } from './send-details.js'

/** What `bumpOnchainSend` reports. */
export interface BumpResult {
  txnId: string
  replacedTxid: string
  txid: string
  feeRateSatPerVb: number
  feeSats?: string
}

/**
 * The operator's fee bump of a stuck send (`svcpay onchain bumpfee`): the rail replaces the
 * transaction (BIP 125) at `feeRateSatPerVb`, by default the network's current estimate, and the
 * send follows the replacement. The extra fee is the operator's: the customer paid the quote.
 */
export async function bumpOnchainSend(
  deps: BitcoinDeps,
  txnId: string,
  feeRateSatPerVb?: bigint,
): Promise<BumpResult | { error: string; message: string }> {
  const txn = await getTxn(deps.db, asTxnId(txnId))
  if (!txn || txn.kind !== 'onchain_send')
    return { error: 'not_found', message: 'no on-chain send with that id' }
  if (txn.state !== 'destsent')
    return {
      error: 'invalid_state',
      message: `the send is ${txn.state}: only a broadcast send (destsent) can be bumped`,
    }
  // A replacement pays more of the hot wallet's money to the chain: the brake holds it like a send
  // (503 sends_paused), until reconciliation lifts it.
  await deps.brake.refuseIfPaused(deps.db, ONCHAIN_SEND.rail)
  const bump = deps.rails.onchain.bumpFee
  if (!bump)
    return { error: 'not_supported', message: `the ${deps.rails.onchain.name} rail cannot bump fees` }
  const details = onchainSendDetails(txn)
  const txid = String(details.txid)
  try {
    // By default the next-block estimate, and at least 1 sat/vB more than the send pays now: a
    // replacement must pay the incremental relay fee on top (BIP 125 rule 4).
    const sent = BigInt(details.feeRateSentSatPerVb ?? details.feeRateSatPerVb)
    let rate = feeRateSatPerVb
    if (rate === undefined) {
      const estimate = await deps.rails.onchain.estimateFeeRate(1)
      rate = estimate > sent ? estimate : sent + 1n
    }
    const result = await bump.call(deps.rails.onchain, txid, rate)
    await deps.transactions().apply(txn.id, async (q, t) => {
      const now = onchainSendDetails(t)
      if (t.state !== 'destsent' || now.txid !== txid) return
      await setDestDetails(q, t.id, {
        ...now,
        txid: result.txid,
        replacedTxids: [...(now.replacedTxids ?? []), txid],
        feeRateSentSatPerVb: Number(rate),
      } satisfies OnchainSendDetails)
    })
    deps.log?.warn(
      { txnId, replacedTxid: txid, txid: result.txid, feeRateSatPerVb: rate.toString() },
      'on-chain send fee bumped',
    )
    return {
      txnId,
      replacedTxid: txid,
      txid: result.txid,
      feeRateSatPerVb: Number(rate),
      ...(result.feeSats !== undefined ? { feeSats: result.feeSats.toString() } : {}),
    }
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    return { error: err.code, message: err.message }
  }
}
