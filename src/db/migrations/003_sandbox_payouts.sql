-- The sandbox payout networks (TRON USDT and VND bank transfers). A payout's outcome is decided
-- when it is submitted, from the sandbox rules, and becomes visible once settle_at has passed.
-- Nothing personal is kept here: no account number, no beneficiary, only the reference and the amount.
CREATE TABLE sandbox_payouts (
  ref text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('tron', 'bank')),
  request_id text NOT NULL UNIQUE,
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  status text NOT NULL CHECK (status IN ('completed', 'failed', 'rejected')),
  reason text NOT NULL DEFAULT '',
  settle_at bigint NOT NULL,
  created_at bigint NOT NULL
);

-- The TronGrid adapter's send record: the hash of the signed transfer for each request, written
-- before the first broadcast, so that a retry after a restart finds the transfer instead of
-- building (and paying) a second one.
CREATE TABLE tron_sends (
  request_id text PRIMARY KEY,
  tx_hash text NOT NULL UNIQUE,
  created_at bigint NOT NULL
);
