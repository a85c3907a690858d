import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { placeHold, systemAccountId } from '../ledger/ledger.js'
import { postWalletEntry } from './wallet-entry.js'
import { asTxnId, asWalletId } from '../shared/ids.js'

/** The one way a flow posts an entry against the wallet a transaction's money moves in. */
describe('postWalletEntry', () => {
  let h: Harness
  let a: TestAccount
  const wallet = async (ccy: string) => {
    const { rows } = await h.c.db.query<{ id: string; posted: bigint; pending: bigint }>(
      `SELECT id, posted, pending FROM ledger_accounts WHERE account_id = $1 AND ccy = $2`,
      [a.accountId, ccy],
    )
    return rows[0]!
  }

  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Wallet entry' })
    await h.fund(a.accountId, 'USDT', '100')
  })
  afterAll(async () => h?.close())

  it('posts against the wallet in the source currency, settling the hold when asked', async () => {
    const usdt = await wallet('USDT')
    const txn = { id: asTxnId('txn_walletentry'), accountId: a.accountId, srcCcy: 'USDT' }
    await h.c.db.tx(async (q) => {
      await placeHold(q, { txnId: txn.id, walletId: asWalletId(usdt.id), amount: 5_000_000n, now: 1 })
      await postWalletEntry(h.c.accounts, q, txn, { kind: 'test', now: 2, settleHolds: true }, (walletId) => [
        { accountId: walletId, ccy: 'USDT', amount: -5_000_000n },
        { accountId: systemAccountId('tron', 'USDT'), ccy: 'USDT', amount: 5_000_000n },
      ])
    })
    const after = await wallet('USDT')
    expect(after.posted).toBe(usdt.posted - 5_000_000n)
    expect(after.pending).toBe(usdt.pending)
    const { rows } = await h.c.db.query<{ status: string }>(`SELECT status FROM holds WHERE txn_id = $1`, [
      txn.id,
    ])
    expect(rows.map((r) => r.status)).toEqual(['posted'])
  })

  it('refuses an account without a wallet in that currency, posting nothing', async () => {
    const txn = { id: asTxnId('txn_walletentry2'), accountId: a.accountId, srcCcy: 'EUR' }
    await expect(
      h.c.db.tx((q) => postWalletEntry(h.c.accounts, q, txn, { kind: 'test', now: 3 }, () => [])),
    ).rejects.toThrow(/EUR wallet/)
    const { rows } = await h.c.db.query(`SELECT 1 FROM journal_entries WHERE txn_id = $1`, [txn.id])
    expect(rows).toEqual([])
  })
})
