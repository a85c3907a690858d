-- Four-eyes approval of large payouts and on-chain sends (issue 19). A confirmed transaction above
-- its currency's APPROVAL_THRESHOLD_<CCY> waits in state `processing`, its funds held, with one row
-- here. One operator reviews it; a different one approves it (the send goes on) or any finance
-- operator rejects it; unanswered by `expires_at`, the worker expires it. Both end with the hold
-- released. Each decision is also in admin_audit, written in the same database transaction.
CREATE TABLE approvals (
  txn_id text PRIMARY KEY REFERENCES transactions (id),
  account_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('waiting', 'approved', 'rejected', 'expired')),
  -- Which thresholds it went over, as the config had them then: [{ ccy, amount, threshold }] in
  -- exact decimal text.
  reasons jsonb NOT NULL,
  requested_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  -- The operator who made the transaction, when an operator did (null: the account's own API key).
  created_by text,
  reviewed_by text,
  reviewed_by_email text,
  reviewed_at bigint,
  review_note text,
  decided_by text,
  decided_by_email text,
  decided_at bigint,
  decision_note text,
  -- A decision is made once: no row goes back to waiting, and only a waiting row has no decision.
  CHECK ((status = 'waiting') = (decided_at IS NULL))
);
CREATE INDEX approvals_waiting ON approvals (requested_at, txn_id) WHERE status = 'waiting';
CREATE INDEX approvals_status ON approvals (status, requested_at DESC, txn_id);
