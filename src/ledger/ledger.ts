import type { Db, Queryable } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'
import { assert } from '../shared/assert.js'
import type { AccountId, TxnId, WalletId } from '../shared/ids.js'

/**
 * The double-entry ledger. Every movement is a journal entry of postings that sum to zero per
 * currency. Wallets keep running `posted` and `pending` balances, updated in the same database
 * transaction as their postings and guarded by CHECK constraints and conditional updates; system
 * accounts (fees, FX liquidity, external networks) have no running balance: theirs is the sum of
 * their postings, which keeps them from becoming hot rows every transaction would queue on.
 */

export type SystemPurpose =
  | 'fees'
  | 'fx'
  | 'lightning'
  | 'onchain'
  | 'tron'
  | 'bank'
  /** The Ethereum hot wallet's USDT (issue 33). */
  | 'ethereum'
  | 'sandbox-funding'
  /** Equity: what the operator put on the rails of its own money, less what it took off (issue 18). */
  | 'capital'
  /** Bank transfers in that matched no receive, until an operator assigns them (src/payins/credits.ts). */
  | 'suspense'

export const systemAccountId = (purpose: SystemPurpose, ccy: string) => `sys:${purpose}:${ccy}`

export interface Posting {
  accountId: string
  ccy: string
  /** Positive increases the account's balance, negative decreases it. */
  amount: bigint
}

export async function ensureSystemAccounts(db: Db, currencies: string[]): Promise<void> {
  const purposes: SystemPurpose[] = [
    'fees',
    'fx',
    'lightning',
    'onchain',
    'tron',
    'bank',
    'ethereum',
    'sandbox-funding',
    'capital',
    'suspense',
  ]
  const now = Date.now()
  for (const ccy of currencies) {
    for (const purpose of purposes) {
      const stamp = sql.param(now)
      await db.query(
        sql`INSERT INTO ledger_accounts (id, account_id, kind, ccy, created_at, updated_at)
         VALUES (${systemAccountId(purpose, ccy)}, NULL, 'system', ${ccy}, ${stamp}, ${stamp}) ON CONFLICT (id) DO NOTHING`,
      )
    }
  }
}

/** Open an account's wallet in `ccy`, empty. */
export async function openWallet(
  q: Queryable,
  wallet: { id: WalletId; accountId: AccountId; ccy: string; now: number },
): Promise<void> {
  const now = sql.param(wallet.now)
  await q.query(
    sql`INSERT INTO ledger_accounts (id, account_id, kind, ccy, created_at, updated_at)
     VALUES (${wallet.id}, ${wallet.accountId}, 'wallet', ${wallet.ccy}, ${now}, ${now})`,
  )
}

/**
 * Hold `amount` of a wallet for a transaction: availableBalance falls, the balance does not.
 * Returns false, changing nothing, when the wallet's available balance does not cover it. The wallet
 * is given by id, or by its account and currency. One statement: the conditional balance update and
 * the hold row it guards are written together (one round trip to the database).
 */
export async function placeHold(
  q: Queryable,
  input: { txnId: TxnId; amount: bigint; now: number } & (
    { walletId: WalletId } | { accountId: AccountId; ccy: string }
  ),
): Promise<boolean> {
  assert(input.amount > 0n, 'a hold must be positive')
  const amount = sql.param(input.amount)
  const now = sql.param(input.now)
  const wallet =
    'walletId' in input
      ? sql`id = ${input.walletId}`
      : sql`account_id = ${input.accountId} AND ccy = ${input.ccy}`
  const r = await q.query(
    sql`WITH w AS (
       UPDATE ledger_accounts SET pending = pending + ${amount}, updated_at = ${now}
        WHERE ${wallet} AND kind = 'wallet' AND posted - pending >= ${amount}
        RETURNING id)
     INSERT INTO holds (txn_id, ledger_account_id, amount, status, created_at, updated_at)
     SELECT ${input.txnId}, w.id, ${amount}, 'pending', ${now}, ${now} FROM w`,
  )
  return r.rowCount > 0
}

/**
 * placeHold as WITH items, for a statement that writes other things too (one round trip): the
 * account's wallet in `ccy` is held for `amount` when its available balance covers it, and not at
 * all otherwise. With `onlyIf`, a condition on earlier WITH items, only when that condition holds.
 */
export function holdCtes(
  input: { txnId: TxnId; accountId: AccountId; ccy: string; amount: bigint; now: number },
  onlyIf?: Sql,
): Sql {
  assert(input.amount > 0n, 'a hold must be positive')
  const amount = sql.param(input.amount)
  const now = sql.param(input.now)
  return sql`hold_wallet AS (
       UPDATE ledger_accounts SET pending = pending + ${amount}, updated_at = ${now}
        WHERE account_id = ${input.accountId} AND ccy = ${input.ccy} AND kind = 'wallet'
          AND posted - pending >= ${amount}${gateOf(onlyIf)}
        RETURNING id),
     hold_row AS (
       INSERT INTO holds (txn_id, ledger_account_id, amount, status, created_at, updated_at)
       SELECT ${input.txnId}, hold_wallet.id, ${amount}, 'pending', ${now}, ${now} FROM hold_wallet)`
}

const COMMA = sql`, `
const CTE_SEPARATOR = sql`,\n`

/** The gate a WITH item's write is put behind: ` AND <onlyIf>`, or nothing. */
function gateOf(onlyIf: Sql | undefined): Sql {
  return onlyIf ? sql` AND ${onlyIf}` : sql.empty
}

/** Release every open hold of a transaction: the funds become available again. */
export async function voidHolds(q: Queryable, txnId: TxnId, now: number): Promise<void> {
  await closeHolds(q, txnId, 'voided', now)
}

async function closeHolds(
  q: Queryable,
  txnId: TxnId,
  status: 'posted' | 'voided',
  now: number,
): Promise<void> {
  // One statement: the holds close and their wallets' pending balances fall together.
  await q.query(
    sql`WITH h AS (
       UPDATE holds SET status = ${status}, updated_at = ${now} WHERE txn_id = ${txnId} AND status = 'pending'
       RETURNING ledger_account_id, amount)
     UPDATE ledger_accounts la SET pending = la.pending - s.amount, updated_at = ${now}
       FROM (SELECT ledger_account_id, SUM(amount) AS amount FROM h GROUP BY ledger_account_id) s
      WHERE la.id = s.ledger_account_id`,
  )
}

export interface EntryInput {
  txnId: string | null
  kind: string
  postings: Posting[]
  now: number
  /** Mark the transaction's open holds posted in the same step (their amounts are in the postings). */
  settleHolds?: boolean
}

/**
 * Record a balanced journal entry. One statement (one round trip): see entryCtes.
 */
export async function postEntry(q: Queryable, input: EntryInput): Promise<void> {
  const entry = entryCtes(input)
  if (entry) await q.query(sql`WITH ${entry.ctes} SELECT ${entry.check} AS ok`)
}

/**
 * A journal entry as WITH items, for a statement that may write other things too: they settle the
 * transaction's open holds (with `settleHolds`), write the entry and its postings, lock the wallets
 * the entry changes in id order (so that two entries touching the same wallets never deadlock) and
 * update each wallet row once, its posted change and its released holds together. `check` is an
 * expression for the statement's select list that raises, undoing the whole statement, when a
 * posting names no wallet. With `onlyIf`, a condition on earlier WITH items, nothing is written
 * unless it holds. Undefined when there is nothing to write.
 */
export function entryCtes(input: EntryInput, onlyIf?: Sql): { ctes: Sql; check: Sql } | undefined {
  const postings = input.postings.filter((posting) => posting.amount !== 0n)
  const sums = new Map<string, bigint>()
  for (const posting of postings) sums.set(posting.ccy, (sums.get(posting.ccy) ?? 0n) + posting.amount)
  for (const [ccy, sum] of sums) {
    assert(sum === 0n, `journal entry ${input.kind} does not balance in ${ccy}: ${sum}`)
  }
  const posted = new Map<string, bigint>()
  for (const posting of postings) {
    if (!posting.accountId.startsWith('sys:'))
      posted.set(posting.accountId, (posted.get(posting.accountId) ?? 0n) + posting.amount)
  }
  const settle = Boolean(input.settleHolds && input.txnId)
  if (postings.length === 0 && !settle) return undefined

  const gate = gateOf(onlyIf)
  const txnId = sql.param(input.txnId)
  const now = sql.param(input.now)
  const ctes = [
    settle
      ? sql`released AS (
         UPDATE holds SET status = 'posted', updated_at = ${now} WHERE txn_id = ${txnId} AND status = 'pending'${gate}
         RETURNING ledger_account_id, amount)`
      : sql`released AS (SELECT NULL::text AS ledger_account_id, NULL::int8 AS amount WHERE false)`,
  ]
  if (postings.length > 0) {
    const lines = postings.map((x) => sql`(${x.accountId}::text, ${x.ccy}::text, ${x.amount}::int8)`)
    ctes.push(
      sql`entry AS (INSERT INTO journal_entries (txn_id, kind, created_at)
         SELECT ${txnId}::text, ${input.kind}::text, ${now}::int8 WHERE true${gate} RETURNING id)`,
      sql`given AS (SELECT * FROM (VALUES ${sql.join(lines, COMMA)}) AS v(account, ccy, amount))`,
      sql`lines AS (INSERT INTO postings (entry_id, ledger_account_id, ccy, amount)
         SELECT entry.id, given.account, given.ccy, given.amount FROM entry, given)`,
    )
  }
  const deltas = [...posted].map(([id, amount]) => sql`(${id}::text, ${amount}::int8)`)
  ctes.push(
    sql`targets AS (
       SELECT id, SUM(posted)::int8 AS posted FROM (
         ${deltas.length ? sql`SELECT * FROM (VALUES ${sql.join(deltas, COMMA)}) AS d(id, posted) WHERE true${gate} UNION ALL ` : sql.empty}
         SELECT ledger_account_id AS id, 0::int8 AS posted FROM released) t
       GROUP BY id)`,
    sql`wallets_locked AS (
       SELECT la.id FROM ledger_accounts la JOIN targets t ON t.id = la.id
        WHERE la.kind = 'wallet' ORDER BY la.id FOR UPDATE OF la)`,
    sql`wallets_changed AS (
       UPDATE ledger_accounts la
          SET posted = la.posted + t.posted,
              pending = la.pending - COALESCE((SELECT SUM(r.amount) FROM released r WHERE r.ledger_account_id = la.id), 0),
              updated_at = ${now}
         FROM targets t JOIN wallets_locked l ON l.id = t.id
        WHERE la.id = t.id
        RETURNING la.id)`,
  )
  // Every posting names a ledger account of its own currency (read without a lock: the ledger's
  // rows are never deleted, migration 013), and every wallet among them was updated.
  const known =
    postings.length > 0
      ? sql` AND (SELECT count(*) FROM given JOIN ledger_accounts la ON la.id = given.account AND la.ccy = given.ccy) = ${sql.int(postings.length)}`
      : sql.empty
  const check = sql`ledger_require((SELECT count(*) FROM wallets_changed) = (SELECT count(*) FROM targets)${known},
       ${`journal entry ${input.kind} posts to an unknown account or in another currency`})`
  return { ctes: sql.join(ctes, CTE_SEPARATOR), check }
}

export interface BooksReport {
  ok: boolean
  unbalancedEntries: number
  walletMismatches: number
  holdMismatches: number
  /** Sum of every account's balance per currency: zero when the books balance. */
  totals: Record<string, string>
}

/** The books check: every entry balances, and every wallet's balances match its postings and holds. */
export async function checkBooks(q: Queryable): Promise<BooksReport> {
  const { rows } = await q.query<{
    unbalanced: bigint
    wallet_mismatch: bigint
    hold_mismatch: bigint
    totals: Record<string, string> | null
  }>(sql`
    SELECT
      (SELECT count(*) FROM (SELECT entry_id, ccy FROM postings GROUP BY entry_id, ccy HAVING SUM(amount) <> 0) u)::int8 AS unbalanced,
      (SELECT count(*) FROM ledger_accounts la
         WHERE la.kind = 'wallet'
           AND la.posted <> COALESCE((SELECT SUM(p.amount) FROM postings p WHERE p.ledger_account_id = la.id), 0))::int8 AS wallet_mismatch,
      (SELECT count(*) FROM ledger_accounts la
         WHERE la.kind = 'wallet'
           AND la.pending <> COALESCE((SELECT SUM(h.amount) FROM holds h WHERE h.ledger_account_id = la.id AND h.status = 'pending'), 0))::int8 AS hold_mismatch,
      (SELECT json_object_agg(ccy, total::text) FROM (SELECT ccy, SUM(amount) AS total FROM postings GROUP BY ccy) t) AS totals
  `)
  const r = rows[0]!
  const totals = r.totals ?? {}
  const totalsZero = Object.values(totals).every((t) => t === '0')
  return {
    ok: r.unbalanced === 0n && r.wallet_mismatch === 0n && r.hold_mismatch === 0n && totalsZero,
    unbalancedEntries: Number(r.unbalanced),
    walletMismatches: Number(r.wallet_mismatch),
    holdMismatches: Number(r.hold_mismatch),
    totals,
  }
}

/**
 * The ids of an account's wallets in two currencies (a swap's source and destination), read in one
 * statement; undefined for a currency the account has no wallet in.
 */
export async function walletIdPair(
  q: Queryable,
  accountId: AccountId,
  ccys: readonly [string, string],
): Promise<[WalletId | undefined, WalletId | undefined]> {
  const { rows } = await q.query<{ id: WalletId; ccy: string }>(
    sql`SELECT id, ccy FROM ledger_accounts WHERE account_id = ${accountId} AND ccy IN (${ccys[0]}, ${ccys[1]}) AND kind = 'wallet'`,
  )
  const idOf = (ccy: string) => rows.find((r) => r.ccy === ccy)?.id
  return [idOf(ccys[0]), idOf(ccys[1])]
}

// ---- Wallets: finding one by account and currency. ----

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
