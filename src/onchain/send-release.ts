import type { Queryable } from '../db/db.js'
import type { TxnId } from '../shared/ids.js'
import { nowBy } from '../shared/clock.js'
import { voidHolds, type Posting } from '../ledger/ledger.js'
import { hasEntry } from '../ledger/reads.js'
import { walletOutPostings } from '../transactions/money.js'
import type { Txn } from '../transactions/txn.js'
import { postWalletEntry } from '../transactions/wallet-entry.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'

/** The entry of a confirmed send: the wallet pays its debit, the fee to revenue, the rest out on chain. */
export const sendPostings = (txn: Txn, walletId: string): Posting[] =>
  walletOutPostings(txn, walletId, { system: 'onchain' })

/** Release the hold and end the send failed, from the state the caller saw (once: under the row lock). */
export async function failSend(
  deps: BitcoinDeps,
  txnId: TxnId,
  from: 'srccreated' | 'destsent',
  reason: string,
) {
  await deps.transactions().apply(txnId, async (q, t, move) => {
    if (t.state !== from) return
    await releaseSend(deps, q, t, nowBy(deps))
    await move('failed', { msg: reason })
  })
}

/**
 * Give back what a send that never left holds: its open hold, or, for a send posted at destsent
 * before holds were kept until confirmation, the entry reversed by an opposite one.
 */
async function releaseSend(deps: BitcoinDeps, q: Queryable, txn: Txn, at: number): Promise<void> {
  await voidHolds(q, txn.id, at)
  if (txn.state !== 'destsent' || !(await hasEntry(q, txn.id))) return
  await postWalletEntry(deps.accounts, q, txn, { kind: 'onchain_send_reversal', now: at }, (walletId) =>
    sendPostings(txn, walletId).map((p) => ({ ...p, amount: -p.amount })),
  )
}
