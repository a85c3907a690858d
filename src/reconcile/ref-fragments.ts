import { sql, type Sql } from '../db/sql.js'
import type { RefSql } from '../ledger/rail-entries.js'
import type { RailKind } from '../rails/rail.js'
import { ENTRY_REF_JOIN, entryRefSql, RAIL_REF_JOIN } from './refs.js'

/*
 * refs.ts writes how an entry's reconciliation reference is read as constant SQL text that our code
 * chose (no request or row data). These are the same texts as fragments, so that the statements of
 * reconciliation compose them with the `sql` tag instead of splicing strings.
 */

const REF_JOINS: Sql = sql.unsafeRaw(`${RAIL_REF_JOIN} ${ENTRY_REF_JOIN}`)

/** How an entry's reference is read on `rail` (see entryRefSql), and the joins it needs. */
export function entryRef(rail: RailKind): RefSql {
  return { expr: sql.unsafeRaw(entryRefSql(rail)), joins: REF_JOINS }
}
