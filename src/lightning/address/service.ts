import { lockAccount } from '../../accounts/reads.js'
import type { AccountsService } from '../../accounts/service.js'
import type { Db, Queryable } from '../../db/db.js'
import { sql } from '../../db/sql.js'
import { ApiError, fieldError } from '../../shared/errors.js'
import { usernameIssue } from './names.js'
import { asAccountId } from '../../shared/ids.js'

/** An account's Lightning Address: `username@host`, credited in `creditCcy`. */
export interface LightningAddress {
  username: string
  accountId: string
  creditCcy: string
  createdAtMs: number
  updatedAtMs: number
}

export interface AddressDeps {
  db: Db
  accounts: AccountsService
  now?: () => number
}

interface Row {
  username: string
  account_id: string
  credit_ccy: string
  created_at: bigint | number
  updated_at: bigint | number
}

const fromRow = (r: Row): LightningAddress => ({
  username: r.username,
  accountId: r.account_id,
  creditCcy: r.credit_ccy,
  createdAtMs: Number(r.created_at),
  updatedAtMs: Number(r.updated_at),
})

/**
 * Claim `username` for the account, or change its credit currency. An account has at most one
 * address: claiming another name gives up the old one. Idempotent: the same request again answers
 * the same address. A name held by another account is 409 `invalid_state`.
 */
export async function claimAddress(
  deps: AddressDeps,
  accountId: string,
  username: string,
  creditCcy: string,
): Promise<LightningAddress> {
  const issue = usernameIssue(username)
  if (issue) throw fieldError('invalid_request', 'username', issue)
  const wallets = await deps.accounts.wallets(asAccountId(accountId))
  if (!wallets.some((w) => w.ccy === creditCcy))
    throw fieldError('unsupported_currency_pair', 'creditCcy', 'is not a wallet currency of this account')
  const at = (deps.now ?? Date.now)()
  // One database transaction: a refusal is thrown inside it, so it rolls back whole and the
  // account keeps the address it had.
  const row = await deps.db.tx(async (q) => {
    // One claim per account at a time: the account's row is the lock.
    await lockAccount(q, accountId)
    await q.query(
      sql`DELETE FROM lightning_addresses WHERE account_id = ${accountId} AND username <> ${username}`,
    )
    const { rows } = await q.query<Row>(sql`
      INSERT INTO lightning_addresses (username, account_id, credit_ccy, created_at, updated_at)
      VALUES (${username}, ${accountId}, ${creditCcy}, ${at}, ${at})
      ON CONFLICT (username) DO UPDATE SET credit_ccy = EXCLUDED.credit_ccy,
        updated_at = CASE WHEN lightning_addresses.credit_ccy = EXCLUDED.credit_ccy
                          THEN lightning_addresses.updated_at ELSE EXCLUDED.updated_at END
        WHERE lightning_addresses.account_id = EXCLUDED.account_id
      RETURNING *`)
    if (!rows[0])
      throw new ApiError('invalid_state', 'That Lightning Address is taken', [
        { field: 'username', issue: 'is held by another account' },
      ])
    return rows[0]
  })
  return fromRow(row)
}

/** The account's address, if it has one. */
export async function addressOf(q: Queryable, accountId: string): Promise<LightningAddress | undefined> {
  const { rows } = await q.query<Row>(sql`SELECT * FROM lightning_addresses WHERE account_id = ${accountId}`)
  return rows[0] && fromRow(rows[0])
}

/** The address of a username, if one was claimed. */
export async function addressByUsername(
  q: Queryable,
  username: string,
): Promise<LightningAddress | undefined> {
  const { rows } = await q.query<Row>(sql`SELECT * FROM lightning_addresses WHERE username = ${username}`)
  return rows[0] && fromRow(rows[0])
}

/** Give up the account's address; false when it had none. The name is free to claim again. */
export async function releaseAddress(q: Queryable, accountId: string): Promise<boolean> {
  const { rowCount } = await q.query(sql`DELETE FROM lightning_addresses WHERE account_id = ${accountId}`)
  return rowCount > 0
}
