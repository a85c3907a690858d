-- Credits from the bank partner that could not be recorded (issue 28; src/payins/skipped.ts): a
-- statement item or a signed notification without a usable id, amount, currency or time, or one
-- the sink refused. Kept for operators (the console's attention list), once per item and fault,
-- with how often and when it was last seen. Only the partner's id (when it is a valid one), the
-- field at fault and where it came from: never the item's amount, description or payer.
CREATE TABLE bank_credit_skips (
  id bigserial PRIMARY KEY,
  bank_ref text NOT NULL DEFAULT '',
  problem text NOT NULL,
  source text NOT NULL CHECK (source IN ('statement', 'notification')),
  first_seen bigint NOT NULL,
  last_seen bigint NOT NULL,
  times integer NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX bank_credit_skips_item ON bank_credit_skips (bank_ref, problem, source);
CREATE INDEX bank_credit_skips_last_seen ON bank_credit_skips (last_seen);
