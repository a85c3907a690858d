-- Rail operations, continued (src/rails/attempts.ts, src/transactions/stuck.ts).
-- The deposit watcher's failed looks at an address in a row: an unreachable node is asked about
-- each address less and less often, and a restart does not reset that.
ALTER TABLE onchain_addresses ADD COLUMN rail_failures integer NOT NULL DEFAULT 0;

-- The transactions that can be stuck: every one neither quoted nor final. The stuck listing and the
-- svcpay_transactions_stuck gauge (read at every scrape) go through this index, not the whole table.
CREATE INDEX transactions_open_idx ON transactions (src_updated_at)
  WHERE state NOT IN ('quoted', 'completed', 'expired', 'failed', 'usercanceled', 'rejected', 'error');
