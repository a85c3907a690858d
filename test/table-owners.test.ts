import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * One owner per aggregate (issue 22): the transactions repository owns every statement that writes
 * the `transactions` table, and the ledger module keeps the statements of the holds and the journal
 * (the repository composes them into its own). Any other file of src/ that inserts, updates or
 * deletes rows of those tables fails here: its statement belongs in a named function of the owner.
 * Tests arrange rows as they need and are left out, as are the migrations and the golden copies of
 * the owners' statements.
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

const REPOSITORY = join('transactions', 'repository.ts')
const LEDGER = `ledger${sep}`

/** Each owned table and whether a file (relative to src/) may write it. */
const OWNERS: Record<string, (file: string) => boolean> = {
  transactions: (file) => file === REPOSITORY,
  holds: (file) => file === REPOSITORY || file.startsWith(LEDGER),
  journal_entries: (file) => file === REPOSITORY || file.startsWith(LEDGER),
  postings: (file) => file === REPOSITORY || file.startsWith(LEDGER),
  ledger_accounts: (file) => file === REPOSITORY || file.startsWith(LEDGER),
  lightning_addresses: (file) => file === join('lightning', 'address', 'service.ts'),
}

const WRITE = new RegExp(
  String.raw`\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|MERGE\s+INTO)(?:\s+ONLY)?\s+` +
    String.raw`(?:public\.)?"?(${Object.keys(OWNERS).join('|')})\b`,
  'gi',
)

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) {
      const skip = ['db/migrations', 'transactions/golden'].some((d) => relative(SRC, path) === join(d))
      return skip ? [] : sourceFiles(path)
    }
    return /\.(ts|sql)$/.test(e.name) && !e.name.endsWith('.test.ts') ? [path] : []
  })
}

/** Every write to an owned table by a file that does not own it, as `file:line table`. */
export function foreignWrites(files: Array<{ file: string; text: string }>): string[] {
  const found: string[] = []
  for (const { file, text } of files) {
    for (const m of text.matchAll(WRITE)) {
      const table = m[1]!.toLowerCase()
      if (OWNERS[table]!(file)) continue
      const line = text.slice(0, m.index).split('\n').length
      found.push(`${file}:${line} ${table}`)
    }
  }
  return found
}

describe('table owners', () => {
  it('only the repository writes transactions, only it and the ledger write holds and the journal', () => {
    const files = sourceFiles(SRC).map((path) => ({
      file: relative(SRC, path),
      text: readFileSync(path, 'utf8'),
    }))
    expect(files.length).toBeGreaterThan(100)
    expect(files.some((f) => f.file === REPOSITORY)).toBe(true)
    expect(foreignWrites(files)).toEqual([])
  })

  it('finds a write by any other file, however the statement is spelled', () => {
    const files = [
      { file: REPOSITORY, text: "q.query('UPDATE transactions SET msg = $2 WHERE id = $1')" },
      { file: join('ledger', 'ledger.ts'), text: 'INSERT INTO holds (txn_id) VALUES ($1)' },
      {
        file: join('transactions', 'worker.ts'),
        text: 'const a = 1\nq.query(`update\n  transactions SET x = 1`)',
      },
      { file: join('sandbox', 'routes.ts'), text: 'DELETE FROM "postings" WHERE true' },
      { file: join('ledger', 'ledger.ts'), text: 'INSERT INTO transactions (id) VALUES ($1)' },
      {
        file: join('accounts', 'service.ts'),
        text: 'x AS (UPDATE ONLY public.ledger_accounts la SET posted = 0)',
      },
      {
        file: join('reports', 'export.ts'),
        text: 'SELECT * FROM transactions; INSERT INTO exports SELECT 1',
      },
    ]
    expect(foreignWrites(files)).toEqual([
      `${join('transactions', 'worker.ts')}:2 transactions`,
      `${join('sandbox', 'routes.ts')}:1 postings`,
      `${join('ledger', 'ledger.ts')}:1 transactions`,
      `${join('accounts', 'service.ts')}:1 ledger_accounts`,
    ])
  })
})
