-- The journal entry that put a bank credit in suspense (issue 28): reconciliation matches that entry,
-- which names no transaction, by the credit's bank reference (src/reconcile/refs.ts). Credits put in
-- suspense before this migration are found by the entry of the same time and amount.
ALTER TABLE bank_credits ADD COLUMN suspense_entry_id bigint;
UPDATE bank_credits c SET suspense_entry_id = (
  SELECT e.id FROM journal_entries e JOIN postings p ON p.entry_id = e.id
   WHERE e.kind = 'bank_suspense' AND e.txn_id IS NULL AND e.created_at = c.created_at
     AND p.ledger_account_id = 'sys:suspense:VND' AND p.amount = c.amount_minor
   ORDER BY e.id LIMIT 1)
 WHERE c.status IN ('unassigned', 'assigned') AND c.outcome = 'unmatched';
CREATE UNIQUE INDEX bank_credits_suspense_entry ON bank_credits (suspense_entry_id);
