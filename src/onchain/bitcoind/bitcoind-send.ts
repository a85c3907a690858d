/**
 * Sending from the hot wallet: one send per request id (found again by its wallet comment), each
 * checked against the mempool, since `sendtoaddress` answers with a txid even when the node's
 * mempool refused the transaction (src/wallet/wallet.cpp, CWallet::CommitTransaction); the state of
 * a send; fee bumps; and the fee rate a send should pay.
 */
import { asArray, asObject, checkAddressText, checkTxid, TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure, type OnchainRail, type OnchainTxState } from '../../rails/rail.js'
import { btcToSats, confTarget, satsPerVbOfFeerate, satsToBtcText } from './bitcoind-amount.js'
import { PAGE_SIZE, type BitcoindDeps } from './bitcoind-deps.js'
import { call, callExpecting, mapped } from './bitcoind-rpc.js'
import { isMissingInputs, isPassingRefusal } from '../refusal.js'

type SendInput = Parameters<OnchainRail['send']>[0]

/** How far back a send is looked for by its request id: sends older than this are not retried anyway. */
const SEND_SCAN_TXS_MAX = 5_000
/** A bound on following fee-bump replacements from one send to the next. */
const REPLACEMENTS_MAX = 25

/** `OnchainRail.send`: checks the request, then runs one send per request id at a time. */
export function startSend(deps: BitcoindDeps, input: SendInput): Promise<{ txid: string }> {
  checkAddressText(input.address)
  if (input.amountSats <= 0n) throw new RailFailure('invalid_amount', 'amount must be positive', false)
  checkFeeRate(input.feeRateSatPerVb)
  const { sendsInFlight } = deps
  const pending = sendsInFlight.get(input.requestId)
  if (pending) return pending
  const started = send(deps, input).finally(() => sendsInFlight.delete(input.requestId))
  sendsInFlight.set(input.requestId, started)
  return started
}

function checkFeeRate(feeRateSatPerVb: bigint): void {
  if (feeRateSatPerVb < 1n) throw new RailFailure('invalid_fee_rate', 'fee rate must be at least 1', false)
}

async function send(deps: BitcoindDeps, input: SendInput): Promise<{ txid: string }> {
  const existing = await findSend(deps, input.requestId)
  if (existing) return { txid: await accepted(deps, existing, false) }
  const txid = await call(deps, deps.hotWallet, 'sendtoaddress', {
    address: input.address,
    amount: satsToBtcText(input.amountSats),
    // The request id rides along as the wallet's own comment: it is how a retry finds this send.
    comment: input.requestId,
    // Replaceable, so that a send stuck below the network's rate can be bumped (bumpfee).
    replaceable: true,
    fee_rate: input.feeRateSatPerVb.toString(),
  })
  if (typeof txid !== 'string')
    throw new RailFailure(TRANSPORT_CODES.badResponse, 'sendtoaddress: no txid', true)
  return { txid: await accepted(deps, txid, true) }
}

/** The txid of a wallet send committed earlier for `requestId`, found by its `comment`. */
async function findSend(deps: BitcoindDeps, requestId: string): Promise<string | null> {
  for (let skip = 0; skip < SEND_SCAN_TXS_MAX; skip += PAGE_SIZE) {
    const page = asArray(
      await call(deps, deps.hotWallet, 'listtransactions', {
        label: '*',
        count: PAGE_SIZE,
        skip,
        include_watchonly: false,
      }),
      'listtransactions',
    )
    const live = liveSendIn(page, requestId)
    if (live) return live
    if (page.length < PAGE_SIZE) return null
  }
  return null
}

/** The txid of the live send for `requestId` among `listtransactions` entries, if any. */
export function liveSendIn(page: unknown[], requestId: string): string | null {
  const matches = page
    .map((entry) => asObject(entry, 'listtransactions entry'))
    .filter(
      (e) =>
        e.category === 'send' &&
        e.comment === requestId &&
        e.abandoned !== true &&
        typeof e.txid === 'string',
    )
  // A fee bump copies the comment to the replacement; the one not replaced is the live send.
  const live = matches.find((e) => e.replaced_by_txid === undefined) ?? matches[0]
  return live ? String(live.txid) : null
}

/** `gettransaction` of the hot wallet, null when it is not a wallet transaction (-5). */
async function walletTx(deps: BitcoindDeps, txid: string): Promise<Record<string, unknown> | null> {
  // -5: "Invalid or non-wallet transaction id" (src/wallet/rpc/transactions.cpp, gettransaction).
  const answer = await callExpecting(
    deps,
    deps.hotWallet,
    'gettransaction',
    { txid, include_watchonly: true },
    [-5],
  )
  return answer.refused ? null : asObject(answer.result, 'gettransaction')
}

/** Whether the node's mempool holds `txid` (`getmempoolentry` answers -5 when it does not). */
async function inMempool(deps: BitcoindDeps, txid: string): Promise<boolean> {
  return !(await callExpecting(deps, null, 'getmempoolentry', [txid], [-5])).refused
}

/**
 * The txid under which a wallet send is on its way: confirmed, or in the mempool. A fee bump's
 * replacement is followed. A send the mempool does not hold is offered to it again; one it
 * refuses is abandoned (so the wallet stops rebroadcasting it and frees its coins) and reported
 * as a final `rejected`; one that conflicts with the chain as a final `conflicted`. `fresh`: the
 * wallet made it just now, so no other node can have it. An older send may have been relayed
 * before our mempool dropped it: refused for a reason that passes (a fee, a conflict in the
 * mempool), it is not abandoned but reported as the retryable `not_relayed`.
 */
async function accepted(deps: BitcoindDeps, first: string, fresh: boolean): Promise<string> {
  let txid = first
  for (let hops = 0; hops <= REPLACEMENTS_MAX; hops++) {
    const tx = await walletTx(deps, txid)
    if (!tx) throw new RailFailure('node_error', `bitcoind: the wallet does not know its send ${txid}`, false)
    const confirmations = Number(tx.confirmations)
    if (typeof tx.replaced_by_txid === 'string' && confirmations <= 0) {
      checkTxid(tx.replaced_by_txid)
      txid = tx.replaced_by_txid
      continue
    }
    if (confirmations > 0) return txid
    if (confirmations < 0) {
      throw new RailFailure(
        'conflicted',
        `bitcoind: send ${txid} conflicts with a transaction ${-confirmations} blocks deep`,
        false,
      )
    }
    if (await inMempool(deps, txid)) return txid
    const hex = String(tx.hex ?? '')
    const [verdict] = asArray(await call(deps, null, 'testmempoolaccept', [[hex]]), 'testmempoolaccept')
    const result = asObject(verdict, 'testmempoolaccept result')
    if (result.allowed === true) {
      // Refused earlier (a full mempool, say) but acceptable now: offer it again. Between the two
      // calls it may have confirmed (-27, "already in utxo set", src/node/transaction.cpp
      // BroadcastTransaction) or lost a parent (-25): the wallet is asked again.
      const sent = await callExpecting(deps, null, 'sendrawtransaction', [hex], [-25, -26, -27])
      if (!sent.refused) return txid
      if (sent.refused.code === -27 || !fresh) continue
      throw mapped(sent.refused)
    }
    const reason = String(result['reject-reason'] ?? 'refused')
    // Not fresh, it may have been relayed before our mempool dropped it. A refusal that passes (a
    // fee, a mempool conflict) or inputs the node lacks while the wallet sees no conflict in the
    // chain (its confirmations are 0, not negative: a parent evicted here, mined elsewhere) leaves
    // it alive: the hold stays until the wallet's negative confirmations say otherwise.
    if (!fresh && (isPassingRefusal(reason) || isMissingInputs(reason))) {
      throw new RailFailure(
        'not_relayed',
        `bitcoind: the mempool does not take send ${txid} now: ${reason}`,
        true,
      )
    }
    // -5 "Transaction not eligible for abandonment": it reached the mempool or a block meanwhile.
    if ((await callExpecting(deps, deps.hotWallet, 'abandontransaction', [txid], [-5])).refused) continue
    throw new RailFailure('rejected', `bitcoind: the mempool refused send ${txid}: ${reason}`, false)
  }
  throw new RailFailure(
    'node_error',
    `bitcoind: more than ${REPLACEMENTS_MAX} replacements of ${first}`,
    false,
  )
}

/** `OnchainRail.getTransaction`: a send's state as the hot wallet sees it. */
export async function getTransaction(deps: BitcoindDeps, txid: string): Promise<OnchainTxState | null> {
  checkTxid(txid)
  const tx = await walletTx(deps, txid)
  if (!tx) return null
  const confirmations = Number(tx.confirmations)
  if (confirmations > 0) return { confirmations }
  // A fee bump of ours took its place (gettransaction's replaced_by_txid, from the wallet's
  // mapValue): the replacement is the send now.
  if (typeof tx.replaced_by_txid === 'string') {
    checkTxid(tx.replaced_by_txid)
    return { confirmations: 0, replacedBy: tx.replaced_by_txid }
  }
  // Negative confirmations: a conflicting transaction is that deep in the best chain.
  if (confirmations < 0) return { confirmations: 0, conflictedDepth: -confirmations }
  return { confirmations: 0, inMempool: await inMempool(deps, txid) }
}

/** `OnchainRail.bumpFee`. */
export async function bumpFee(
  deps: BitcoindDeps,
  txid: string,
  feeRateSatPerVb: bigint,
): Promise<{ txid: string; feeSats: bigint }> {
  checkTxid(txid)
  checkFeeRate(feeRateSatPerVb)
  // src/wallet/rpc/spend.cpp, bumpfee: a BIP 125 replacement paying `fee_rate` sat/vB.
  const result = asObject(
    await call(deps, deps.hotWallet, 'bumpfee', [txid, { fee_rate: feeRateSatPerVb.toString() }]),
    'bumpfee',
  )
  const replacement = String(result.txid ?? '')
  checkTxid(replacement)
  return { txid: replacement, feeSats: btcToSats(result.fee) }
}

/** `OnchainRail.estimateFeeRate`: whole sat/vB. */
export async function estimateFeeRate(deps: BitcoindDeps, targetBlocks: number): Promise<bigint> {
  const target = confTarget(targetBlocks)
  const result = asObject(await call(deps, deps.hotWallet, 'estimatesmartfee', [target]), 'estimatesmartfee')
  if (result.feerate === undefined) {
    // A regtest node has no fee history; its relay minimum is the only rate that makes sense there.
    if (deps.options.network === 'regtest') return 1n
    const errors = Array.isArray(result.errors) ? result.errors.join('; ') : 'no estimate'
    throw new RailFailure('fee_estimate_unavailable', `estimatesmartfee: ${errors}`, true)
  }
  return satsPerVbOfFeerate(result.feerate)
}
