import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { placeHold, postEntry, systemAccountId } from './ledger.js'
import { asTxnId, asWalletId } from '../shared/ids.js'

// postEntry writes an entry, settles holds and updates every wallet in one statement, locking the
// wallets in id order; these hold it to the same books as one statement per step would give.
describe('ledger: one statement per journal entry', () => {
  let h: Harness
  let a: TestAccount
  const walletOf = async (accountId: string, ccy: string) => {
    const { rows } = await h.c.db.query<{ id: string; posted: bigint; pending: bigint }>(
      `SELECT id, posted, pending FROM ledger_accounts WHERE account_id = $1 AND ccy = $2`,
      [accountId, ccy],
    )
    return rows[0]!
  }

  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Ledger' })
    await h.fund(a.accountId, 'BTC', '0.5')
    await h.fund(a.accountId, 'USD', '50000')
  })
  afterAll(async () => h?.close())

  it('settles a hold and moves both wallets exactly, and refuses a posting to a wallet that does not exist', async () => {
    const btc = await walletOf(a.accountId, 'BTC')
    const usd = await walletOf(a.accountId, 'USD')
    await h.c.db.tx(async (q) => {
      expect(
        await placeHold(q, {
          txnId: asTxnId('txn_ledgertest'),
          walletId: asWalletId(btc.id),
          amount: 1_000n,
          now: 1,
        }),
      ).toBe(true)
      await postEntry(q, {
        txnId: 'txn_ledgertest',
        kind: 'test',
        now: 2,
        settleHolds: true,
        postings: [
          { accountId: btc.id, ccy: 'BTC', amount: -1_000n },
          { accountId: systemAccountId('fx', 'BTC'), ccy: 'BTC', amount: 1_000n },
          { accountId: systemAccountId('fx', 'USD'), ccy: 'USD', amount: -95n },
          { accountId: usd.id, ccy: 'USD', amount: 95n },
        ],
      })
    })
    expect(await walletOf(a.accountId, 'BTC')).toEqual({
      ...btc,
      posted: btc.posted - 1_000n,
      pending: btc.pending,
    })
    expect(await walletOf(a.accountId, 'USD')).toEqual({ ...usd, posted: usd.posted + 95n })

    await expect(
      h.c.db.tx((q) =>
        postEntry(q, {
          txnId: null,
          kind: 'test',
          now: 3,
          postings: [
            { accountId: systemAccountId('fx', 'BTC'), ccy: 'BTC', amount: -5n },
            { accountId: 'wal_doesnotexist0000000000000', ccy: 'BTC', amount: 5n },
          ],
        }),
      ),
    ).rejects.toThrow()
    expect(await walletOf(a.accountId, 'BTC')).toEqual({
      ...btc,
      posted: btc.posted - 1_000n,
      pending: btc.pending,
    })
    await h.expectBooksBalanced()
  })

  it('refuses postings to an unknown system account or in another currency than the account, writing nothing', async () => {
    const btc = await walletOf(a.accountId, 'BTC')
    const entries = async () =>
      (await h.c.db.query<{ n: bigint }>('SELECT count(*)::int8 AS n FROM journal_entries')).rows[0]!.n
    const before = await entries()
    const post = (postings: Array<{ accountId: string; ccy: string; amount: bigint }>) =>
      h.c.db.tx((q) => postEntry(q, { txnId: null, kind: 'test', now: 4, postings }))
    await expect(
      post([
        { accountId: btc.id, ccy: 'BTC', amount: -7n },
        { accountId: 'sys:nowhere:BTC', ccy: 'BTC', amount: 7n },
      ]),
    ).rejects.toThrow(/ledger invariant/)
    // A BTC wallet credited in USD: both currencies balance, but the wallet is not a USD account.
    await expect(
      post([
        { accountId: systemAccountId('fx', 'USD'), ccy: 'USD', amount: -7n },
        { accountId: btc.id, ccy: 'USD', amount: 7n },
      ]),
    ).rejects.toThrow(/ledger invariant/)
    expect(await entries()).toBe(before)
    expect(await walletOf(a.accountId, 'BTC')).toEqual(btc)
    await h.expectBooksBalanced()
  })

  it('never deletes ledger rows', async () => {
    for (const table of ['ledger_accounts', 'journal_entries', 'postings']) {
      await expect(h.c.db.query(`DELETE FROM ${table} WHERE false`), table).rejects.toThrow(/never deleted/)
    }
  })

  it('lets swaps in both directions on one account run at once without deadlocks or lost updates', async () => {
    const deadlocks = async () =>
      ENGINE === 'postgres'
        ? Number(
            (await h.c.db.query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`))
              .rows[0].deadlocks,
          )
        : 0
    const before = await deadlocks()
    const swap = (i: number) =>
      i % 2
        ? {
            sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
            destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
          }
        : {
            sourceReq: { ccy: 'USD', method: 'svcpay', amtRequested: '10', reqDetails: {} },
            destReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
          }
    const results = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const q = await h.api('POST', '/api/v2/transaction', a.token, swap(i))
        return h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      }),
    )
    expect(results.map((r) => [r.status, r.body.txnState])).toEqual(results.map(() => [200, 'completed']))
    expect(await deadlocks()).toBe(before)
    await h.expectBooksBalanced()
  })
})
