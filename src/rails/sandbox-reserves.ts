/**
 * What the sandbox networks hold, read from their own records (migrations 002, 003 and 023), never
 * from the ledger: the sandbox stands in for the node or partner, so it answers from what it moved.
 * - Lightning: our invoices it settled, less the payments our node made and their routing fees.
 * - On-chain: every output paying one of our addresses, less our sends and their fees; outputs still
 *   in the mempool are reported as `incoming` too.
 * - TRON, Ethereum and bank: the payouts they completed, which leave the hot wallet or the account.
 * Each also counts `sandbox_rail_movements`: money moved on the network outside the service. The
 * sandbox hot wallets start empty and never run dry, so a payout-only rail reports a negative
 * balance: what it paid out that nobody put in (the books show the same).
 */
import type { Queryable } from '../db/db.js'
import type { RailKind, RailPayment, RailReserves } from './rail.js'
import { sql } from '../db/sql.js'

async function moved(db: Queryable, rail: RailKind, ccy: string): Promise<bigint> {
  const { rows } = await db.query<{ total: unknown }>(
    sql`SELECT COALESCE(SUM(amount_minor), 0)::int8 AS total FROM sandbox_rail_movements WHERE rail = ${rail} AND ccy = ${ccy}`,
  )
  return BigInt(rows[0]!.total as bigint)
}

export async function sandboxLightningReserves(db: Queryable): Promise<RailReserves> {
  const { rows } = await db.query<{ received: unknown; paid: unknown }>(
    sql`SELECT
       (SELECT COALESCE(SUM(amount_paid_msat), 0)::int8 FROM sandbox_ln_invoices WHERE ours AND state = 'settled') AS received,
       (SELECT COALESCE(SUM(amount_msat + fee_msat), 0)::int8 FROM sandbox_ln_payments WHERE status = 'succeeded') AS paid`,
  )
  const msat = BigInt(rows[0]!.received as bigint) - BigInt(rows[0]!.paid as bigint)
  // Whole satoshis, rounded down: a channel balance's part of a satoshi cannot be spent on-chain.
  const sats = msat >= 0n ? msat / 1000n : -((-msat + 999n) / 1000n)
  return { balances: { BTC: sats + (await moved(db, 'lightning', 'BTC')) }, incoming: { BTC: 0n } }
}

export async function sandboxOnchainReserves(db: Queryable): Promise<RailReserves> {
  const { rows } = await db.query<{ received: unknown; unconfirmed: unknown; sent: unknown }>(
    sql`SELECT
       (SELECT COALESCE(SUM(o.amount_sats), 0)::int8 FROM sandbox_chain_outputs o
          WHERE o.address IN (SELECT address FROM onchain_addresses)) AS received,
       (SELECT COALESCE(SUM(o.amount_sats), 0)::int8 FROM sandbox_chain_outputs o
          JOIN sandbox_chain_txs t ON t.txid = o.txid
          WHERE t.block_height IS NULL AND o.address IN (SELECT address FROM onchain_addresses)) AS unconfirmed,
       (SELECT COALESCE(SUM(t.fee_sats + (SELECT COALESCE(SUM(o.amount_sats), 0) FROM sandbox_chain_outputs o WHERE o.txid = t.txid)), 0)::int8
          FROM sandbox_chain_txs t WHERE t.request_id IS NOT NULL) AS sent`,
  )
  const r = rows[0]!
  const balance =
    BigInt(r.received as bigint) - BigInt(r.sent as bigint) + (await moved(db, 'onchain', 'BTC'))
  return { balances: { BTC: balance }, incoming: { BTC: BigInt(r.unconfirmed as bigint) } }
}

export async function sandboxPayoutReserves(
  db: Queryable,
  kind: 'tron' | 'bank' | 'ethereum',
  ccy: 'USDT' | 'VND',
): Promise<RailReserves> {
  const { rows } = await db.query<{ paid: unknown }>(
    sql`SELECT COALESCE(SUM(amount_minor), 0)::int8 AS paid FROM sandbox_payouts WHERE kind = ${kind} AND status = 'completed'`,
  )
  const balance = (await moved(db, kind, ccy)) - BigInt(rows[0]!.paid as bigint)
  return { balances: { [ccy]: balance }, incoming: { [ccy]: 0n } }
}

/** The sandbox Lightning node's payments since `sinceMs`: our invoices it settled, the payments it made. */
export async function sandboxLightningPayments(db: Queryable, sinceMs: number): Promise<RailPayment[]> {
  const since = sql.param(sinceMs)
  const { rows } = await db.query<{ ref: string; direction: 'in' | 'out'; msat: unknown; at: unknown }>(
    sql`SELECT payment_hash AS ref, 'in' AS direction, amount_paid_msat AS msat, settled_at AS at
       FROM sandbox_ln_invoices WHERE ours AND state = 'settled' AND settled_at >= ${since}
     UNION ALL
     SELECT payment_hash, 'out', amount_msat + fee_msat, created_at
       FROM sandbox_ln_payments WHERE status = 'succeeded' AND created_at >= ${since}`,
  )
  return rows.map((r) => ({
    ref: r.ref,
    direction: r.direction,
    amountMinor: BigInt(r.msat as bigint) / 1000n,
    at: Number(r.at),
  }))
}

/** The sandbox payout network's completed payouts since `sinceMs`. */
export async function sandboxPayoutPayments(
  db: Queryable,
  kind: 'tron' | 'bank' | 'ethereum',
  sinceMs: number,
): Promise<RailPayment[]> {
  const { rows } = await db.query<{ ref: string; amount_minor: unknown; created_at: unknown }>(
    sql`SELECT ref, amount_minor, created_at FROM sandbox_payouts WHERE kind = ${kind} AND status = 'completed' AND created_at >= ${sinceMs}`,
  )
  return rows.map((r) => ({
    ref: r.ref,
    direction: 'out' as const,
    amountMinor: BigInt(r.amount_minor as bigint),
    at: Number(r.created_at),
  }))
}

/**
 * How much further back than the window the sandbox chain is read: a deposit that arrived before the
 * window and was credited inside it is still listed (as bitcoind-reconcile.ts does). Rail payments
 * are matched against the whole ledger, so reading more never makes an orphan.
 */
const CHAIN_LOOKBACK_MS = 2 * 86_400_000

/**
 * The sandbox chain's payments since `sinceMs` with at least `confirmations` confirmations (fewer:
 * still arriving, not yet posted by the service): per transaction, what our sends paid out with
 * their fee, and what it paid to our addresses. A send to one of our own addresses is both.
 */
export async function sandboxOnchainPayments(
  db: Queryable,
  sinceMs: number,
  confirmations: number,
): Promise<RailPayment[]> {
  const { rows } = await db.query<{ ref: string; direction: 'in' | 'out'; sats: unknown; at: unknown }>(
    sql`WITH txs AS (
       SELECT t.* FROM sandbox_chain_txs t CROSS JOIN sandbox_chain c
        WHERE t.block_height IS NOT NULL AND c.height - t.block_height + 1 >= ${confirmations} AND t.created_at >= ${sinceMs - CHAIN_LOOKBACK_MS})
     SELECT t.txid AS ref, 'out' AS direction,
            (t.fee_sats + (SELECT COALESCE(SUM(o.amount_sats), 0) FROM sandbox_chain_outputs o WHERE o.txid = t.txid))::int8 AS sats,
            t.created_at AS at
       FROM txs t WHERE t.request_id IS NOT NULL
     UNION ALL
     SELECT t.txid, 'in', SUM(o.amount_sats)::int8, t.created_at
       FROM txs t JOIN sandbox_chain_outputs o ON o.txid = t.txid
      WHERE o.address IN (SELECT address FROM onchain_addresses)
      GROUP BY t.txid, t.created_at`,
  )
  return rows.map((r) => ({
    ref: r.ref,
    direction: r.direction,
    amountMinor: BigInt(r.sats as bigint),
    at: Number(r.at),
  }))
}
