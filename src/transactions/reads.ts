import type { Queryable } from '../db/db.js'
import { txnFromRow, type Txn } from './txn.js'

/** Transactions read by one statement at most; a larger batch is split. */
const BATCH_READS_MAX = 200

interface Waiting {
  resolve(row: Txn | undefined): void
  reject(err: unknown): void
}

export interface TxnReader {
  /** The transaction `id` of `accountId`, read from the database; undefined when it has no such one. */
  get(id: string, accountId: string): Promise<Txn | undefined>
}

/**
 * Reads of single transactions, coalesced: the reads asked for in one turn of the event loop go to
 * the database as one statement. Under load each round trip to PostgreSQL costs the process more
 * than the rest of a read, and many requests arrive together; a lone read still leaves at once
 * (after the current turn, without a timer). Nothing is cached: every read sees what was committed
 * before it was asked for, and the account is matched by the database as in a single read.
 */
export function createTxnReader(db: Pick<Queryable, 'query'>): TxnReader {
  let queued = new Map<string, { id: string; accountId: string; waiting: Waiting[] }>()

  const flush = () => {
    const batch = [...queued.values()]
    queued = new Map()
    for (let i = 0; i < batch.length; i += BATCH_READS_MAX) void read(batch.slice(i, i + BATCH_READS_MAX))
  }

  async function read(batch: Array<{ id: string; accountId: string; waiting: Waiting[] }>): Promise<void> {
    try {
      const { rows } =
        batch.length === 1
          ? await db.query('SELECT * FROM transactions WHERE id = $1 AND account_id = $2', [
              batch[0]!.id,
              batch[0]!.accountId,
            ])
          : await db.query(
              `SELECT t.* FROM unnest($1::text[], $2::text[]) AS r(id, account_id)
                 JOIN transactions t ON t.id = r.id AND t.account_id = r.account_id`,
              [batch.map((b) => b.id), batch.map((b) => b.accountId)],
            )
      const found = new Map(rows.map(txnFromRow).map((row) => [keyOf(row.id, row.accountId), row]))
      for (const b of batch) {
        const row = found.get(keyOf(b.id, b.accountId))
        for (const w of b.waiting) w.resolve(row)
      }
    } catch (err) {
      for (const b of batch) for (const w of b.waiting) w.reject(err)
    }
  }

  return {
    get(id, accountId) {
      return new Promise((resolve, reject) => {
        if (queued.size === 0) setImmediate(flush)
        const key = keyOf(id, accountId)
        const same = queued.get(key)
        if (same) same.waiting.push({ resolve, reject })
        else queued.set(key, { id, accountId, waiting: [{ resolve, reject }] })
      })
    },
  }
}

const keyOf = (id: string, accountId: string) => `${id}\u0000${accountId}`
