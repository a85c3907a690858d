import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * One owner per aggregate (issue 22): the transactions repository owns every statement that writes
 * the `transactions` table, and the ledger module keeps the statements of the holds and the journal
 * (the repository composes them into its own). Any other file of src/ that inserts, updates or
 * deletes rows of those tables fails here: its statement belongs in a named function of the owner.
 * Reads go through their owners too (issue 30): a FROM or JOIN of an owned table outside its owner's
 * read functions fails, unless the file is in one of the exception tables below with its reason.
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

const EVENTS = `events${sep}`
const ACCOUNTS = `accounts${sep}`

const TXN_READS = [
  REPOSITORY,
  join('transactions', 'reads.ts'),
  join('transactions', 'reads-reports.ts'),
  join('transactions', 'list.ts'),
  // The stuck listing, beside the partial index its query is written for.
  join('transactions', 'stuck.ts'),
]

/** The ledger's reconciliation reads, which join each entry's transaction for its rail reference. */
const RAIL_ENTRIES = join('ledger', 'rail-entries.ts')

/**
 * Each owned table and whether a file (relative to src/) may read it: the owner's read functions.
 * The transactions' reads may join the holds of their rows (the confirm's lock reads its open
 * holds in the same statement; reconciliation sums the holds of sends in flight), and the ledger's
 * entries on a rail's account join their transactions for the reference the rail knows them by.
 */
const READERS: Record<string, (file: string) => boolean> = {
  transactions: (file) => TXN_READS.includes(file) || file === RAIL_ENTRIES,
  holds: (file) => TXN_READS.includes(file) || file.startsWith(LEDGER),
  journal_entries: (file) => file === REPOSITORY || file.startsWith(LEDGER),
  postings: (file) => file === REPOSITORY || file.startsWith(LEDGER),
  ledger_accounts: (file) => file === REPOSITORY || file.startsWith(LEDGER),
  events: (file) => file.startsWith(EVENTS),
  webhook_deliveries: (file) => file.startsWith(EVENTS),
  delivery_attempts: (file) => file.startsWith(EVENTS),
  // The hosted page's one statement reads the merchant's display name with its receive.
  accounts: (file) => file.startsWith(ACCOUNTS) || file === join('transactions', 'reads-reports.ts'),
}

/** Reads that stay outside the owners for now, by file, each with the reason. */
const READ_EXCEPTIONS: Record<string, string> = {
  [join('auth', 'service.ts')]:
    "the API key's owner reads the key with its account's tier and name in one statement, on every authenticated request",
  [join('approvals', 'repository.ts')]:
    "the approvals list pages by the approval's own columns and shows each one's transaction state and kind in the same statement",
  [join('reconcile', 'refs.ts')]:
    "the text of how an entry's rail reference is read (it joins the returned payout); only src/ledger/rail-entries.ts runs it",
}

const READ = new RegExp(
  String.raw`\b(?:FROM|JOIN)(?:\s+ONLY)?\s+(?:public\.)?"?(${Object.keys(READERS).join('|')})\b`,
  'gi',
)

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

/**
 * Every read of an owned table (a FROM or JOIN of it) by a file that is not one of its readers, as
 * `file:line table`. A `DELETE FROM` is a write and is left to foreignWrites.
 */
export function foreignReads(files: Array<{ file: string; text: string }>): string[] {
  const found: string[] = []
  for (const { file, text } of files) {
    for (const m of text.matchAll(READ)) {
      const table = m[1]!.toLowerCase()
      if (READERS[table]!(file)) continue
      if (/\bDELETE\s+$/i.test(text.slice(Math.max(0, m.index - 16), m.index))) continue
      const line = text.slice(0, m.index).split('\n').length
      found.push(`${file}:${line} ${table}`)
    }
  }
  return found
}

const isException = (file: string) => file in READ_EXCEPTIONS

function srcFiles() {
  return sourceFiles(SRC).map((path) => ({ file: relative(SRC, path), text: readFileSync(path, 'utf8') }))
}

describe('table owners', () => {
  it('only the repository writes transactions, only it and the ledger write holds and the journal', () => {
    const files = srcFiles()
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

  it('only the owners read transactions, holds, the journal, wallets, accounts, events and deliveries, but for the listed exceptions', () => {
    const files = srcFiles()
    expect(files.length).toBeGreaterThan(100)
    expect(foreignReads(files.filter((f) => !isException(f.file)))).toEqual([])
  })

  it('lists no exception that no longer reads an owned table', () => {
    const files = srcFiles()
    const stale = Object.keys(READ_EXCEPTIONS).filter((file) => {
      const found = files.find((f) => f.file === file)
      return !found || foreignReads([found]).length === 0
    })
    expect(stale).toEqual([])
  })

  it('finds a read by any other file, however the statement is spelled', () => {
    const files = [
      { file: join('transactions', 'reads.ts'), text: 'SELECT * FROM transactions WHERE id = $1' },
      { file: join('ledger', 'reads.ts'), text: 'FROM holds h JOIN ledger_accounts la ON true' },
      {
        file: join('console', 'overview.ts'),
        text: 'const a = 1\nq.query(sql`SELECT count(*)\n  from\n transactions`)',
      },
      {
        file: join('pages', 'view.ts'),
        text: 'SELECT 1 FROM accounts a JOIN public."transactions" t ON true',
      },
      { file: join('lightning', 'send.ts'), text: 'SELECT sum(amount) FROM ONLY holds' },
      {
        file: join('exports', 'exports.ts'),
        text: 'FROM journal_entries e JOIN postings p ON p.entry_id = e.id',
      },
      { file: join('ledger', 'ledger.ts'), text: 'SELECT id FROM transactions' },
      { file: join('sandbox', 'routes.ts'), text: 'DELETE FROM postings WHERE true' },
      {
        file: join('console', 'accounts.ts'),
        text: 'SELECT * FROM accounts; SELECT * FROM transactions_archive',
      },
    ]
    expect(foreignReads(files)).toEqual([
      `${join('console', 'overview.ts')}:3 transactions`,
      `${join('pages', 'view.ts')}:1 accounts`,
      `${join('pages', 'view.ts')}:1 transactions`,
      `${join('lightning', 'send.ts')}:1 holds`,
      `${join('exports', 'exports.ts')}:1 journal_entries`,
      `${join('exports', 'exports.ts')}:1 postings`,
      `${join('ledger', 'ledger.ts')}:1 transactions`,
      `${join('console', 'accounts.ts')}:1 accounts`,
    ])
  })
})
