/**
 * The local ESLint rule that keeps statements in the `sql` tag (scripts/eslint/no-string-query.js):
 * what it refuses as the first argument of query(), and what it lets through.
 */
import { RuleTester } from 'eslint'
import tseslint from 'typescript-eslint'
import { describe, it } from 'vitest'
import { noStringQuery } from '../scripts/eslint/no-string-query.js'

RuleTester.describe = describe
RuleTester.it = it
RuleTester.itOnly = it.only

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } })

tester.run('no-string-query', noStringQuery, {
  valid: [
    'q.query(sql`SELECT * FROM transactions WHERE id = ${id}`)',
    'await db.query<{ id: string }>(sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`)',
    'q.query(sql`WITH ${change.ctes} SELECT changed.*, ${change.enqueued} FROM changed`)',
    // A fragment built elsewhere, and a pass-through wrapper's own parameter.
    'const statement = sql`SELECT 1`; q.query(statement)',
    'const run = (statement, params) => db.query(statement, params)',
    'q.query(insertStatement(txn))',
    'q.query(sql.unsafeRaw(migrationText))',
    // Not a query() call.
    "q.notify('txn', id)",
    "q.queryAll('SELECT 1')",
    "q['query']('SELECT 1')",
  ],
  invalid: [
    { code: "q.query('SELECT * FROM transactions WHERE id = $1', [id])", errors: [{ messageId: 'string' }] },
    { code: 'query(`SELECT 1`)', errors: [{ messageId: 'string' }] },
    {
      code: 'await q.query<{ n: number }>("SELECT count(*) AS n FROM holds")',
      errors: [{ messageId: 'string' }],
    },
    {
      code: 'q.query(`SELECT * FROM events WHERE id > $1 LIMIT ${EVENTS_BATCH_MAX}`, [cursor])',
      errors: [{ messageId: 'template' }],
    },
    { code: "db.query('SELECT * FROM ' + table)", errors: [{ messageId: 'concat' }] },
    {
      code: "q.query(lock ? 'SELECT 1 FOR UPDATE' : sql`SELECT 1`)",
      errors: [{ messageId: 'string' }],
    },
    {
      code: "const text = 'DELETE FROM holds WHERE txn_id = $1'; q.query(text, [id])",
      errors: [{ messageId: 'bound', data: { name: 'text' } }],
    },
    {
      code: 'function f(column) { const text = `SELECT ${column} FROM t`; return db.query(text) }',
      errors: [{ messageId: 'bound', data: { name: 'text' } }],
    },
    { code: "q.query('SELECT 1' as string)", errors: [{ messageId: 'string' }] },
  ],
})
