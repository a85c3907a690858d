/**
 * Nonces of the hot wallet, allocated in the database (`eth_nonces`, migration 039). The caller
 * runs `lockNonce` and `takeNonce` inside the one transaction that also records the send with its
 * nonce and its signed transaction: a transaction that rolls back takes no nonce, one that commits
 * took exactly one, so workers on any number of processes never reuse or skip a nonce.
 */
import type { Queryable } from '../../db/db.js'
import { sql } from '../../db/sql.js'

/**
 * Locks the address's nonce row (creating it at the chain's count on first use) and returns the
 * next nonce: ours, or the chain's mined count when that is higher (the wallet sent from somewhere
 * else, or the database was restored from before sends it made). `chainCount` is a floor only, so
 * a stale reading of it is harmless.
 */
export async function lockNonce(q: Queryable, address: string, chainCount: bigint): Promise<bigint> {
  await q.query(
    sql`INSERT INTO eth_nonces (address, next_nonce) VALUES (${address}, ${chainCount.toString()})
        ON CONFLICT (address) DO NOTHING`,
  )
  const { rows } = await q.query<{ next_nonce: bigint }>(
    sql`SELECT next_nonce FROM eth_nonces WHERE address = ${address} FOR UPDATE`,
  )
  const next = BigInt(rows[0]!.next_nonce)
  return next > chainCount ? next : chainCount
}

/** Marks `nonce` (from `lockNonce`, in the same transaction) as taken. */
export async function takeNonce(q: Queryable, address: string, nonce: bigint): Promise<void> {
  await q.query(sql`UPDATE eth_nonces SET next_nonce = ${(nonce + 1n).toString()} WHERE address = ${address}`)
}
