/**
 * What the Ethereum rail holds (reconciliation, issue 18) and the payments it made. Balances are
 * read at the `finalized` block, the reading every outcome here is based on: USDT in minor units
 * (6 decimals) and ETH in wei. Payments are this rail's own sends (the node keeps no index by
 * account), each counted once its transaction is final, succeeded and carries Tether's Transfer log,
 * and named by its first transaction's hash (the transaction's rail reference) even when a
 * replacement was the one mined.
 */
import type { RailPayment, RailReserves } from '../../rails/rail.js'
import { hexQuantity, object } from './jsonrpc-client.js'
import { ethBalance, usdtBalanceOf, type EthDeps } from './jsonrpc-deps.js'
import { findMined } from './jsonrpc-mined.js'
import { hasTransferLog } from './jsonrpc-outcome.js'
import { sendsSince } from './jsonrpc-sends.js'

/** Sends listed at most in one reading; reconciliation reads again from the last one's time. */
export const PAYMENTS_MAX = 1_000

export async function reserves(deps: EthDeps): Promise<RailReserves> {
  return {
    balances: {
      USDT: await usdtBalanceOf(deps, deps.address, 'finalized'),
      ETH: await ethBalance(deps, 'finalized'),
    },
    // Nothing arrives by this rail.
    incoming: { USDT: 0n },
  }
}

export async function payments(deps: EthDeps, sinceMs: number): Promise<RailPayment[]> {
  const finalized = await deps.rpc('eth_getBlockByNumber', ['finalized', false])
  if (finalized === null) return []
  const finalNumber = hexQuantity(object(finalized, 'finalized block').number, 'finalized.number')
  const out: RailPayment[] = []
  for (const send of await sendsSince(deps.db, deps.address, sinceMs, PAYMENTS_MAX)) {
    const mined = await findMined(deps, send)
    if (!mined || !mined.succeeded || mined.blockNumber > finalNumber) continue
    if (!hasTransferLog(deps, mined.logs, send.to, send.amountMinor)) continue
    // The payout's reference as the service keeps it: its first transaction, not a replacement.
    out.push({
      ref: send.txs[0]!.txHash,
      direction: 'out',
      amountMinor: send.amountMinor,
      at: send.createdAt,
    })
  }
  return out
}
