/**
 * SQL statements built from pieces without string concatenation. `sql\`...\`` makes an immutable
 * fragment: a fragment interpolated into it is composed in place; any other value becomes a bound
 * parameter, never text. `toQuery` numbers the placeholders ($1..$n) once, for the whole statement,
 * so that the modules contributing pieces (ledger, outbox, repository) share no counter.
 */
export class Sql {
  /** Use the `sql` tag; `strings` has one more item than `values`. */
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}
}

/** A value bound once however many times it is interpolated (see sql.param). */
class SharedParam {
  constructor(readonly value: unknown) {}
}

function sqlTag(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values)
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/
const EMPTY = new Sql([''], [])

export const sql = Object.assign(sqlTag, {
  /** The fragment with no text. */
  empty: EMPTY,

  /** The fragments one after the other with `separator` between them; empty for none. */
  join(fragments: readonly Sql[], separator: Sql): Sql {
    const strings = ['']
    const values: unknown[] = []
    for (let i = 0; i < fragments.length; i++) {
      if (i > 0) {
        strings.push('')
        values.push(separator)
      }
      values.push(fragments[i])
      strings.push('')
    }
    return new Sql(strings, values)
  },

  /**
   * A value to interpolate in several places: bound once, with one placeholder everywhere (a
   * statement's `now`, a transaction id its pieces share).
   */
  param(value: unknown): SharedParam {
    return new SharedParam(value)
  },

  /** A table or column name chosen by our code; refuses anything but a plain lower-case name. */
  ident(name: string): Sql {
    if (!IDENTIFIER.test(name)) throw new Error(`not a plain SQL identifier: ${JSON.stringify(name)}`)
    return new Sql([name], [])
  },

  /**
   * A whole number written into the text (a LIMIT, or a count the statement's shape follows anyway);
   * refuses anything but a safe integer.
   */
  int(n: number): Sql {
    if (!Number.isSafeInteger(n)) throw new Error(`not a whole number: ${n}`)
    return new Sql([String(n)], [])
  },

  /**
   * Text put into the statement as it is. Only for constants our code chose (literals a
   * partial index's predicate must show); never for anything a request or a row supplied: that is what parameters are for.
   */
  unsafeRaw(text: string): Sql {
    return new Sql([text], [])
  },
})

/** A fragment as a statement's text and its values, placeholders numbered by first appearance. */
export function toQuery(fragment: Sql): { text: string; values: unknown[] } {
  const out: Rendering = { text: '', values: [], shared: undefined }
  render(fragment, out)
  return { text: out.text, values: out.values }
}

interface Rendering {
  text: string
  values: unknown[]
  /** The placeholder of each shared parameter bound so far. */
  shared: Map<SharedParam, string> | undefined
}

// '$1', '$2', …: made once, not at every statement.
const PLACEHOLDERS: string[] = []
const placeholder = (n: number): string => (PLACEHOLDERS[n] ??= '$' + n)

function render(fragment: Sql, out: Rendering): void {
  const { strings, values } = fragment
  out.text += strings[0]!
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    if (typeof value !== 'object' || value === null) {
      out.text += placeholder(out.values.push(value))
    } else if (value instanceof Sql) {
      render(value, out)
    } else if (value instanceof SharedParam) {
      out.shared ??= new Map()
      let bound = out.shared.get(value)
      if (bound === undefined) {
        bound = placeholder(out.values.push(value.value))
        out.shared.set(value, bound)
      }
      out.text += bound
    } else {
      out.text += placeholder(out.values.push(value))
    }
    out.text += strings[i + 1]!
  }
}
