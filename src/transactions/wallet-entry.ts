import type { Queryable } from '../db/db.js'
import type { AccountsService } from '../accounts/service.js'
import { postEntry, type EntryInput, type Posting } from '../ledger/ledger.js'
import { assert } from '../shared/assert.js'
import type { Txn } from './txn.js'

/**
 * Post the journal entry of `txn` against the wallet its money moves in: its account's wallet in its
 * source currency (which a wallet-funded transaction is always paid from). `postings` are built for
 * that wallet. Sends settle (`settleHolds`) or reverse with it, receives are credited with it.
 */
export async function postWalletEntry(
  accounts: Pick<AccountsService, 'walletId'>,
  q: Queryable,
  txn: Pick<Txn, 'id' | 'accountId' | 'srcCcy'>,
  entry: Omit<EntryInput, 'txnId' | 'postings'>,
  postings: (walletId: string) => Posting[],
): Promise<void> {
  const walletId = await accounts.walletId(q, txn.accountId, txn.srcCcy)
  assert(walletId, `the account has a ${txn.srcCcy} wallet`)
  await postEntry(q, { txnId: txn.id, ...entry, postings: postings(walletId) })
}
