-- The reconciliation schedule (issue 18, RECONCILE_INTERVAL_S): one row that every instance's worker
-- claims with a conditional update, so that one run happens at a time across instances. lease_until
-- lets another instance take over when the one running dies mid-run.
CREATE TABLE reconcile_schedule (
  id integer PRIMARY KEY CHECK (id = 1),
  next_run_at bigint NOT NULL,
  lease_until bigint NOT NULL,
  last_run_at bigint,
  last_ok boolean
);
INSERT INTO reconcile_schedule (id, next_run_at, lease_until) VALUES (1, 0, 0);
