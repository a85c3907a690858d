-- Where the statement poll of incoming bank transfers stands (issue 20; src/payouts/vnd/bank-credit-poll.ts).
-- One row that every instance's worker claims with a conditional update, so that one poll runs at a
-- time across instances; lease_until lets another instance take over from one that died mid-poll.
-- since_ms is the booking time (the partner's clock) the next poll reads from: the newest credit
-- handed on, less an overlap; NULL until the first poll. failures and last_error (a code, never a
-- credit's details) are what `svcpay rails check` reports while the partner cannot be read.
CREATE TABLE bank_credit_cursor (
  id integer PRIMARY KEY CHECK (id = 1),
  since_ms bigint,
  next_run_at bigint NOT NULL,
  lease_until bigint NOT NULL,
  failures integer NOT NULL DEFAULT 0,
  last_error text,
  last_ok_at bigint
);
INSERT INTO bank_credit_cursor (id, next_run_at, lease_until) VALUES (1, 0, 0);
