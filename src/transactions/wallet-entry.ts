import type { Queryable } from '../db/db.js'
import type { AccountsService } from '../accounts/service.js'
import { postEntry, type EntryInput, type Posting } from '../ledger/ledger.js'
import { assert } from '../shared/assert.js'
import type { TxnRow } from './repository.js'

/**
 * Post the journal entry of `txn` against the wallet its money moves in: its account's wallet in its
 * source currency (which a wallet-funded transaction is always paid from). `postings` are built for
 * that wallet. Sends settle (`settleHolds`) or reverse with it, receives are credited with it.
 */
export async function postWalletEntry(
  accounts: Pick<AccountsService, 'walletFor'>,
  q: Queryable,
  txn: Pick<TxnRow, 'id' | 'account_id' | 'src_ccy'>,
  entry: Omit<EntryInput, 'txnId' | 'postings'>,
  postings: (walletId: string) => Posting[],
): Promise<void> {
  const wallet = await accounts.walletFor(q, txn.account_id, txn.src_ccy)
  assert(wallet, `the account has a ${txn.src_ccy} wallet`)
  await postEntry(q, { txnId: txn.id, ...entry, postings: postings(wallet.id) })
}
