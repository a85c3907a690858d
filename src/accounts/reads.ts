import type { Queryable } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'

/**
 * Reads of the accounts table for other modules (the console, the admin API, the exports, the
 * Lightning address claim), named by what they answer; the service beside this file keeps the rest.
 */

export interface AccountRow {
  id: string
  display_name: string
  parent_id: string | null
  tier: string
  created_at: string
}

/** Whether the account exists. */
export async function accountExists(q: Queryable, accountId: string): Promise<boolean> {
  const { rows } = await q.query(sql`SELECT 1 FROM accounts WHERE id = ${accountId}`)
  return rows.length > 0
}

/**
 * Lock the account's row for the caller's transaction (one change of its tier or its Lightning
 * address at a time) and read its tier; undefined when there is no such account.
 */
export async function lockAccount(q: Queryable, accountId: string): Promise<{ tier: string } | undefined> {
  const { rows } = await q.query<{ tier: string }>(
    sql`SELECT tier FROM accounts WHERE id = ${accountId} FOR UPDATE`,
  )
  return rows[0]
}

/** The account's sub-accounts, oldest first; at most `limit`. */
export async function subAccountsOf(q: Queryable, accountId: string, limit: number): Promise<AccountRow[]> {
  const { rows } = await q.query<AccountRow>(
    sql`SELECT id, display_name, parent_id, tier, created_at FROM accounts WHERE parent_id = ${accountId} ORDER BY created_at, id LIMIT ${sql.int(limit)}`,
  )
  return rows
}

/**
 * The operator's account search, newest first, at most `limit`: an account by its id, by a display
 * name matching `namePattern` (ILIKE, escaped with a backslash), by an API key starting with
 * `keyPrefix` (LIKE, escaped likewise), or among the ids `alsoIds` selects for the text (the
 * caller's subquery of another owner: the accounts of a transaction's extRefId), in one statement.
 * The subquery is handed in so that this folder does not import the transactions'.
 */
export async function searchAccounts(
  q: Queryable,
  input: {
    text: string
    namePattern: string
    keyPrefix: string
    alsoIds: (text: ReturnType<typeof sql.param>) => Sql
  },
  limit: number,
): Promise<AccountRow[]> {
  const text = sql.param(input.text)
  const { rows } = await q.query<AccountRow>(
    sql`SELECT a.id, a.display_name, a.parent_id, a.tier, a.created_at FROM accounts a
          WHERE a.id = ${text}
             OR a.display_name ILIKE ${input.namePattern} ESCAPE '\\'
             OR a.id IN (${input.alsoIds(text)})
             OR a.id IN (SELECT account_id FROM api_keys WHERE id LIKE ${input.keyPrefix} ESCAPE '\\')
          ORDER BY a.created_at DESC, a.id LIMIT ${sql.int(limit)}`,
  )
  return rows
}

/** An account's tier (the limits' default tier, src/limits); undefined when there is no such account. */
export async function accountTier(q: Queryable, accountId: string): Promise<string | undefined> {
  const { rows } = await q.query<{ tier: string }>(sql`SELECT tier FROM accounts WHERE id = ${accountId}`)
  return rows[0]?.tier
}
