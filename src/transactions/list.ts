import type { Static } from 'typebox'
import type { Db } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { isRealIsoTime } from '../shared/calendar.js'
import { txnFromRow } from './txn.js'
import { TXN_STATES } from './state-machine.js'
import type { ListQuerySchema } from './schemas.js'

export const PAGE_SIZE_DEFAULT = 20
export const PAGE_SIZE_MAX = 100
export const PAGE_MAX = 100_000
export const LIST_VALUES_MAX = 20

const DAY_MS = 86_400_000
const WINDOWS: Record<string, number> = {
  '1d': DAY_MS,
  '7d': 7 * DAY_MS,
  '30d': 30 * DAY_MS,
  '3m': 91 * DAY_MS,
  '6m': 182 * DAY_MS,
  '1y': 365 * DAY_MS,
}
/** The values of `time` (docs: the OpenAPI document's enum, src/openapi/parameters.ts). */
export const LIST_TIMES = [...Object.keys(WINDOWS), 'other']
/** The methods the list's method filters take. */
export const LIST_METHODS = ['svcpay', 'lightning', 'on-chain', 'tron', 'eth', 'vnd-instant']

/** The list's filters as the query string's schema admits them. */
export type ListQuery = Static<typeof ListQuerySchema>

/** The list's page info: `hasMore` says whether more matches lie beyond this page, in its direction. */
export interface ListPagination {
  page: number
  limit: number
  total: number
  hasMore: boolean
}

const TXN_ID_RE = /^txn_[0-9a-z]{1,40}$/

function listOf(q: ListQuery, name: keyof ListQuery, allowed: readonly string[]): string[] | undefined {
  const text = q[name]
  if (text === undefined || text === '') return undefined
  const values = text
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean)
  if (values.length > LIST_VALUES_MAX)
    throw fieldError('invalid_request', `query.${name}`, `at most ${LIST_VALUES_MAX} values`)
  for (const v of values) {
    if (!allowed.includes(v))
      throw fieldError(
        'invalid_request',
        `query.${name}`,
        `unknown value ${v}; expected ${allowed.join(', ')}`,
      )
  }
  return values
}

function wholeNumber(q: ListQuery, name: 'limit' | 'page', fallback: number, max: number): number {
  const text = q[name]
  if (text === undefined || text === '') return fallback
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw fieldError('invalid_request', `query.${name}`, `must be a whole number from 1 to ${max}`)
  }
  return Number(text)
}

function isoTime(q: ListQuery, name: 'startTime' | 'endTime'): number | undefined {
  const text = q[name]
  if (text === undefined || text === '') return undefined
  const t = Date.parse(text)
  if (!isRealIsoTime(text) || Number.isNaN(t))
    throw fieldError('invalid_request', `query.${name}`, 'must be an ISO 8601 time')
  return t
}

/**
 * Where a cursor puts the page: after (older than) or before (newer than) one transaction of the
 * account, by its (created_at, id), the list's own order. A seek, unlike an offset, does not move when
 * transactions are created meanwhile, so paging with it neither repeats nor skips a row.
 */
async function cursorOf(
  db: Db,
  accountId: string | null,
  query: ListQuery,
): Promise<{ dir: 'after' | 'before'; createdAt: bigint; id: string } | undefined> {
  const after = query.startingAfter || undefined
  const before = query.endingBefore || undefined
  if (after === undefined && before === undefined) return undefined
  if (after !== undefined && before !== undefined) {
    throw new ApiError('invalid_request', 'Use startingAfter or endingBefore, not both', [
      { field: 'query.endingBefore', issue: 'must be left out when startingAfter is set' },
    ])
  }
  if (query.page !== undefined && query.page !== '' && query.page !== '1') {
    throw fieldError('invalid_request', 'query.page', 'cannot be combined with startingAfter or endingBefore')
  }
  const field = after !== undefined ? 'query.startingAfter' : 'query.endingBefore'
  const txnId = (after ?? before)!
  if (!TXN_ID_RE.test(txnId)) throw fieldError('invalid_request', field, 'must be a txnId from this list')
  const ofAccount = accountId === null ? sql.empty : sql` AND account_id = ${accountId}`
  const { rows } = await db.query<{ created_at: bigint; id: string }>(
    sql`SELECT created_at, id FROM transactions WHERE id = ${txnId}${ofAccount}`,
  )
  // Another account's transaction is as unknown as one that does not exist.
  if (!rows[0]) throw fieldError('invalid_request', field, 'no transaction of this account has this txnId')
  return {
    dir: after !== undefined ? 'after' : 'before',
    createdAt: BigInt(rows[0].created_at),
    id: rows[0].id,
  }
}

const AND = sql` AND `

/**
 * The transaction list: newest first, filtered, with the total count of matches. The API lists one
 * account's; the operator console may pass null for every account's.
 */
export async function listTransactions(db: Db, accountId: string | null, query: ListQuery, now: number) {
  const time = query.time ?? '30d'
  if (time !== 'other' && !(time in WINDOWS)) {
    throw fieldError('invalid_request', 'query.time', 'must be one of 1d, 7d, 30d, 3m, 6m, 1y, other')
  }
  const limit = wholeNumber(query, 'limit', PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX)
  const page = wholeNumber(query, 'page', 1, PAGE_MAX)
  // The filters' values are shared parameters: the count repeats the filters in several places.
  const where = [accountId === null ? sql`TRUE` : sql`account_id = ${sql.param(accountId)}`]
  let start: number | undefined
  let end: number | undefined
  if (time === 'other') {
    start = isoTime(query, 'startTime')
    end = isoTime(query, 'endTime')
    if (start !== undefined && end !== undefined && start > end) {
      throw new ApiError('invalid_request', 'startTime must not be after endTime', [
        { field: 'query.startTime', issue: 'after endTime' },
      ])
    }
  } else {
    start = now - WINDOWS[time]!
  }
  const statuses = listOf(query, 'txnStatuses', TXN_STATES)
  if (statuses) where.push(sql`state = ANY(${sql.param(statuses)}::text[])`)
  const filters: Array<[keyof ListQuery, string, boolean]> = [
    ['srcMethods', 'src_method', true],
    ['destMethods', 'dest_method', true],
    ['excludedSrcMethods', 'src_method', false],
    ['excludedDestMethods', 'dest_method', false],
  ]
  for (const [name, column, include] of filters) {
    const values = listOf(query, name, LIST_METHODS)
    if (values) {
      const match = sql`${sql.ident(column)} = ANY(${sql.param(values)}::text[])`
      where.push(include ? match : sql`NOT (${match})`)
    }
  }
  // The filters so far name columns that transaction_day_counts has too; the count uses them on both.
  const count = countQuery(sql.join(where, AND), start, end, !statuses || statuses.includes('quoted'))
  if (start !== undefined) where.push(sql`created_at >= ${start}`)
  if (end !== undefined) where.push(sql`created_at <= ${end}`)
  const cursor = await cursorOf(db, accountId, query)
  if (cursor) {
    const at = sql`(${cursor.createdAt}::int8, ${cursor.id}::text)`
    where.push(cursor.dir === 'after' ? sql`(created_at, id) < ${at}` : sql`(created_at, id) > ${at}`)
  }
  const whereSql = sql.join(where, AND)
  // One row more than the page says whether there are more. Before a cursor, the rows nearest to it
  // are the oldest of the newer ones: read upwards, then put back in the list's order.
  const dir = cursor?.dir === 'after' ? sql`DESC` : sql`ASC`
  const statement = cursor
    ? sql`SELECT * FROM transactions WHERE ${whereSql} ORDER BY created_at ${dir}, id ${dir} LIMIT ${sql.int(limit + 1)}`
    : sql`SELECT * FROM transactions WHERE ${whereSql} ORDER BY created_at DESC, id DESC LIMIT ${sql.int(limit + 1)} OFFSET ${sql.int((page - 1) * limit)}`
  const [found, counted] = await Promise.all([db.query(statement), db.query<{ total: bigint }>(count)])
  const hasMore = found.rows.length > limit
  const rows = found.rows.slice(0, limit).map(txnFromRow)
  if (cursor?.dir === 'before') rows.reverse()
  const pagination: ListPagination = {
    page: cursor ? 1 : page,
    limit,
    total: Number(counted.rows[0]!.total),
    hasMore,
  }
  return { rows, pagination }
}

/**
 * The count of matches in [start, end] (either end open), exact and in one statement: days that lie
 * wholly inside the window are summed from transaction_day_counts (migration 010), the window's
 * partial first and last days are counted from the rows through the (account, created_at) index.
 * Its cost follows the window's length in days, not the number of transactions. The day counts
 * leave out quotes (migration 012): when `quotes` says they may match, the quotes of the whole days
 * are counted from the rows, through the index of the rows still quoted.
 */
function countQuery(filter: Sql, start: number | undefined, end: number | undefined, quotes: boolean): Sql {
  const rowCount = (from: number | undefined, to: number | undefined, only = sql.empty) =>
    sql`(SELECT count(*) FROM transactions WHERE ${filter}${only}${
      from !== undefined ? sql` AND created_at >= ${from}` : sql.empty
    }${to !== undefined ? sql` AND created_at <= ${to}` : sql.empty})`
  // Day d covers [d * DAY_MS, (d + 1) * DAY_MS - 1]; these are the first and one past the last day
  // wholly inside the window.
  const firstDay = start === undefined ? undefined : Math.ceil(start / DAY_MS)
  const endDay = end === undefined ? undefined : Math.floor((end + 1) / DAY_MS)
  const parts: Sql[] = []
  if (firstDay !== undefined && endDay !== undefined && firstDay >= endDay) {
    parts.push(rowCount(start, end))
  } else {
    if (start !== undefined && start < firstDay! * DAY_MS) parts.push(rowCount(start, firstDay! * DAY_MS - 1))
    parts.push(
      sql`(SELECT COALESCE(SUM(n), 0) FROM transaction_day_counts WHERE ${filter}${
        firstDay !== undefined ? sql` AND day >= ${firstDay}` : sql.empty
      }${endDay !== undefined ? sql` AND day < ${endDay}` : sql.empty})`,
    )
    if (quotes) {
      const wholeEnd = endDay === undefined ? undefined : endDay * DAY_MS - 1
      parts.push(
        rowCount(
          firstDay === undefined ? undefined : firstDay * DAY_MS,
          wholeEnd,
          sql` AND state = 'quoted'`,
        ),
      )
    }
    if (end !== undefined && endDay! * DAY_MS <= end) parts.push(rowCount(endDay! * DAY_MS, end))
  }
  return sql`SELECT (${sql.join(parts, sql` + `)})::int8 AS total`
}
