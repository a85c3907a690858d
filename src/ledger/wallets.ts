import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import { walletIdPair } from './ledger.js'
import type { AccountId, WalletId } from '../shared/ids.js'

/**
 * Finding a wallet: the one way every flow takes from (account, currency) to a wallet's id. A
 * wallet's id, account and currency never change and wallets are never deleted, so the ids found
 * are remembered in the process (`WalletIds`, made once by the container and shared by the swap,
 * the accounts service and through it every other flow): a swap confirm, the benchmarked hot path,
 * settles without a read once its account's wallets are known. A currency without a wallet is not
 * remembered, since the wallet may be opened later.
 */

/** Wallet ids by `${accountId}\0${ccy}`. */
export type WalletIds = Map<string, WalletId>

// Bounded so that many accounts cannot grow it forever; past the bound it starts again empty.
const WALLET_IDS_MAX = 50_000

export function createWalletIds(): WalletIds {
  return new Map()
}

const keyOf = (accountId: AccountId, ccy: string) => `${accountId}\u0000${ccy}`

/** Both wallets' ids when both are remembered, without a read; else undefined. */
export function knownWalletIdPair(
  ids: WalletIds,
  accountId: AccountId,
  ccys: readonly [string, string],
): [WalletId, WalletId] | undefined {
  const from = ids.get(keyOf(accountId, ccys[0]))
  const to = ids.get(keyOf(accountId, ccys[1]))
  return from && to ? [from, to] : undefined
}

/**
 * Both wallets' ids read in one statement, undefined for a currency with none; remembered only when
 * both are found, so a refused pair leaves nothing behind.
 */
export async function readWalletIdPair(
  ids: WalletIds,
  q: Queryable,
  accountId: AccountId,
  ccys: readonly [string, string],
): Promise<[WalletId | undefined, WalletId | undefined]> {
  const pair = await walletIdPair(q, accountId, ccys)
  if (!pair[0] || !pair[1]) return pair
  if (ids.size >= WALLET_IDS_MAX - 1) ids.clear()
  ids.set(keyOf(accountId, ccys[0]), pair[0])
  ids.set(keyOf(accountId, ccys[1]), pair[1])
  return pair
}

/** The id of the account's wallet in `ccy`: remembered, else read (and remembered); undefined for none. */
export async function walletIdIn(
  ids: WalletIds,
  q: Queryable,
  accountId: AccountId,
  ccy: string,
): Promise<WalletId | undefined> {
  const known = ids.get(keyOf(accountId, ccy))
  if (known) return known
  const [id] = await readWalletIdPair(ids, q, accountId, [ccy, ccy])
  return id
}

/** A wallet with its running balances. */
export interface Wallet {
  id: WalletId
  accountId: AccountId
  ccy: string
  postedMinor: bigint
  pendingMinor: bigint
  createdAt: number
  updatedAt: number
}

export function toWallet(r: any): Wallet {
  return {
    id: r.id,
    accountId: r.account_id,
    ccy: r.ccy,
    postedMinor: BigInt(r.posted),
    pendingMinor: BigInt(r.pending),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  }
}

/** Every wallet of an account with its balances, in the order they were opened. */
export async function walletsOf(q: Queryable, accountId: AccountId): Promise<Wallet[]> {
  const { rows } = await q.query(
    sql`SELECT * FROM ledger_accounts WHERE account_id = ${accountId} AND kind = 'wallet' ORDER BY created_at, ccy`,
  )
  return rows.map(toWallet)
}

/** One wallet with its balances, by id; undefined for an unknown id or a system account. */
export async function walletById(
  q: Queryable,
  walletId: WalletId,
  opts: { lock?: boolean } = {},
): Promise<Wallet | undefined> {
  const lock = opts.lock ? sql` FOR UPDATE` : sql.empty
  const { rows } = await q.query(
    sql`SELECT * FROM ledger_accounts WHERE id = ${walletId} AND kind = 'wallet'${lock}`,
  )
  return rows[0] ? toWallet(rows[0]) : undefined
}
