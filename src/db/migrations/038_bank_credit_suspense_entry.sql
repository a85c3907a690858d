-- The journal entry that put a bank credit in suspense (issue 28): reconciliation matches that entry,
-- which names no transaction, by the credit's bank reference (src/reconcile/refs.ts). Credits put in
-- suspense before this migration are paired with the entries of the same time and amount one to one,
-- in id order on both sides, so two equal credits of the same millisecond never share an entry.
ALTER TABLE bank_credits ADD COLUMN suspense_entry_id bigint;
WITH credits AS (
  SELECT c.id, c.created_at, c.amount_minor,
         row_number() OVER (PARTITION BY c.created_at, c.amount_minor ORDER BY c.id) AS n
    FROM bank_credits c
   WHERE c.status IN ('unassigned', 'assigned') AND c.outcome = 'unmatched'
), entries AS (
  SELECT e.id, e.created_at, p.amount,
         row_number() OVER (PARTITION BY e.created_at, p.amount ORDER BY e.id) AS n
    FROM journal_entries e JOIN postings p ON p.entry_id = e.id
   WHERE e.kind = 'bank_suspense' AND e.txn_id IS NULL AND p.ledger_account_id = 'sys:suspense:VND'
)
UPDATE bank_credits b SET suspense_entry_id = en.id
  FROM credits cr JOIN entries en
    ON en.created_at = cr.created_at AND en.amount = cr.amount_minor AND en.n = cr.n
 WHERE b.id = cr.id;
CREATE UNIQUE INDEX bank_credits_suspense_entry ON bank_credits (suspense_entry_id);
