/**
 * The real Ethereum rail (issue 33): USDT (Tether's ERC-20 contract) paid from the service's hot
 * wallet over any Ethereum JSON-RPC node (geth, Nethermind, Erigon, a provider).
 *
 * - Nonces are allocated in the database per hot-wallet address (jsonrpc-nonces.ts), recorded
 *   with the request and its signed transaction in one transaction (jsonrpc-sends.ts).
 * - Transactions are EIP-1559 (type 2), signed here (jsonrpc-tx.ts), with fees from
 *   eth_feeHistory and eth_maxPriorityFeePerGas under the caller's cap (jsonrpc-fees.ts).
 * - Every signed transaction is stored before it is broadcast (jsonrpc-payout.ts): a lost answer
 *   is met by broadcasting the same bytes again.
 * - The outcome (jsonrpc-outcome.ts, jsonrpc-mined.ts) comes from the receipt and Tether's
 *   Transfer log, final only at the `finalized` block and `confirmations` deep; a reorged receipt
 *   is pending again; a lost transaction is re-broadcast, a gap below ours filled, a slow one
 *   replaced with the same nonce, or reported stuck.
 * - Node errors are classified as geth words them (jsonrpc-client.ts).
 * - `check()` (jsonrpc-check.ts), `reserves()` and `payments()` (jsonrpc-reserves.ts).
 *
 * Failure codes (`RailFailure.code`). Final, from `sendUsdt` before anything is signed:
 * `invalid_address`, `invalid_amount`, `invalid_fee_cap`, `wrong_chain`, `token_paused`,
 * `hot_wallet_blacklisted`, `recipient_blacklisted`, `insufficient_hot_wallet_usdt`,
 * `transfer_would_revert`, `fee_above_cap`, `insufficient_hot_wallet_eth`; and `request_conflict`
 * (the request id was another transfer). Retryable: the node's answers as jsonrpc-client.ts
 * classifies them (`eth_timeout`, `eth_unreachable`, `eth_http_<status>`, `eth_bad_response`,
 * `eth_rate_limited`, `eth_access_refused`, `eth_nonce_too_low`, `eth_replacement_underpriced`,
 * `eth_underpriced`, `eth_insufficient_funds`, `eth_node_error`, ...), `store_unavailable`,
 * `send_record_missing`; once a nonce is taken every failure of `sendUsdt` is retryable. The
 * outcome `failed` has the reason `transfer_reverted` (status 0x0, final).
 */
import type { EthRail } from '../../rails/rail.js'
import { checkEthJsonRpc } from './jsonrpc-check.js'
import { ethDeps, type EthJsonRpcOptions } from './jsonrpc-deps.js'
import { feeQuote } from './jsonrpc-fees.js'
import { getTransfer } from './jsonrpc-outcome.js'
import { sendUsdt } from './jsonrpc-payout.js'
import { payments, reserves } from './jsonrpc-reserves.js'
import { checksumAddress } from './jsonrpc-tx.js'

export type { EthJsonRpcOptions } from './jsonrpc-deps.js'

export interface EthJsonRpcRail extends EthRail {
  /** The hot wallet's address (EIP-55): the operator funds it with USDT, and ETH for gas. */
  readonly hotWalletAddress: string
}

export function createEthJsonRpcRail(opts: EthJsonRpcOptions): EthJsonRpcRail {
  const deps = ethDeps(opts)
  return {
    name: 'jsonrpc',
    hotWalletAddress: checksumAddress(deps.address),
    feeQuote: () => feeQuote(deps),
    sendUsdt: (input) => sendUsdt(deps, input),
    getTransfer: (requestId, expected) => getTransfer(deps, requestId, expected),
    reserves: () => reserves(deps),
    payments: (sinceMs) => payments(deps, sinceMs),
    check: () => checkEthJsonRpc(deps),
  }
}
