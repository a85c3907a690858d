/**
 * The real TRON rail: USDT (TRC-20) transfers from the service's hot wallet through TronGrid's
 * HTTP API (the java-tron full-node API that TronGrid serves, with the `TRON-PRO-API-KEY` header).
 *
 * Before anything is signed, a pre-flight asks the node whether the hot wallet can fund the
 * transfer: its USDT (`balanceOf`), a simulation of the transfer (its energy), and its TRX, staked
 * energy and bandwidth against the chain's prices. A transfer it cannot fund is refused, burning
 * nothing, rather than left to fail OUT_OF_ENERGY on the chain, which charges for it.
 *
 * A transfer is built by the node (`/wallet/triggersmartcontract`), checked and signed here, and
 * handed back (`/wallet/broadcasttransaction`). We never trust the node's transaction blindly: the
 * txID must be the SHA-256 of the raw bytes we sign, and those bytes are decoded to make sure they
 * call `transfer(to, amount)` on the configured USDT contract from our wallet with our fee limit.
 * A node that answers with anything else gets no signature.
 *
 * An outcome is read only once the node has solidified the block (`/walletsolidity/*`), and success
 * is the receipt's SUCCESS together with the token's Transfer event for exactly this transfer,
 * never the call's return value: Tether's `transfer` returns no value (see docs/payouts.md).
 *
 * Idempotency by `requestId` (see docs/payouts.md): the signed transaction is kept in memory until
 * the node accepts it, so a retry in the same process re-broadcasts the very same transaction
 * (same txID, so the network can include it at most once). The optional `store` records the signed
 * transaction and its expiration before the first broadcast, so a retry after a restart broadcasts
 * that same transaction again instead of building a second transfer, and a transfer that never
 * reached a block is known to have expired however often the process restarted.
 *
 * The rail is a table of functions over one set of deps (trongrid-deps.ts): the request and its
 * failure codes (trongrid-http.ts), reads of the wallet and the chain (trongrid-node.ts), the
 * pre-flight, signing and broadcast (trongrid-payout.ts, over trongrid-transaction.ts and
 * trongrid-sends.ts), the outcome (trongrid-outcome.ts), the health check (trongrid-check.ts) and
 * the history reconciliation reads (trongrid-history.ts).
 */
import type { TronRail } from '../../rails/rail.js'
import { checkTronGrid } from './trongrid-check.js'
import { tronGridDeps, type TronGridConfig } from './trongrid-deps.js'
import { trc20TransfersFrom } from './trongrid-history.js'
import { reserves } from './trongrid-node.js'
import { getTransfer } from './trongrid-outcome.js'
import { sendUsdt } from './trongrid-payout.js'

export interface TronGridRail extends TronRail {
  /** The hot wallet's address: the operator funds it with USDT, and TRX for fees. */
  readonly hotWalletAddress: string
}

export function createTronGridRail(config: TronGridConfig): TronGridRail {
  const deps = tronGridDeps(config)
  return {
    name: 'trongrid',
    hotWalletAddress: deps.hotWalletAddress,
    sendUsdt: (input) => sendUsdt(deps, input),
    getTransfer: (txHash, expected) => getTransfer(deps, txHash, expected),
    reserves: () => reserves(deps),
    payments: (sinceMs) =>
      trc20TransfersFrom(
        { get: (path) => deps.request(path), wallet: deps.hotWalletAddress, contract: config.usdtContract },
        sinceMs,
      ),
    check: () => checkTronGrid(deps),
  }
}
