import type { Queryable } from '../db/db.js'
import type { ConfirmContext, Flow } from '../transactions/flow.js'
import type { Txn } from '../transactions/txn.js'
import { wakeWorkers } from '../bitcoin/schedule.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { quoteOnchainSend } from './send-quote.js'
import { broadcast } from './send-broadcast.js'
import { watchConfirmations } from './send-confirmations.js'
import { watchCompleted } from './send-reorgs.js'

/**
 * On-chain send: quote checks the address and prices the network fee from the node's estimate;
 * confirm holds amount + fees (srccreated). The worker estimates the fee again and broadcasts at
 * the current rate, never above the quoted one (idempotent by transaction id), then moves it to
 * destsent with the txid, keeping the hold. Once confirmed the hold is posted (completed); the
 * completed send is still watched for its block leaving the chain (send-reorgs.ts). A send
 * the network refused, or one whose transaction can never confirm (refused on rebroadcast, or in
 * conflict with the chain), fails and its hold is released: nothing was posted, so nothing is
 * reversed. A fee bump (`bumpOnchainSend`, bump.ts) replaces the transaction; the send follows the
 * txid.
 */
export function onchainSendFlow(deps: BitcoinDeps): Flow {
  return {
    kind: 'onchain_send',
    quote: (ctx) => quoteOnchainSend(deps, ctx),
    confirm: (q, _txn, ctx) => confirmOnchainSend(q, ctx),
    advance: (txn) => advanceOnchainSend(deps, txn),
  }
}

/** Inside the confirm transaction: the funds are held; the worker broadcasts at once. */
async function confirmOnchainSend(q: Queryable, ctx: ConfirmContext): Promise<Txn> {
  await wakeWorkers(q)
  return ctx.transition('srccreated', { nextCheckAtMs: ctx.now })
}

async function advanceOnchainSend(deps: BitcoinDeps, txn: Txn): Promise<void> {
  if (txn.state === 'srccreated') return broadcast(deps, txn)
  if (txn.state === 'destsent') return watchConfirmations(deps, txn)
  if (txn.state === 'completed') return watchCompleted(deps, txn)
}
