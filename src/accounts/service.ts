import type { Db, Queryable } from '../db/db.js'
import { ApiError } from '../shared/errors.js'
import { newAccountId, newWalletId, type AccountId, type WalletId } from '../shared/ids.js'
import { openWallet } from '../ledger/ledger.js'
import { sql } from '../db/sql.js'
import {
  createWalletIds,
  walletById,
  walletIdIn,
  walletsOf,
  type Wallet,
  type WalletIds,
} from '../ledger/ledger.js'

export { toWallet, type Wallet } from '../ledger/ledger.js'

export type Tier = 'standard' | 'premium'

export interface Account {
  id: AccountId
  displayName: string
  parentId: string | null
  tier: Tier
  createdAt: number
}

export interface AccountsService {
  create(input: { displayName: string; parentId?: string | null; tier?: Tier }): Promise<Account>
  get(accountId: string): Promise<Account | undefined>
  list(limit: number): Promise<Account[]>
  setTier(accountId: string, tier: Tier): Promise<boolean>
  /** Self or parent may act on an account's wallets and details. */
  canAccess(principalAccountId: string, accountId: string): Promise<boolean>
  wallets(accountId: AccountId): Promise<Wallet[]>
  wallet(walletId: WalletId): Promise<Wallet | undefined>
  /**
   * The id of the account's wallet in `ccy`, undefined when it has none: the one way to find a
   * wallet (remembered per process, src/ledger/ledger.ts).
   */
  walletId(q: Queryable, accountId: AccountId, ccy: string): Promise<WalletId | undefined>
}

export function createAccountsService(deps: {
  db: Db
  walletCurrencies: string[]
  /** The process's remembered wallet ids, shared with the swap (src/ledger/ledger.ts). */
  walletIds?: WalletIds
}): AccountsService {
  const { db } = deps
  const walletIds = deps.walletIds ?? createWalletIds()
  return {
    async create({ displayName, parentId = null, tier = 'standard' }) {
      const name = displayName.trim()
      if (!name || name.length > 140)
        throw new ApiError('invalid_request', 'The display name must be 1 to 140 characters')
      const now = Date.now()
      const id = newAccountId()
      await db.tx(async (q) => {
        if (parentId) {
          const parent = await q.query(sql`SELECT 1 FROM accounts WHERE id = ${parentId}`)
          if (parent.rows.length === 0) throw new ApiError('not_found', 'Parent account not found')
        }
        await q.query(
          sql`INSERT INTO accounts (id, display_name, parent_id, tier, created_at) VALUES (${id}, ${name}, ${parentId}, ${tier}, ${now})`,
        )
        for (const ccy of deps.walletCurrencies) {
          await openWallet(q, { id: newWalletId(), accountId: id, ccy, now })
        }
      })
      return { id, displayName: name, parentId, tier, createdAt: now }
    },

    async get(accountId) {
      const { rows } = await db.query(sql`SELECT * FROM accounts WHERE id = ${accountId}`)
      return rows[0] ? toAccount(rows[0]) : undefined
    },

    async list(limit) {
      const { rows } = await db.query(sql`SELECT * FROM accounts ORDER BY created_at DESC LIMIT ${limit}`)
      return rows.map(toAccount)
    },

    async setTier(accountId, tier) {
      const r = await db.query(sql`UPDATE accounts SET tier = ${tier} WHERE id = ${accountId}`)
      return r.rowCount > 0
    },

    async canAccess(principalAccountId, accountId) {
      if (principalAccountId === accountId) return true
      const { rows } = await db.query<{ parent_id: string | null }>(
        sql`SELECT parent_id FROM accounts WHERE id = ${accountId}`,
      )
      return rows[0]?.parent_id === principalAccountId
    },

    async wallets(accountId) {
      return sortByCurrency(await walletsOf(db, accountId), deps.walletCurrencies)
    },

    wallet: (walletId) => walletById(db, walletId),

    walletId: (q, accountId, ccy) => walletIdIn(walletIds, q, accountId, ccy),
  }
}

function sortByCurrency(wallets: Wallet[], order: string[]): Wallet[] {
  return wallets.sort((a, b) => order.indexOf(a.ccy) - order.indexOf(b.ccy))
}

function toAccount(r: any): Account {
  return {
    id: r.id,
    displayName: r.display_name,
    parentId: r.parent_id,
    tier: r.tier,
    createdAt: Number(r.created_at),
  }
}
