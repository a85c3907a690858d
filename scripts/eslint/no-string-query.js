/**
 * ESLint rule `svcpay/no-string-query`: a statement reaches `query()` as a `sql` fragment
 * (src/db/sql.ts), never as text. Text with hand-numbered `$n` and a separate array of values
 * lets the two drift apart, and text spliced together with `${}` or `+` can carry a value into the
 * statement as SQL. Reported first arguments of a `query(...)` or `x.query(...)` call: a string
 * literal, a template literal (with or without `${}`), a `+` concatenation, a conditional choosing
 * between such texts, and an identifier whose declaration gives it one of those. Anything else (a
 * `sql` tagged template, a fragment returned by a function, a parameter of a pass-through wrapper)
 * passes: the type of `Queryable.query` still accepts strings, so that test files may read the
 * database directly.
 */

const MESSAGES = {
  string:
    'Pass query() a sql`…` fragment (src/db/sql.ts), not a string with hand-numbered $n and a values array.',
  template:
    'Pass query() a sql`…` fragment (src/db/sql.ts): interpolate values and fragments (sql.join, sql.ident, sql.int) in the tag instead of splicing text with ${}.',
  concat:
    'Pass query() a sql`…` fragment (src/db/sql.ts): compose fragments instead of concatenating SQL text.',
  bound:
    'Pass query() a sql`…` fragment (src/db/sql.ts): `{{name}}` is bound to SQL text; make it a fragment where it is declared.',
}

/** The message id for an expression that evaluates to SQL text, or undefined. */
function textKind(node) {
  switch (node.type) {
    case 'Literal':
      return typeof node.value === 'string' ? 'string' : undefined
    case 'TemplateLiteral':
      return node.expressions.length > 0 ? 'template' : 'string'
    case 'BinaryExpression':
      return node.operator === '+' ? 'concat' : undefined
    case 'ConditionalExpression':
      return textKind(node.consequent) ?? textKind(node.alternate)
    case 'TSAsExpression':
    case 'TSSatisfiesExpression':
    case 'TSNonNullExpression':
      return textKind(node.expression)
    default:
      return undefined
  }
}

/** The variable `name` refers to at `node`, looked up through the enclosing scopes. */
function resolve(scope, name) {
  for (let s = scope; s; s = s.upper) {
    const variable = s.set.get(name)
    if (variable) return variable
  }
  return undefined
}

function isQueryCallee(callee) {
  if (callee.type === 'Identifier') return callee.name === 'query'
  if (callee.type === 'MemberExpression' && !callee.computed) {
    return callee.property.type === 'Identifier' && callee.property.name === 'query'
  }
  return false
}

/** @type {import('eslint').Rule.RuleModule} */
export const noStringQuery = {
  meta: {
    type: 'problem',
    docs: { description: 'Require a sql`…` fragment as the statement passed to query().' },
    schema: [],
    messages: MESSAGES,
  },
  create(context) {
    return {
      CallExpression(node) {
        if (!isQueryCallee(node.callee)) return
        const first = node.arguments[0]
        if (!first) return
        const kind = textKind(first)
        if (kind) {
          context.report({ node: first, messageId: kind })
          return
        }
        if (first.type !== 'Identifier') return
        const variable = resolve(context.sourceCode.getScope(node), first.name)
        // Only a variable written once, at its declaration, is known to hold what it was given.
        if (!variable || variable.references.some((r) => r.isWrite() && !r.init)) return
        for (const def of variable.defs) {
          if (def.type === 'Variable' && def.node.init && textKind(def.node.init)) {
            context.report({ node: first, messageId: 'bound', data: { name: first.name } })
            return
          }
        }
      },
    }
  },
}

/** The inline plugin eslint.config.js registers as `svcpay`. */
export default { meta: { name: 'svcpay' }, rules: { 'no-string-query': noStringQuery } }
