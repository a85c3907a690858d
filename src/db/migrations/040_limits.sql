-- Limits and risk controls (issue 31): volume limits per tier, velocity, new-destination cool-down,
-- allow-lists and hot-wallet caps, all checked by the limits confirm gate (src/limits) inside the
-- confirm's database transaction, under a lock that serialises an account's confirms.
--
-- What a send or receive counts, one row per transaction of a kind the gate concerns: its value in
-- the reference currency (LIMITS_CCY, minor units, rounded up) at the rates it was quoted at, the
-- amount that leaves the rail (in the rail's currency, for the hot-wallet caps) and its normalised
-- destination. Written when quoted (counted_at null: it counts nothing yet) and counted at confirm
-- (counted_at set). Whether a counted row still counts is read from its transaction's state: a
-- cancelled, expired, failed, rejected or returned transaction gives its amount back, in the same
-- database transaction as the state change, with nothing to release.
CREATE TABLE limit_usage (
  txn_id text PRIMARY KEY,
  account_id text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('in', 'out')),
  method text NOT NULL,
  rail text,
  ref_ccy text NOT NULL,
  ref_minor bigint NOT NULL CHECK (ref_minor >= 0),
  rail_minor bigint NOT NULL CHECK (rail_minor >= 0),
  destination text,
  quoted_at bigint NOT NULL,
  counted_at bigint
);
CREATE INDEX limit_usage_account ON limit_usage (account_id, counted_at) WHERE counted_at IS NOT NULL;
CREATE INDEX limit_usage_rail ON limit_usage (rail, counted_at) WHERE counted_at IS NOT NULL;
CREATE INDEX limit_usage_destination ON limit_usage (account_id, destination, quoted_at);

-- An account's limit settings set by an operator: its limits tier (any tier named by a LIMITS_<TIER>_
-- setting; none: the account's own tier) and whether it may pay only the destinations of its allow-list.
CREATE TABLE limit_accounts (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  tier text,
  allow_list_only boolean NOT NULL DEFAULT false,
  updated_at bigint NOT NULL
);

-- Per-account overrides of a tier's limits, set by an operator with a reason and an optional expiry.
-- method '' is the limit over every method together. amount: minor units of ref_ccy for an amount
-- limit, a count for sends_per_hour, seconds for new_destination_cooldown.
CREATE TABLE limit_overrides (
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  method text NOT NULL DEFAULT '',
  amount bigint NOT NULL CHECK (amount >= 0),
  ref_ccy text NOT NULL,
  reason text NOT NULL,
  set_by text NOT NULL,
  set_at bigint NOT NULL,
  expires_at bigint,
  PRIMARY KEY (account_id, name, method)
);

-- The destinations an operator approved for an account (normalised as src/limits/destinations.ts does).
CREATE TABLE limit_allow_list (
  account_id text NOT NULL REFERENCES accounts (id),
  destination text NOT NULL,
  reason text NOT NULL,
  added_by text NOT NULL,
  added_at bigint NOT NULL,
  PRIMARY KEY (account_id, destination)
);
