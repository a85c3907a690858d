import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { systemAccountId } from '../ledger/ledger.js'
import { createTxnRepository, getTxn } from '../transactions/repository.js'
import { serviceKinds } from '../wiring/kinds.js'
import { asTxnId } from '../shared/ids.js'

const swap = (amt: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amt, reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
})

// A swap quoted by this process is confirmed by one statement (settleQuoted) instead of a database
// transaction of four; these check that it writes what the locked path writes, that it steps aside
// whenever its conditions do not hold, and that a failed check undoes all of it.
describe('swap confirm in one statement', () => {
  let h: Harness
  // A second service on the same database: it did not make the quotes, so it confirms them the
  // ordinary way, under a row lock in a database transaction.
  let other: Harness
  let a: TestAccount

  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60' })
    other = await createHarness({ QUOTE_TTL_S: '60' }, { shareDbWith: h })
    a = await h.createAccount({ name: 'One statement' })
    await h.fund(a.accountId, 'BTC', '0.01')
  })
  afterAll(async () => {
    await other?.close()
    await h?.close()
  })

  const quote = async (amt = '0.0001') => {
    const r = await h.api('POST', '/api/v2/transaction', a.token, swap(amt))
    expect(r.status).toBe(200)
    return r.body.txnId as string
  }
  const confirm = (via: Harness, txnId: string) =>
    via.api('PUT', `/api/v2/transaction/${txnId}/confirm`, a.token)

  /** What a confirm wrote: postings by account kind, holds, events and the settled row. */
  const written = async (txnId: string) => {
    const { rows: postings } = await h.c.db.query<{ account: string; ccy: string; amount: bigint }>(
      `SELECT CASE WHEN la.kind = 'wallet' THEN 'wallet:' || la.ccy ELSE la.id END AS account, p.ccy, p.amount
         FROM postings p JOIN journal_entries e ON e.id = p.entry_id JOIN ledger_accounts la ON la.id = p.ledger_account_id
        WHERE e.txn_id = $1 ORDER BY account, p.ccy`,
      [txnId],
    )
    const { rows: holds } = await h.c.db.query<{ status: string }>(
      'SELECT status FROM holds WHERE txn_id = $1',
      [txnId],
    )
    const { rows: events } = await h.c.db.query<{ txn_state: string }>(
      'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
      [txnId],
    )
    const txn = await getTxn(h.c.db, asTxnId(txnId))
    return {
      postings,
      holds: holds.map((x) => x.status),
      events: events.map((x) => x.txn_state),
      state: txn?.state,
      settled: [txn?.srcSettledMinor, txn?.destSettledMinor],
    }
  }

  /** Counts the service's statements and database transactions while `fn` runs. */
  const counted = async <T>(fn: () => Promise<T>) => {
    const db = h.c.db
    const query = db.query.bind(db)
    const tx = db.tx.bind(db)
    const seen = { statements: 0, transactions: 0 }
    db.query = (async (sql: string, params?: unknown[]) => {
      seen.statements++
      return query(sql, params)
    }) as typeof db.query
    db.tx = (async (fn: any) => {
      seen.transactions++
      return tx(fn)
    }) as typeof db.tx
    try {
      return { result: await fn(), ...seen }
    } finally {
      db.query = query
      db.tx = tx
    }
  }

  it('takes one statement and writes exactly what the locked path writes', async () => {
    // The first confirm of an account also looks up its wallets' ids, which are then remembered.
    expect((await confirm(h, await quote())).body.txnState).toBe('completed')
    const fast = await quote()
    const slow = await quote()
    const { result, statements, transactions } = await counted(() => confirm(h, fast))
    expect(result.status).toBe(200)
    expect(result.body.txnState).toBe('completed')
    expect({ statements, transactions }).toEqual({ statements: 1, transactions: 0 })

    const viaLock = await confirm(other, slow)
    expect(viaLock.body.txnState).toBe('completed')
    const one = await written(fast)
    expect(one.state).toBe('completed')
    expect(one.holds).toEqual(['posted'])
    expect(one.events).toEqual(['quoted', 'completed'])
    expect(one.postings.map((p) => p.account)).toContain(systemAccountId('fx', 'BTC'))
    expect(await written(slow)).toEqual(one)
    // The answer is the same document either way, but for its ids and times.
    const strip = (b: any) => ({ ...b, txnId: undefined, createdAt: undefined, updatedAt: undefined })
    expect(strip(result.body).destReq.amtSettled).toBe(strip(viaLock.body).destReq.amtSettled)
    await h.expectBooksBalanced()
  })

  it('steps aside for an expired quote: the locked path expires it and says so', async () => {
    const txnId = await quote()
    await h.c.db.query('UPDATE transactions SET expires_at = $2 WHERE id = $1', [txnId, Date.now() - 1])
    const r = await confirm(h, txnId)
    expect(r.status).toBe(409)
    expect(r.body.error).toBe('quote_expired')
    const w = await written(txnId)
    expect(w.state).toBe('expired')
    expect(w.holds).toEqual(['voided'])
    expect(w.postings).toEqual([])
    await h.expectBooksBalanced()
  })

  it('steps aside for a cancelled quote', async () => {
    const txnId = await quote()
    expect((await h.api('PUT', `/api/v2/transaction/${txnId}/cancel`, a.token)).status).toBe(200)
    const r = await confirm(h, txnId)
    expect(r.status).toBe(409)
    expect(r.body.error).toBe('invalid_state')
    expect((await written(txnId)).postings).toEqual([])
    await h.expectBooksBalanced()
  })

  it('steps aside for a quote made without a hold, which confirm holds once the funds are there', async () => {
    const poor = await h.createAccount({ name: 'Funded later' })
    const q = await h.api('POST', '/api/v2/transaction', poor.token, swap('0.001'))
    expect(q.status).toBe(200)
    await h.fund(poor.accountId, 'BTC', '0.002')
    const r = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, poor.token)
    expect(r.body.txnState).toBe('completed')
    expect((await written(q.body.txnId)).holds).toEqual(['posted'])
    await h.expectBooksBalanced()
  })

  it('confirms once when the same quote is confirmed many times at once', async () => {
    const txnId = await quote()
    const answers = await Promise.all(Array.from({ length: 6 }, () => confirm(h, txnId)))
    expect(answers.map((r) => r.body.txnState)).toEqual(Array(6).fill('completed'))
    const { rows } = await h.c.db.query<{ n: bigint }>(
      'SELECT count(*)::int8 AS n FROM journal_entries WHERE txn_id = $1',
      [txnId],
    )
    expect(rows[0]!.n).toBe(1n)
    await h.expectBooksBalanced()
  })

  it('undoes the whole statement when the entry names a wallet that does not exist', async () => {
    const txnId = await quote()
    const txn = (await getTxn(h.c.db, asTxnId(txnId)))!
    const before = await written(txnId)
    await expect(
      createTxnRepository({ kinds: serviceKinds(), webhookVariant: 'a', now: Date.now }).settleQuoted(
        h.c.db,
        txn,
        {
          entry: {
            txnId,
            kind: 'swap',
            now: Date.now(),
            postings: [
              { accountId: 'wal_missing', ccy: 'BTC', amount: -txn.srcAmountMinor - txn.srcFeeMinor },
              {
                accountId: systemAccountId('fx', 'BTC'),
                ccy: 'BTC',
                amount: txn.srcAmountMinor + txn.srcFeeMinor,
              },
            ],
          },
          to: 'completed',
          patch: { srcSettledMinor: txn.srcAmountMinor },
        },
        { now: Date.now() },
      ),
    ).rejects.toThrow(/ledger invariant/)
    expect(await written(txnId)).toEqual(before)
    expect(before.state).toBe('quoted')
    expect(before.holds).toEqual(['pending'])
    await h.expectBooksBalanced()
  })
})
