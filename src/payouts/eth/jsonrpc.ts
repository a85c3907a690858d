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
