import { randomBytes } from 'node:crypto'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import type { Queryable } from '../../db/db.js'
import { formatScaled } from '../../shared/amount.js'
import { RailFailure, type EthFeeQuote, type EthRail, type EthTransferState } from '../../rails/rail.js'
import { sandboxPayoutPayments, sandboxPayoutReserves } from '../../rails/sandbox-reserves.js'
import { sql } from '../../db/sql.js'

export interface SandboxEthDeps {
  db: Queryable
  /** Destination addresses whose transfers fail (`SANDBOX_ETH_FAIL`), compared without case. */
  failAddresses: readonly string[]
  /** How long after submission a transfer is final (`SANDBOX_PAYOUT_DELAY_MS`). */
  delayMs: number
  now?: () => number
}

/** The reason a transfer to a `SANDBOX_ETH_FAIL` address fails with (its receipt's `status: 0x0`). */
export const SANDBOX_ETH_FAIL_REASON = 'transfer_reverted'

/**
 * What the sandbox network charges: a fee cap of 20 gwei per gas (a quiet mainnet's base fee with
 * headroom and a 1 gwei tip) and 65,000 gas, about what Tether's `transfer` to a holder takes with
 * an estimate's margin. The mined transfer uses less: 46,000 gas at 12 gwei.
 */
export const SANDBOX_ETH_FEE: EthFeeQuote = { maxFeePerGasWei: 20_000_000_000n, gasLimit: 65_000n }
const SANDBOX_GAS_USED = 46_000n
const SANDBOX_EFFECTIVE_GAS_PRICE_WEI = 12_000_000_000n
/** The sandbox chain id (a development chain's, as geth --dev and Hardhat use). */
const SANDBOX_CHAIN_ID = 1337

/**
 * The sandbox Ethereum network: a USDT transfer is recorded in `sandbox_payouts` (kind `ethereum`)
 * with a transaction hash (0x and 64 hex digits, as Ethereum's are) and its outcome, decided at
 * submission: it reverts when the address is listed in `SANDBOX_ETH_FAIL` and succeeds otherwise.
 * Until `delayMs` has passed the transfer reads as pending, as a real one does until its block is
 * finalized; its final state carries the fee the hot wallet paid in ETH. A send whose fee cap is
 * below what the network charges is refused before anything is sent, as the real adapter never bids
 * above the cap.
 */
export function createSandboxEthRail(deps: SandboxEthDeps): EthRail {
  const now = deps.now ?? Date.now
  const failing = new Set(deps.failAddresses.map((a) => a.toLowerCase()))
  return {
    name: 'sandbox',

    reserves: () => sandboxPayoutReserves(deps.db, 'ethereum', 'USDT'),
    payments: (sinceMs) => sandboxPayoutPayments(deps.db, 'ethereum', sinceMs),

    async check() {
      const reserves = await sandboxPayoutReserves(deps.db, 'ethereum', 'USDT')
      return {
        rail: 'ethereum',
        adapter: 'sandbox',
        reachable: true,
        network: `sandbox (chain id ${SANDBOX_CHAIN_ID})`,
        synced: true,
        balances: { USDT: formatScaled(reserves.balances.USDT ?? 0n, 6) },
        problems: [],
      }
    },

    async feeQuote() {
      return { ...SANDBOX_ETH_FEE }
    },

    async sendUsdt({ to, amountMinor, requestId, maxFeeWei }) {
      if (amountMinor <= 0n)
        throw new RailFailure('invalid_amount', 'a transfer must move a positive amount', false)
      // A repeated request finds the first transfer: the rail never sends twice for one request.
      const existing = await refOf(deps.db, requestId)
      if (existing) return { txHash: existing }
      const cost = SANDBOX_ETH_FEE.maxFeePerGasWei * SANDBOX_ETH_FEE.gasLimit
      if (maxFeeWei < cost)
        throw new RailFailure(
          'fee_cap_too_low',
          `the network charges up to ${cost} wei, above the cap of ${maxFeeWei}`,
          false,
        )
      const at = now()
      // The hash only has to be unique; the random part keeps it so across sandbox databases.
      const txHash =
        '0x' +
        bytesToHex(
          keccak_256(new Uint8Array([...utf8ToBytes(`sandbox-eth:${requestId}:`), ...randomBytes(16)])),
        )
      const fails = failing.has(to.toLowerCase())
      await deps.db.query(
        sql`INSERT INTO sandbox_payouts (ref, kind, request_id, amount_minor, status, reason, settle_at, created_at)
         VALUES (${txHash}, 'ethereum', ${requestId}, ${amountMinor}, ${fails ? 'failed' : 'completed'}, ${fails ? SANDBOX_ETH_FAIL_REASON : ''}, ${at + deps.delayMs}, ${at}) ON CONFLICT (request_id) DO NOTHING`,
      )
      const ref = await refOf(deps.db, requestId)
      if (!ref)
        throw new RailFailure('request_conflict', `request ${requestId} is not an Ethereum transfer`, false)
      return { txHash: ref }
    },

    async getTransfer(requestId, expected): Promise<EthTransferState> {
      const { rows } = await deps.db.query<{
        ref: string
        amount_minor: bigint
        status: 'completed' | 'failed' | 'rejected'
        reason: string
        settle_at: bigint
      }>(
        sql`SELECT ref, amount_minor, status, reason, settle_at FROM sandbox_payouts WHERE request_id = ${requestId} AND kind = 'ethereum'`,
      )
      const row = rows[0]
      if (!row)
        throw new RailFailure(
          'unknown_payout',
          `the sandbox Ethereum network knows no transfer for ${requestId}`,
          false,
        )
      if (BigInt(row.amount_minor) !== expected.amountMinor)
        throw new RailFailure(
          'transfer_mismatch',
          `the transfer for ${requestId} moved another amount`,
          false,
        )
      const txHash = row.ref
      if (BigInt(now()) < BigInt(row.settle_at)) return { status: 'pending', txHash }
      const feeWei = SANDBOX_GAS_USED * SANDBOX_EFFECTIVE_GAS_PRICE_WEI
      if (row.status === 'completed') return { status: 'completed', txHash, feeWei }
      return { status: 'failed', reason: row.reason, txHash, feeWei }
    },
  }
}

async function refOf(db: Queryable, requestId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ ref: string }>(
    sql`SELECT ref FROM sandbox_payouts WHERE request_id = ${requestId} AND kind = 'ethereum'`,
  )
  return rows[0]?.ref
}
