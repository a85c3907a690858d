import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toQuery } from '../db/sql.js'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import type { Queryable } from '../db/db.js'
import { walletIdPair } from '../ledger/ledger.js'
import { swapWallets } from './swap.js'
import type { WalletIds } from '../ledger/ledger.js'
import { asAccountId } from '../shared/ids.js'

// A swap's two wallets: read together in one statement the first time, then remembered.
describe('swapWallets', () => {
  let h: Harness
  let a: TestAccount
  const reads: string[] = []
  // The database, with the statements it is sent written down.
  let q: Queryable

  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Swap wallets' })
    q = {
      query: (sql, params) => {
        reads.push(typeof sql === 'string' ? sql : toQuery(sql).text)
        return h.c.db.query(sql, params)
      },
      notify: (channel, payload) => h.c.db.notify(channel, payload),
    }
  })
  afterAll(async () => h?.close())

  const walletId = async (ccy: string) =>
    (
      await h.c.db.query<{ id: string }>(
        `SELECT id FROM ledger_accounts WHERE account_id = $1 AND ccy = $2 AND kind = 'wallet'`,
        [a.accountId, ccy],
      )
    ).rows[0]!.id

  it('walletIdPair reads both wallets of the account in the order asked, undefined where it has none', async () => {
    const [btc, usd] = [await walletId('BTC'), await walletId('USD')]
    expect(await walletIdPair(h.c.db, a.accountId, ['BTC', 'USD'])).toEqual([btc, usd])
    expect(await walletIdPair(h.c.db, a.accountId, ['USD', 'BTC'])).toEqual([usd, btc])
    expect(await walletIdPair(h.c.db, a.accountId, ['BTC', 'XXX'])).toEqual([btc, undefined])
    expect(await walletIdPair(h.c.db, asAccountId('acc_nobody'), ['BTC', 'USD'])).toEqual([
      undefined,
      undefined,
    ])
  })

  it('reads both wallets in one statement once, then answers without a read', async () => {
    const ids: WalletIds = new Map()
    const txn = { accountId: a.accountId, srcCcy: 'BTC', destCcy: 'USD' }
    reads.length = 0
    const first = await swapWallets(ids, q, txn)
    expect(first).toEqual([await walletId('BTC'), await walletId('USD')])
    expect(reads).toHaveLength(1)
    expect(await swapWallets(ids, q, txn)).toEqual(first)
    expect(await swapWallets(ids, q, { ...txn, srcCcy: 'USD', destCcy: 'BTC' })).toEqual([first[1], first[0]])
    expect(reads).toHaveLength(1)
  })

  it('refuses a swap whose account has no wallet in one of its currencies, remembering nothing', async () => {
    const ids: WalletIds = new Map()
    await expect(
      swapWallets(ids, q, { accountId: a.accountId, srcCcy: 'BTC', destCcy: 'XXX' }),
    ).rejects.toThrow(/swap wallets exist/)
    expect(ids.size).toBe(0)
  })
})
