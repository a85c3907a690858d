import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createTestDb } from '../../test/helpers/harness.js'
import { migrate, splitStatements } from './migrate.js'

const migration = (name: string) =>
  splitStatements(readFileSync(fileURLToPath(new URL(`./migrations/${name}`, import.meta.url)), 'utf8'))

describe('migration 038: each credit in suspense paired with its own journal entry', () => {
  it('pairs two equal credits of the same millisecond with two entries, and leaves one with none unpaired', async () => {
    const t = await createTestDb()
    try {
      const { db } = t
      await migrate(db)
      // As the database stood before 038: the column and its index not there yet.
      await db.query('DROP INDEX bank_credits_suspense_entry')
      await db.query('ALTER TABLE bank_credits DROP COLUMN suspense_entry_id')
      await db.query(
        `INSERT INTO journal_entries (id, txn_id, kind, created_at) VALUES
           (901, NULL, 'bank_suspense', 1000), (902, NULL, 'bank_suspense', 1000), (903, NULL, 'bank_suspense', 2000)`,
      )
      await db.query(
        `INSERT INTO postings (entry_id, ledger_account_id, ccy, amount) VALUES
           (901, 'sys:suspense:VND', 'VND', 100000), (901, 'sys:bank:VND', 'VND', -100000),
           (902, 'sys:suspense:VND', 'VND', 100000), (902, 'sys:bank:VND', 'VND', -100000),
           (903, 'sys:suspense:VND', 'VND', 5000), (903, 'sys:bank:VND', 'VND', -5000)`,
      )
      await db.query(
        `INSERT INTO bank_credits (id, bank_ref, amount_minor, memo, booked_at, status, outcome, created_at) VALUES
           ('bc1', 'r1', 100000, 'x', 1000, 'unassigned', 'unmatched', 1000),
           ('bc2', 'r2', 100000, 'x', 1000, 'assigned', 'unmatched', 1000),
           ('bc3', 'r3', 5000, 'x', 2000, 'unassigned', 'unmatched', 2000),
           ('bc4', 'r4', 7000, 'x', 3000, 'unassigned', 'unmatched', 3000)`,
      )
      for (const statement of migration('038_bank_credit_suspense_entry.sql')) await db.query(statement)
      const { rows } = await db.query<{ id: string; entry: string | null }>(
        'SELECT id, suspense_entry_id::text AS entry FROM bank_credits ORDER BY id',
      )
      expect(rows).toEqual([
        { id: 'bc1', entry: '901' },
        { id: 'bc2', entry: '902' },
        { id: 'bc3', entry: '903' },
        { id: 'bc4', entry: null },
      ])
    } finally {
      await t.db.close()
      await t.drop()
    }
  })
})
