-- What the worker last heard from a transaction's rail (src/rails/attempts.ts): how many calls in a
-- row have failed, since when, the last failure's code, and when the rail may be asked again. Kept
-- in the database so that a restarted worker carries on with the same backoff instead of asking a
-- failing node again at once, and so that GET /admin/transactions/stuck can say what went wrong.
CREATE TABLE rail_attempts (
  txn_id text PRIMARY KEY,
  rail text NOT NULL,
  failures integer NOT NULL DEFAULT 0,
  first_failed_at bigint,
  last_error text,
  last_attempt_at bigint NOT NULL,
  last_answer_at bigint,
  next_retry_at bigint
);

-- A bank payout the partner sent back after completion is returned by a transaction of its own
-- (kind payout_return) whose rail_ref is the payout's id: at most one return per payout.
CREATE UNIQUE INDEX transactions_payout_return_idx ON transactions (rail_ref) WHERE kind = 'payout_return';
