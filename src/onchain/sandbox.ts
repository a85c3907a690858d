import { createHash, randomBytes } from 'node:crypto'
import type { Db, Queryable } from '../db/db.js'
import { WAKE_CHANNEL } from '../events/channels.js'
import type { Network } from '../config/network.js'
import { RailFailure, type OnchainOutput, type OnchainRail } from '../rails/rail.js'
import { canonicalAddress } from '../shared/address-spelling.js'
import { validateAddress } from './address.js'
import { estimateSendVsize, networkFeeSats } from './vsize.js'
import { sandboxOnchainPayments, sandboxOnchainReserves } from '../rails/sandbox-reserves.js'
import { sql } from '../db/sql.js'

/**
 * The sandbox Bitcoin chain, kept in the database (migration 002) so that every instance sees one
 * chain that survives restarts: a tip height, transactions in the mempool or in a block, and their
 * outputs. Sends from our hot wallet and outside payments made with `sendFromOutside` are chain
 * transactions alike, so a send from one account to another account's address is seen by the
 * deposit watcher like any other payment. Blocks are made only by `mine`.
 */
export interface SandboxOnchainRail extends OnchainRail {
  /**
   * An outside payment of `amountSats` to `address`, put in the mempool; `fromAddress` is who paid
   * (the address its input spends), listed as the output's `sources` as a node would.
   */
  sendFromOutside(input: {
    address: string
    amountSats: bigint
    fromAddress?: string
  }): Promise<{ txid: string }>
  /** Mine `blocks` blocks; the first takes every transaction in the mempool. Returns the new height. */
  mine(q: Queryable, blocks: number): Promise<number>
  height(): Promise<number>
}

/** Fee rates of the sandbox's estimator, sat/vB, by confirmation target. */
const FEE_RATES: Array<[maxTargetBlocks: number, satPerVb: bigint]> = [
  [1, 25n],
  [3, 12n],
  [6, 6n],
]
const FEE_RATE_FLOOR = 2n
/** At most this many blocks per call: the chain is a table, not a place for runaway loops. */
export const MINE_BLOCKS_MAX = 1_000

export function createSandboxOnchainRail(deps: {
  db: Db
  network: Network
  now?: () => number
  /** ONCHAIN_CONFIRMATIONS: payments with fewer are still arriving, not listed by `payments`. Default 1. */
  creditConfirmations?: number
}): SandboxOnchainRail {
  const { db, network } = deps
  const now = deps.now ?? Date.now

  /** Txids are the sha256 of something unique (a fresh random value, or our send's request id). */
  const txidOf = (unique: string) => createHash('sha256').update(unique).digest('hex')

  /** Add a one-output transaction to the mempool; false when one with this txid already exists. */
  async function insertTx(
    q: Queryable,
    input: {
      txid: string
      requestId: string | null
      feeSats: bigint
      address: string
      amountSats: bigint
      fromAddress?: string | undefined
    },
  ): Promise<boolean> {
    const inserted = await q.query(
      sql`INSERT INTO sandbox_chain_txs (txid, request_id, fee_sats, created_at, from_address) VALUES (${input.txid}, ${input.requestId}, ${input.feeSats}, ${now()}, ${input.fromAddress ?? null}) ON CONFLICT DO NOTHING`,
    )
    if (inserted.rowCount === 0) return false
    await q.query(
      sql`INSERT INTO sandbox_chain_outputs (txid, vout, address, amount_sats) VALUES (${input.txid}, 0, ${input.address}, ${input.amountSats})`,
    )
    // Like a node's notification of a new transaction: if the address is one we watch, the deposit
    // watcher looks at it now (the NOTIFY is sent when this commits).
    const watched = await q.query(
      sql`UPDATE onchain_addresses SET next_check_at = ${now()} WHERE address = ${input.address}`,
    )
    if (watched.rowCount > 0) await q.notify(WAKE_CHANNEL)
    return true
  }

  async function height(q: Queryable = db): Promise<number> {
    const { rows } = await q.query<{ height: bigint }>(sql`SELECT height FROM sandbox_chain WHERE id = 1`)
    return Number(rows[0]!.height)
  }

  return {
    name: 'sandbox',
    network,
    // The txid follows from the request id: sending again finds the same transaction.
    resendsSameTransaction: true,

    // What the sandbox hot wallet holds, from the chain's own records (reconciliation, src/reconcile).
    reserves: () => sandboxOnchainReserves(db),
    // What the chain moved to or from our addresses, by txid (item matching, src/reconcile).
    payments: (sinceMs: number) => sandboxOnchainPayments(db, sinceMs, deps.creditConfirmations ?? 1),

    async watchAddress() {
      // Every output of the sandbox chain is indexed by address: there is nothing to import.
    },

    async listOutputs(address): Promise<OnchainOutput[]> {
      const { rows } = await db.query<{
        txid: string
        vout: number
        amount_sats: bigint
        confirmations: bigint
        from_address: string | null
      }>(
        sql`SELECT o.txid, o.vout, o.amount_sats, t.from_address,
                CASE WHEN t.block_height IS NULL THEN 0 ELSE c.height - t.block_height + 1 END AS confirmations
           FROM sandbox_chain_outputs o
           JOIN sandbox_chain_txs t ON t.txid = o.txid
          CROSS JOIN sandbox_chain c
          WHERE o.address = ${canonicalAddress(address)}
          ORDER BY t.created_at, o.txid, o.vout`,
      )
      return rows.map((r) => ({
        txid: r.txid,
        vout: r.vout,
        amountSats: r.amount_sats,
        confirmations: Number(r.confirmations),
        ...(r.from_address === null ? {} : { sources: [r.from_address] }),
      }))
    },

    async estimateFeeRate(targetBlocks) {
      for (const [max, rate] of FEE_RATES) if (targetBlocks <= max) return rate
      return FEE_RATE_FLOOR
    },

    async send({ address, amountSats, feeRateSatPerVb, requestId }) {
      const check = validateAddress(address, network)
      if (!check.ok)
        throw new RailFailure('invalid_address', `the node refuses the address: ${check.issue}`, false)
      // The txid follows from the request id, so a repeated or concurrent send finds the first one
      // (a concurrent insert waits for the other to commit, then does nothing).
      const txid = txidOf(`svcpay-sandbox-send:${requestId}`)
      // The hot wallet of the sandbox never runs dry; the fee is what the quoted rate buys.
      const feeSats = networkFeeSats(feeRateSatPerVb, estimateSendVsize(check.type))
      // A chain pays a script, not a spelling: the output is indexed under the canonical address, so
      // an upper-case bech32 spelling pays the same watched address (as bitcoind would).
      await db.tx((q) => insertTx(q, { txid, requestId, feeSats, address: check.address, amountSats }))
      return { txid }
    },

    async getTransaction(txid) {
      const { rows } = await db.query<{ confirmations: bigint }>(
        sql`SELECT CASE WHEN t.block_height IS NULL THEN 0 ELSE c.height - t.block_height + 1 END AS confirmations
           FROM sandbox_chain_txs t CROSS JOIN sandbox_chain c WHERE t.txid = ${txid}`,
      )
      return rows[0] ? { confirmations: Number(rows[0].confirmations) } : null
    },

    async bumpFee(txid, feeRateSatPerVb) {
      // A BIP 125 replacement in miniature: the unconfirmed send of ours takes a new txid and fee,
      // keeps its outputs and its request id; the replaced one leaves the mempool.
      const replacement = txidOf(`svcpay-sandbox-bump:${txid}:${feeRateSatPerVb}`)
      await db.tx(async (q) => {
        const { rows } = await q.query<{ block_height: bigint | null; request_id: string | null }>(
          sql`SELECT block_height, request_id FROM sandbox_chain_txs WHERE txid = ${txid} FOR UPDATE`,
        )
        const old = rows[0]
        if (!old || old.request_id === null)
          throw new RailFailure('invalid_address', 'Invalid or non-wallet transaction id', false)
        if (old.block_height !== null)
          throw new RailFailure(
            'wallet_error',
            'Transaction has been mined, or is conflicted with a mined transaction',
            false,
          )
        await q.query(sql`UPDATE sandbox_chain_txs SET request_id = NULL WHERE txid = ${txid}`)
        await q.query(
          sql`INSERT INTO sandbox_chain_txs (txid, request_id, fee_sats, created_at) VALUES (${replacement}, ${old.request_id}, ${feeRateSatPerVb * 141n}, ${now()})`,
        )
        await q.query(sql`UPDATE sandbox_chain_outputs SET txid = ${replacement} WHERE txid = ${txid}`)
        await q.query(sql`DELETE FROM sandbox_chain_txs WHERE txid = ${txid}`)
      })
      return { txid: replacement, feeSats: feeRateSatPerVb * 141n }
    },

    async sendFromOutside({ address, amountSats, fromAddress }) {
      const txid = txidOf(`svcpay-sandbox-outside:${randomBytes(32).toString('hex')}`)
      const canonical = canonicalAddress(address)
      await db.tx((q) =>
        insertTx(q, { txid, requestId: null, feeSats: 0n, address: canonical, amountSats, fromAddress }),
      )
      return { txid }
    },

    async mine(q, blocks) {
      if (!Number.isInteger(blocks) || blocks < 1 || blocks > MINE_BLOCKS_MAX) {
        throw new RangeError(`blocks must be a whole number from 1 to ${MINE_BLOCKS_MAX}`)
      }
      // The tip row is the chain's lock: two miners at once take turns.
      const { rows } = await q.query<{ height: bigint }>(
        sql`UPDATE sandbox_chain SET height = height + ${blocks} WHERE id = 1 RETURNING height`,
      )
      const tip = rows[0]!.height
      await q.query(
        sql`UPDATE sandbox_chain_txs SET block_height = ${tip - BigInt(blocks) + 1n} WHERE block_height IS NULL`,
      )
      return Number(tip)
    },

    height: () => height(),
  }
}
