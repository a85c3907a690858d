-- Exports for accountants (issue 19, src/exports/): the ledger's postings of the whole service over
-- a date range are read in keyset order of their entries (created_at, id), one batch at a time; this
-- index lets each batch start where the last one ended instead of scanning the range again.
-- (Transactions are read through transactions_created_idx of 027_console, scanned forwards.)
CREATE INDEX journal_entries_created_idx ON journal_entries (created_at, id);
