-- Each posting used to be checked by two foreign keys, and each check locked the row it found (FOR
-- KEY SHARE). Every swap posts to the same few system accounts (fees, FX), so every swap locked
-- those rows: PostgreSQL rewrote them at each posting and made a multixact whenever two swaps held
-- one at once. The journal entry's own statement now checks its postings instead (entryCtes in
-- src/ledger/ledger.ts): each names an existing ledger account of its own currency, which the
-- foreign key did not check, and the entry it belongs to is written by that same statement. What
-- the locks protected against, a ledger account or an entry removed while referenced, is refused
-- outright: the ledger's rows are never deleted.
ALTER TABLE postings DROP CONSTRAINT postings_ledger_account_id_fkey;
ALTER TABLE postings DROP CONSTRAINT postings_entry_id_fkey;

CREATE FUNCTION ledger_rows_are_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rows of % are never deleted: the ledger only grows', TG_TABLE_NAME;
END
$$;

CREATE TRIGGER ledger_accounts_kept BEFORE DELETE OR TRUNCATE ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_rows_are_kept();
CREATE TRIGGER journal_entries_kept BEFORE DELETE OR TRUNCATE ON journal_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_rows_are_kept();
CREATE TRIGGER postings_kept BEFORE DELETE OR TRUNCATE ON postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_rows_are_kept();
