-- The operator console (issue 19) lists and charts transactions of every account by time; the
-- existing index leads with the account. This one serves "newest first" and "the last N days"
-- across accounts.
CREATE INDEX transactions_created_idx ON transactions (created_at DESC, id DESC);
-- The console's account search finds an account by the extRefId of one of its transactions.
CREATE INDEX transactions_ext_ref_idx ON transactions (ext_ref_id) WHERE ext_ref_id IS NOT NULL;
