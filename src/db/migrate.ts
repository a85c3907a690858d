import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import type { Db } from './db.js'
import { sql } from './sql.js'

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))
// Any constant works; it only has to be the same for every instance of the service.
const MIGRATION_LOCK_KEY = 7_203_114_001

/**
 * Apply every migration not yet applied, in file-name order, each in its own transaction. An
 * advisory lock makes several instances starting at once apply each migration exactly once.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
  const applied: string[] = []
  await db.tx(async (q) => {
    await q.query(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`)
    await q.query(
      sql`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at bigint NOT NULL)`,
    )
    const done = new Set(
      (await q.query<{ name: string }>(sql`SELECT name FROM schema_migrations`)).rows.map((r) => r.name),
    )
    for (const file of files) {
      if (done.has(file)) continue
      const text = readFileSync(join(MIGRATIONS_DIR, file), 'utf8')
      // A migration's statements are constant text shipped with the code, written as they are.
      for (const statement of splitStatements(text)) await q.query(sql.unsafeRaw(statement))
      await q.query(sql`INSERT INTO schema_migrations (name, applied_at) VALUES (${file}, ${Date.now()})`)
      applied.push(file)
    }
  })
  return applied
}

/**
 * Migrations hold statements separated by semicolons at line ends. A dollar-quoted body (a function's
 * `$$ ... $$`) is kept whole, whatever its lines end with. Whole-line `--` comments are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = []
  let current: string[] = []
  let quote: string | undefined
  for (const line of sql.split('\n')) {
    current.push(line)
    for (const [tag] of line.matchAll(/\$[A-Za-z_]*\$/g)) {
      if (quote === undefined) quote = tag
      else if (tag === quote) quote = undefined
    }
    if (quote === undefined && /;\s*$/.test(line)) {
      statements.push(current.join('\n').replace(/;\s*$/, ''))
      current = []
    }
  }
  statements.push(current.join('\n'))
  return statements.map((s) => s.replace(/^\s*--.*$/gm, '').trim()).filter(Boolean)
}
