/**
 * `sendUsdt`: the pre-flight, the nonce and the signed transaction recorded in one database
 * transaction, then the broadcast.
 *
 * The pre-flight asks the node, before anything is signed, whether the transfer can succeed:
 * Tether not paused, neither the hot wallet nor the recipient on Tether's blacklist (Tether's
 * mainnet `transfer` checks only the sender, but USDT sent to a blacklisted address is frozen there
 * for good, so we refuse it too), the hot wallet's USDT, the node's gas estimate of the very call,
 * the fees under the cap and the ETH to pay them. Each refusal is final and spends nothing.
 *
 * Once a nonce is taken, the payout owns it for ever: any failure after that is retryable (the
 * payout stays pending and its transaction, or a replacement, is broadcast again), because failing
 * it would leave a nonce no transaction fills and every later send stuck behind it.
 */
import { RailFailure } from '../../rails/rail.js'
import { EthRpcError, hexHash, hexQuantity } from './jsonrpc-client.js'
import {
  ensureChain,
  ethBalance,
  isBlackListed,
  tokenPaused,
  transactionCount,
  usdtBalanceOf,
  type EthDeps,
} from './jsonrpc-deps.js'
import { feeMarket, firstFees, gasLimitFromEstimate } from './jsonrpc-fees.js'
import { findMined } from './jsonrpc-mined.js'
import { getSend, recordNewSend, type EthSend, type EthSentTx } from './jsonrpc-sends.js'
import { normalizeAddress, signEip1559, transferCallData } from './jsonrpc-tx.js'

export interface SendInput {
  to: string
  amountMinor: bigint
  requestId: string
  maxFeeWei: bigint
}

export async function sendUsdt(deps: EthDeps, input: SendInput): Promise<{ txHash: string }> {
  if (!/^0x[0-9a-fA-F]{40}$/.test(input.to))
    throw new RailFailure('invalid_address', 'the recipient is not a 20-byte hex address', false)
  if (input.amountMinor <= 0n)
    throw new RailFailure('invalid_amount', 'a transfer must move a positive amount', false)
  if (input.maxFeeWei <= 0n) throw new RailFailure('invalid_fee_cap', 'the fee cap must be positive', false)
  const to = normalizeAddress(input.to)
  const existing = await getSend(deps.db, input.requestId)
  if (existing) return resend(deps, sameTransfer(existing, to, input))

  await ensureChain(deps)
  const data = transferCallData(to, input.amountMinor)
  if (await tokenPaused(deps))
    throw new RailFailure('token_paused', 'Tether has paused USDT transfers', false)
  if (await isBlackListed(deps, deps.address))
    throw new RailFailure('hot_wallet_blacklisted', 'Tether has blacklisted the hot wallet', false)
  if (await isBlackListed(deps, to))
    throw new RailFailure('recipient_blacklisted', 'Tether has blacklisted the recipient address', false)
  const usdt = await usdtBalanceOf(deps, deps.address)
  if (usdt < input.amountMinor)
    throw new RailFailure(
      'insufficient_hot_wallet_usdt',
      `the hot wallet holds ${usdt} USDT minor units, the transfer needs ${input.amountMinor}`,
      false,
    )
  let estimate: bigint
  try {
    estimate = hexQuantity(
      await deps.rpc('eth_estimateGas', [{ from: deps.address, to: deps.usdt, data }]),
      'eth_estimateGas',
    )
  } catch (err) {
    if (err instanceof RailFailure && err.code === 'eth_execution_reverted')
      throw new RailFailure(
        'transfer_would_revert',
        `the node's simulation of the transfer fails: ${err.message}`,
        false,
      )
    throw err
  }
  const gasLimit = gasLimitFromEstimate(estimate)
  const fees = firstFees(await feeMarket(deps), gasLimit, input.maxFeeWei)
  const eth = await ethBalance(deps)
  if (eth < fees.maxFeePerGas * gasLimit)
    throw new RailFailure(
      'insufficient_hot_wallet_eth',
      `the hot wallet holds ${eth} wei, the transfer may cost up to ${fees.maxFeePerGas * gasLimit}`,
      false,
    )
  const chainCount = await transactionCount(deps, 'latest')
  const { send } = await recordNewSend(deps.db, {
    requestId: input.requestId,
    address: deps.address,
    to,
    amountMinor: input.amountMinor,
    maxFeeWei: input.maxFeeWei,
    chainCount,
    now: deps.now(),
    sign: (nonce) => {
      const signed = signEip1559(
        { chainId: deps.chainId, nonce, ...fees, gasLimit, to: deps.usdt, data },
        deps.privateKey,
      )
      return { txHash: signed.hash, raw: signed.raw, gasLimit, ...fees }
    },
  })
  // Another worker may have recorded this request first: it is then the same transfer or refused.
  return resend(deps, sameTransfer(send, to, input))
}

function sameTransfer(send: EthSend, to: string, input: SendInput): EthSend {
  if (send.to !== to || send.amountMinor !== input.amountMinor)
    throw new RailFailure('request_conflict', `request ${input.requestId} was a different transfer`, false)
  return send
}

/**
 * Broadcasts the send's current transaction; every failure retryable (the nonce is taken). The
 * answer is the payout's reference, its first transaction's hash, whichever replaced it since: the
 * service keeps that one as the transaction's rail reference, and `payments` names it too.
 */
async function resend(deps: EthDeps, send: EthSend): Promise<{ txHash: string }> {
  const current = send.txs[send.txs.length - 1]!
  try {
    await broadcast(deps, send, current)
  } catch (err) {
    if (err instanceof RailFailure && !err.retryable) throw new RailFailure(err.code, err.message, true)
    throw err
  }
  return { txHash: send.txs[0]!.txHash }
}

/**
 * `eth_sendRawTransaction` of stored bytes. The node already having them (`already known`, a lost
 * answer after it took them) is success, as is `nonce too low` when one of our transactions for
 * this nonce is the one mined.
 */
export async function broadcast(deps: EthDeps, send: EthSend, tx: EthSentTx): Promise<void> {
  try {
    const hash = hexHash(await deps.rpc('eth_sendRawTransaction', [tx.raw]), 'eth_sendRawTransaction')
    if (hash !== tx.txHash)
      throw new RailFailure(
        'eth_bad_response',
        `the node names our transaction ${hash}, not ${tx.txHash}`,
        true,
      )
  } catch (err) {
    if (err instanceof EthRpcError && err.code === 'eth_already_known') return
    if (err instanceof EthRpcError && err.code === 'eth_nonce_too_low' && (await findMined(deps, send)))
      return
    throw err
  }
}
