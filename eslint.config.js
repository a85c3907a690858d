import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import svcpay from './scripts/eslint/no-string-query.js'

const NO_SQL_NOTIFY = {
  selector: 'Literal[value=/pg_notify|\\bNOTIFY\\b/], TemplateElement[value.raw=/pg_notify|\\bNOTIFY\\b/]',
  message: 'Notify with q.notify(channel, payload) and a channel from src/events/channels.ts.',
}

// `request.body`, `request.params`, `request.query` (also as `ctx.request.…`, or `request.body ?? {}`).
const REQUEST_INPUT =
  "MemberExpression[property.name=/^(body|params|query)$/]:matches([object.name='request'], [object.property.name='request'])"
const CAST = ':matches(TSAsExpression, TSTypeAssertion)'

// A route's inputs are typed by its TypeBox schema through the type provider (withTypeProvider<
// TypeBoxTypeProvider>()); code serving many routes reads them with src/http/request-fields.ts.
// A cast would claim a shape that nothing checked.
const NO_REQUEST_INPUT_CAST = {
  selector: `${CAST} > ${REQUEST_INPUT}, ${CAST} > LogicalExpression > ${REQUEST_INPUT}`,
  message:
    'Do not cast request.body/params/query: give the route a TypeBox schema and register it through the type provider, or read it with src/http/request-fields.ts.',
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'data/**',
      'dist/**',
      'test-artifacts/**',
      'bench/results/**',
      'packages/*/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Notifications go through Queryable.notify (src/db/db.ts), which alone knows how each engine
    // sends them after the commit; a NOTIFY written as SQL would bypass it.
    files: ['src/**/*.ts', 'bench/**/*.ts'],
    ignores: ['src/db/db.ts', '**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_SQL_NOTIFY, NO_REQUEST_INPUT_CAST] },
  },
  {
    // db.ts alone may write NOTIFY; the rest of the src rules hold there too.
    files: ['src/db/db.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_REQUEST_INPUT_CAST] },
  },
  {
    // Statements reach query() as sql`…` fragments (docs/architecture.md, "How a statement is
    // built"). src/db is below the tag: db.ts's own pg-client calls (LISTEN, BEGIN, SET) and the
    // engines' pass-throughs take text. Test files keep plain SQL: their assertions read the
    // database directly, and a fragment there would only restate the statement under test.
    files: ['src/**/*.ts'],
    ignores: ['src/db/**', '**/*.test.ts'],
    plugins: { svcpay },
    rules: { 'svcpay/no-string-query': 'error' },
  },
)
