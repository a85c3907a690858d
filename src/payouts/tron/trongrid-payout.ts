/**
 * Sending USDT from the hot wallet: the pre-flight that refuses a transfer the wallet cannot fund,
 * the node's transaction checked and signed (or a recorded one restored), the record kept before
 * the first broadcast, and the broadcast with what each refusal means.
 */
import { hexToBytes } from '@noble/hashes/utils.js'
import { assert } from '../../shared/assert.js'
import { ceilDiv, formatScaled } from '../../shared/amount.js'
import { RailFailure } from '../../rails/rail.js'
import { validateTronAddress } from './address.js'
import type { TronGridDeps } from './trongrid-deps.js'
import { decodeNodeMessage, type Json } from './trongrid-http.js'
import { constantCall, isOnChain, resources, usdtBalance } from './trongrid-node.js'
import { expiredForGood } from './trongrid-outcome.js'
import { forget, remember, storeCall, type SignedTransfer, type TronSendRecord } from './trongrid-sends.js'
import {
  checkUnsigned,
  encodeTrc20Transfer,
  signTxId,
  TRC20_TRANSFER_SELECTOR,
  UINT256_LIMIT,
} from './trongrid-transaction.js'

/**
 * Pre-flight margin on the node's energy simulation, in basis points: the recipient's balance may
 * change between the simulation and the block (a first USDT deposit costs twice the energy of a
 * later one), and the chain's dynamic energy factor moves.
 */
export const ENERGY_MARGIN_BPS = 1_000n
/** Bandwidth of a signed USDT transfer, as java-tron counts it (transaction bytes plus 64). */
export const TRC20_TRANSFER_BANDWIDTH = 345n

/** Broadcast refusals that are final when the transaction was never sent before. */
const DEFINITIVE_REFUSALS = new Set([
  'SIGERROR',
  'CONTRACT_VALIDATE_ERROR',
  'CONTRACT_EXE_ERROR',
  'BANDWITH_ERROR',
  'TOO_BIG_TRANSACTION_ERROR',
])

/** `TronRail.sendUsdt`: checks the request, then runs one attempt per request at a time. */
export async function sendUsdt(
  deps: TronGridDeps,
  { to, amountMinor, requestId }: { to: string; amountMinor: bigint; requestId: string },
): Promise<{ txHash: string }> {
  assert(requestId.length > 0, 'a send needs a requestId')
  if (amountMinor <= 0n || amountMinor >= UINT256_LIMIT)
    throw new RailFailure('invalid_amount', 'a transfer must move a positive amount', false)
  const destination = validateTronAddress(to)
  if (!destination.ok) throw new RailFailure('invalid_address', `destination: ${destination.issue}`, false)
  // Concurrent calls for one request share one attempt rather than racing to build two.
  const running = deps.sends.running
  const current = running.get(requestId)
  if (current) return current
  const attempt = send(deps, destination.hex, amountMinor, requestId).finally(() => running.delete(requestId))
  running.set(requestId, attempt)
  return attempt
}

async function send(
  deps: TronGridDeps,
  toHex: string,
  amountMinor: bigint,
  requestId: string,
): Promise<{ txHash: string }> {
  const { config, sends } = deps
  let entry = sends.inFlight.get(requestId)
  let resumed = true
  if (entry) {
    if (entry.toHex !== toHex || entry.amountMinor !== amountMinor)
      throw new RailFailure('request_conflict', `request ${requestId} was a different transfer`, false)
    if (entry.accepted) return { txHash: entry.txHash }
  } else {
    const recorded = await storeCall(() => config.store?.get(requestId))
    if (recorded?.signed === undefined) {
      if (recorded !== undefined) return { txHash: recorded.txHash }
      await preflight(deps, toHex, amountMinor)
      entry = await build(deps, toHex, amountMinor, requestId)
      resumed = false
    } else {
      entry = restore(deps, recorded, toHex, amountMinor, requestId)
    }
    remember(sends, entry)
  }
  if (config.store && !entry.recorded) {
    const store = config.store
    const { txHash, body, expirationMs } = entry
    await storeCall(() => store.put(requestId, { txHash, signed: JSON.stringify(body), expirationMs }))
    entry.recorded = true
  }
  await broadcast(deps, entry, resumed)
  return { txHash: entry.txHash }
}

/**
 * Refuses, before anything is signed or broadcast, a transfer the hot wallet cannot fund: too
 * little USDT, a transfer the contract would revert, or too little energy and TRX to execute it
 * (which the chain would still charge for, failing OUT_OF_ENERGY). Node trouble stays retryable;
 * a wallet that cannot pay is a final refusal, so the payout's funds are released.
 */
async function preflight(deps: TronGridDeps, toHex: string, amountMinor: bigint): Promise<void> {
  const feeLimitSun = deps.config.feeLimitSun
  const held = await usdtBalance(deps)
  if (held < amountMinor)
    throw new RailFailure(
      'hot_wallet_insufficient_usdt',
      `the hot wallet holds ${formatScaled(held, 6)} USDT, the transfer needs ${formatScaled(amountMinor, 6)}`,
      false,
    )
  const simulated = await constantCall(
    deps,
    'transfer(address,uint256)',
    encodeTrc20Transfer(toHex, amountMinor),
  )
  if (!simulated.ok)
    throw new RailFailure(
      'transfer_would_revert',
      `the USDT contract refuses this transfer: ${simulated.message || 'it reverts'}`,
      false,
    )
  const need = ceilDiv(simulated.energyUsed * (10_000n + ENERGY_MARGIN_BPS), 10_000n)
  const wallet = await resources(deps)
  // The fee limit caps all energy the transfer may use, staked or bought (VMActuator).
  if (need * wallet.energyFee > feeLimitSun)
    throw new RailFailure(
      'fee_limit_too_low',
      `the transfer needs about ${need} energy (${formatScaled(need * wallet.energyFee, 6)} TRX), ` +
        `more than TRON_FEE_LIMIT_SUN allows (${formatScaled(feeLimitSun, 6)} TRX)`,
      false,
    )
  const energyBurn = (need > wallet.energyLeft ? need - wallet.energyLeft : 0n) * wallet.energyFee
  const bandwidthFree =
    wallet.stakedNetLeft >= TRC20_TRANSFER_BANDWIDTH || wallet.freeNetLeft >= TRC20_TRANSFER_BANDWIDTH
  const bandwidthBurn = bandwidthFree ? 0n : TRC20_TRANSFER_BANDWIDTH * wallet.transactionFee
  const trxNeeded = energyBurn + bandwidthBurn
  if (trxNeeded > wallet.balanceSun)
    throw new RailFailure(
      'hot_wallet_insufficient_trx',
      `the hot wallet holds ${formatScaled(wallet.balanceSun, 6)} TRX and ${wallet.energyLeft} staked energy; ` +
        `the transfer needs about ${formatScaled(trxNeeded, 6)} TRX for energy and bandwidth`,
      false,
    )
}

/** Asks the node to build the transfer, checks what it built, and signs it. */
async function build(
  deps: TronGridDeps,
  toHex: string,
  amountMinor: bigint,
  requestId: string,
): Promise<SignedTransfer> {
  const parameter = encodeTrc20Transfer(toHex, amountMinor)
  const answer = await deps.request('/wallet/triggersmartcontract', {
    owner_address: deps.ownerHex,
    contract_address: deps.contractHex,
    function_selector: 'transfer(address,uint256)',
    parameter,
    fee_limit: Number(deps.config.feeLimitSun),
    call_value: 0,
    visible: false,
  })
  const result = (answer.result ?? {}) as Json
  if (result.result !== true) {
    const code = typeof result.code === 'string' ? result.code : 'OTHER_ERROR'
    // Nothing was signed, so a refusal here is final; only a busy node is worth asking again.
    const retryable =
      code === 'SERVER_BUSY' || code === 'NO_CONNECTION' || code === 'NOT_ENOUGH_EFFECTIVE_CONNECTION'
    throw new RailFailure(`tron_${code.toLowerCase()}`, decodeNodeMessage(result.message), retryable)
  }
  const tx = answer.transaction as Json | undefined
  const issue = checkUnsigned(tx, {
    owner: deps.ownerHex,
    contract: deps.contractHex,
    data: TRC20_TRANSFER_SELECTOR + parameter,
    feeLimitSun: deps.config.feeLimitSun,
  })
  if (typeof issue === 'string')
    throw new RailFailure('tron_bad_transaction', `refusing to sign the node's transaction: ${issue}`, true)
  const { txHash, expirationMs } = issue
  const signature = signTxId(hexToBytes(txHash), deps.privateKey)
  return {
    requestId,
    txHash,
    body: { ...(tx as Json), signature: [signature], visible: false },
    expirationMs,
    toHex,
    amountMinor,
    recorded: false,
    accepted: false,
  }
}

/**
 * The transfer a store recorded for this request, to broadcast again: a restart may have come
 * between recording and any node accepting it. Its bytes must still be our transfer of this
 * amount to this address (under whatever fee limit was configured then). A record that is not
 * says the store or the configuration changed under a send that may be on the chain: it stays
 * retryable, so the payout waits for an operator and its funds are never released by mistake.
 */
function restore(
  deps: TronGridDeps,
  recorded: TronSendRecord,
  toHex: string,
  amountMinor: bigint,
  requestId: string,
): SignedTransfer {
  let body: Json
  try {
    body = JSON.parse(recorded.signed ?? '') as Json
  } catch {
    throw new RailFailure('send_record_mismatch', `send record of ${requestId} is not JSON`, true)
  }
  const checked = checkUnsigned(body, {
    owner: deps.ownerHex,
    contract: deps.contractHex,
    data: TRC20_TRANSFER_SELECTOR + encodeTrc20Transfer(toHex, amountMinor),
  })
  if (typeof checked === 'string' || checked.txHash !== recorded.txHash) {
    const issue = typeof checked === 'string' ? checked : 'another hash'
    throw new RailFailure('send_record_mismatch', `send record of ${requestId}: ${issue}`, true)
  }
  const { txHash, expirationMs } = checked
  return { requestId, txHash, body, expirationMs, toHex, amountMinor, recorded: true, accepted: false }
}

async function broadcast(deps: TronGridDeps, entry: SignedTransfer, resumed: boolean): Promise<void> {
  const answer = await deps.request('/wallet/broadcasttransaction', entry.body)
  const code =
    typeof answer.code === 'string' ? answer.code : answer.result === true ? 'SUCCESS' : 'OTHER_ERROR'
  if (answer.result === true || code === 'SUCCESS' || code === 'DUP_TRANSACTION_ERROR') {
    entry.accepted = true
    return
  }
  const message = decodeNodeMessage(answer.message)
  if (code === 'TRANSACTION_EXPIRATION_ERROR' || code === 'TAPOS_ERROR') {
    if (await isOnChain(deps, entry.txHash)) {
      entry.accepted = true
      return
    }
    // java-tron checks the expiration before anything else, also of a transaction a block already
    // holds (Wallet.broadcastTransaction, Manager.processTransaction): the refusal alone says
    // nothing, and the node answering our reads may lag behind a block made just before the
    // expiration. Failed only as the poll path decides it (trongrid-outcome.ts, expiredForGood);
    // until then the refusal stays retryable.
    if (
      code === 'TRANSACTION_EXPIRATION_ERROR' &&
      (await expiredForGood(deps, entry.txHash, entry.expirationMs, true))
    ) {
      // The network refuses it for good and no block holds it: nothing was or will be paid.
      forget(deps.sends, entry)
      throw new RailFailure('transaction_expired', `transaction ${entry.txHash} expired unconfirmed`, false)
    }
    if (code === 'TRANSACTION_EXPIRATION_ERROR')
      throw new RailFailure('tron_transaction_expiring', `${message}: not yet known unpaid`, true)
  }
  // A refusal of a transaction sent for the first time is final. After an earlier attempt that
  // ended without an answer, another node may hold it, so we keep trying until it expires.
  const final = !resumed && DEFINITIVE_REFUSALS.has(code)
  if (final) forget(deps.sends, entry)
  throw new RailFailure(`tron_${code.toLowerCase()}`, message, !final)
}
