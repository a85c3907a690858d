/**
 * The Ethereum rail's send records (`eth_sends`, `eth_send_txs`, migration 039): each payout's
 * nonce and every transaction signed for it, written before it is broadcast. This module owns the
 * two tables; nothing here talks to the node.
 */
import type { Db, Queryable } from '../../db/db.js'
import { sql } from '../../db/sql.js'
import { RailFailure } from '../../rails/rail.js'
import { lockNonce, takeNonce } from './jsonrpc-nonces.js'

export interface EthSentTx {
  txHash: string
  attempt: number
  raw: string
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  gasLimit: bigint
  signedAt: number
}

export interface EthSend {
  requestId: string
  address: string
  nonce: bigint
  to: string
  amountMinor: bigint
  maxFeeWei: bigint
  stuck: string | null
  createdAt: number
  /** Oldest first; the last is the one that counts now. */
  txs: EthSentTx[]
}

/** The transaction to sign for a nonce, made by the caller inside the recording transaction. */
export type SignAt = (nonce: bigint) => Omit<EthSentTx, 'attempt' | 'signedAt'>

type SendRow = {
  request_id: string
  address: string
  nonce: bigint
  to_address: string
  amount_minor: string
  max_fee_wei: string
  stuck: string | null
  created_at: bigint
}
type TxRow = {
  tx_hash: string
  attempt: number
  raw_tx: string
  max_fee_per_gas: string
  max_priority_fee_per_gas: string
  gas_limit: bigint
  signed_at: bigint
}

const SEND_COLUMNS = sql`request_id, address, nonce, to_address, amount_minor::text AS amount_minor,
  max_fee_wei::text AS max_fee_wei, stuck, created_at`

async function txsOf(q: Queryable, requestIds: string[]): Promise<Map<string, EthSentTx[]>> {
  const out = new Map<string, EthSentTx[]>()
  if (requestIds.length === 0) return out
  const { rows } = await q.query<TxRow & { request_id: string }>(
    sql`SELECT request_id, tx_hash, attempt, raw_tx, max_fee_per_gas::text AS max_fee_per_gas,
          max_priority_fee_per_gas::text AS max_priority_fee_per_gas, gas_limit, signed_at
        FROM eth_send_txs WHERE request_id = ANY(${requestIds}) ORDER BY request_id, attempt`,
  )
  for (const row of rows) {
    const list = out.get(row.request_id) ?? []
    list.push({
      txHash: row.tx_hash,
      attempt: Number(row.attempt),
      raw: row.raw_tx,
      maxFeePerGas: BigInt(row.max_fee_per_gas),
      maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas),
      gasLimit: BigInt(row.gas_limit),
      signedAt: Number(row.signed_at),
    })
    out.set(row.request_id, list)
  }
  return out
}

async function withTxs(q: Queryable, rows: SendRow[]): Promise<EthSend[]> {
  const txs = await txsOf(
    q,
    rows.map((r) => r.request_id),
  )
  return rows.map((row) => ({
    requestId: row.request_id,
    address: row.address,
    nonce: BigInt(row.nonce),
    to: row.to_address,
    amountMinor: BigInt(row.amount_minor),
    maxFeeWei: BigInt(row.max_fee_wei),
    stuck: row.stuck,
    createdAt: Number(row.created_at),
    txs: txs.get(row.request_id) ?? [],
  }))
}

/** A call to the database; its failure is retryable, whatever it was. */
async function stored<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (err) {
    if (err instanceof RailFailure) throw err
    throw new RailFailure('store_unavailable', `eth send record: ${(err as Error).message}`, true)
  }
}

export function getSend(q: Queryable, requestId: string): Promise<EthSend | undefined> {
  return stored(async () => {
    const { rows } = await q.query<SendRow>(
      sql`SELECT ${SEND_COLUMNS} FROM eth_sends WHERE request_id = ${requestId}`,
    )
    return (await withTxs(q, rows))[0]
  })
}

/**
 * Records a new send: in one transaction, the address's nonce locked and taken, the send and its
 * first signed transaction written. When the request already has a send (another worker got there
 * first) that one is returned and no nonce is taken.
 */
export function recordNewSend(
  db: Db,
  input: {
    requestId: string
    address: string
    to: string
    amountMinor: bigint
    maxFeeWei: bigint
    chainCount: bigint
    now: number
    sign: SignAt
  },
): Promise<{ send: EthSend; created: boolean }> {
  return stored(() =>
    db.tx(async (q) => {
      // The lock first: a concurrent call for the same request waits here, then finds the send.
      const nonce = await lockNonce(q, input.address, input.chainCount)
      const existing = await getSend(q, input.requestId)
      if (existing) return { send: existing, created: false }
      const tx = input.sign(nonce)
      await q.query(
        sql`INSERT INTO eth_sends (request_id, address, nonce, to_address, amount_minor, max_fee_wei, created_at)
            VALUES (${input.requestId}, ${input.address}, ${nonce.toString()}, ${input.to},
              ${input.amountMinor.toString()}, ${input.maxFeeWei.toString()}, ${input.now})`,
      )
      await insertTx(q, input.requestId, { ...tx, attempt: 0, signedAt: input.now })
      await takeNonce(q, input.address, nonce)
      return { send: (await getSend(q, input.requestId))!, created: true }
    }),
  )
}

async function insertTx(q: Queryable, requestId: string, tx: EthSentTx): Promise<number> {
  const { rowCount } = await q.query(
    sql`INSERT INTO eth_send_txs (tx_hash, request_id, attempt, raw_tx, max_fee_per_gas,
          max_priority_fee_per_gas, gas_limit, signed_at)
        VALUES (${tx.txHash}, ${requestId}, ${tx.attempt}, ${tx.raw}, ${tx.maxFeePerGas.toString()},
          ${tx.maxPriorityFeePerGas.toString()}, ${tx.gasLimit.toString()}, ${tx.signedAt})
        ON CONFLICT DO NOTHING`,
  )
  return rowCount
}

/**
 * Records a replacement (same nonce, higher fees) before it is broadcast. When another worker
 * recorded this attempt first, theirs is the one: the send as it now is comes back either way.
 */
export function recordReplacement(q: Queryable, requestId: string, tx: EthSentTx): Promise<EthSend> {
  return stored(async () => {
    await insertTx(q, requestId, tx)
    return (await getSend(q, requestId))!
  })
}

export function setStuck(q: Queryable, requestId: string, stuck: string | null): Promise<void> {
  return stored(async () => {
    await q.query(
      sql`UPDATE eth_sends SET stuck = ${stuck} WHERE request_id = ${requestId} AND stuck IS DISTINCT FROM ${stuck}`,
    )
  })
}

/** Our sends holding nonces in [from, to) of an address, lowest first (a gap's candidates). */
export function sendsAtNonces(q: Queryable, address: string, from: bigint, to: bigint): Promise<EthSend[]> {
  return stored(async () => {
    const { rows } = await q.query<SendRow>(
      sql`SELECT ${SEND_COLUMNS} FROM eth_sends
          WHERE address = ${address} AND nonce >= ${from.toString()} AND nonce < ${to.toString()}
          ORDER BY nonce LIMIT 100`,
    )
    return withTxs(q, rows)
  })
}

/** Sends of an address recorded since `sinceMs`, oldest first, at most `limit`. */
export function sendsSince(
  q: Queryable,
  address: string,
  sinceMs: number,
  limit: number,
): Promise<EthSend[]> {
  return stored(async () => {
    const { rows } = await q.query<SendRow>(
      sql`SELECT ${SEND_COLUMNS} FROM eth_sends WHERE address = ${address} AND created_at >= ${sinceMs}
          ORDER BY created_at, nonce LIMIT ${limit}`,
    )
    return withTxs(q, rows)
  })
}
