-- A credited deposit remembers how it was credited (its block and its confirmations then), so that
-- the address sweep can tell when that block leaves the best chain. `reorged_at` marks a credited
-- deposit whose transaction is no longer confirmed (back in the mempool, replaced, or gone): the
-- money was credited and the chain no longer shows it. Nothing is posted automatically; an operator
-- sees the row (GET /admin/onchain/reorgs, `svcpay onchain reorgs`) and the log. `reconfirmed_at`
-- records that it came back into a block after all.
ALTER TABLE onchain_deposits
  ADD COLUMN credited_at bigint,
  ADD COLUMN credited_confirmations integer,
  ADD COLUMN block_hash text,
  ADD COLUMN reorged_at bigint,
  ADD COLUMN reconfirmed_at bigint;
CREATE INDEX onchain_deposits_reorged ON onchain_deposits (reorged_at) WHERE reorged_at IS NOT NULL;
