-- Times are epoch milliseconds (bigint) throughout, as the API speaks them.
-- Amounts are bigint counts of the currency's minor unit.

CREATE TABLE settings (
  name text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE accounts (
  id text PRIMARY KEY,
  display_name text NOT NULL,
  parent_id text REFERENCES accounts (id),
  tier text NOT NULL DEFAULT 'standard' CHECK (tier IN ('standard', 'premium')),
  created_at bigint NOT NULL
);
CREATE INDEX accounts_parent_idx ON accounts (parent_id);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  secret_enc text NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id);

-- One-time token signatures: a signature is accepted once per key, across restarts and instances.
CREATE TABLE used_signatures (
  key_id text NOT NULL,
  signature text NOT NULL,
  used_at bigint NOT NULL,
  PRIMARY KEY (key_id, signature)
);

-- Wallets are the customer-facing ledger accounts; system accounts (fees, FX liquidity, external
-- networks) balance them. posted is the settled balance, pending the sum of open holds.
CREATE TABLE ledger_accounts (
  id text PRIMARY KEY,
  account_id text REFERENCES accounts (id),
  kind text NOT NULL CHECK (kind IN ('wallet', 'system')),
  ccy text NOT NULL,
  posted bigint NOT NULL DEFAULT 0,
  pending bigint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CONSTRAINT wallet_never_negative CHECK (kind <> 'wallet' OR (pending >= 0 AND posted - pending >= 0)),
  CONSTRAINT wallet_one_per_ccy UNIQUE (account_id, ccy)
);

CREATE TABLE journal_entries (
  id bigserial PRIMARY KEY,
  txn_id text,
  kind text NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX journal_entries_txn_idx ON journal_entries (txn_id);

CREATE TABLE postings (
  id bigserial PRIMARY KEY,
  entry_id bigint NOT NULL REFERENCES journal_entries (id),
  ledger_account_id text NOT NULL REFERENCES ledger_accounts (id),
  ccy text NOT NULL,
  amount bigint NOT NULL CHECK (amount <> 0)
);
CREATE INDEX postings_entry_idx ON postings (entry_id);
CREATE INDEX postings_account_idx ON postings (ledger_account_id);

CREATE TABLE holds (
  id bigserial PRIMARY KEY,
  txn_id text NOT NULL,
  ledger_account_id text NOT NULL REFERENCES ledger_accounts (id),
  amount bigint NOT NULL CHECK (amount > 0),
  status text NOT NULL CHECK (status IN ('pending', 'posted', 'voided')),
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX holds_txn_idx ON holds (txn_id);
CREATE INDEX holds_pending_idx ON holds (ledger_account_id) WHERE status = 'pending';

CREATE TABLE transactions (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  ext_ref_id text,
  request_hash text NOT NULL,
  kind text NOT NULL,
  state text NOT NULL,
  msg text NOT NULL DEFAULT '',
  note text,
  deduct_fees_from_dest boolean NOT NULL DEFAULT false,
  src_ccy text NOT NULL,
  src_method text NOT NULL,
  src_amount bigint NOT NULL,
  src_fee bigint NOT NULL DEFAULT 0,
  src_network_fee bigint NOT NULL DEFAULT 0,
  src_settled bigint,
  src_details jsonb NOT NULL DEFAULT '{}',
  src_created_at bigint NOT NULL,
  src_updated_at bigint NOT NULL,
  dest_ccy text NOT NULL,
  dest_method text NOT NULL,
  dest_amount bigint NOT NULL,
  dest_settled bigint,
  dest_details jsonb NOT NULL DEFAULT '{}',
  dest_created_at bigint NOT NULL,
  dest_updated_at bigint NOT NULL,
  fx_rate text NOT NULL,
  expires_at bigint NOT NULL,
  kyc jsonb,
  source_of_funds jsonb,
  rail_ref text,
  page_id text UNIQUE,
  next_check_at bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CONSTRAINT ext_ref_unique UNIQUE (account_id, ext_ref_id)
);
CREATE INDEX transactions_account_created_idx ON transactions (account_id, created_at DESC, id DESC);
CREATE INDEX transactions_next_check_idx ON transactions (next_check_at) WHERE next_check_at IS NOT NULL;
CREATE INDEX transactions_rail_ref_idx ON transactions (rail_ref) WHERE rail_ref IS NOT NULL;

-- The outbox: one row per state change, written in the same database transaction as the change.
CREATE TABLE events (
  id bigserial PRIMARY KEY,
  txn_id text NOT NULL,
  account_id text NOT NULL,
  txn_state text NOT NULL,
  msg text NOT NULL DEFAULT '',
  ext_ref_id text NOT NULL DEFAULT '',
  updated_at bigint NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX events_txn_idx ON events (txn_id, id);

CREATE TABLE webhooks (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  callback text NOT NULL,
  secret_enc text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  deleted_at bigint
);
CREATE UNIQUE INDEX webhooks_one_live_per_account ON webhooks (account_id) WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  event_id bigint NOT NULL REFERENCES events (id),
  webhook_id text NOT NULL REFERENCES webhooks (id),
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint,
  last_status integer,
  last_error text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id DESC);

CREATE TABLE delivery_attempts (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id),
  attempt integer NOT NULL,
  at bigint NOT NULL,
  http_status integer,
  latency_ms integer NOT NULL,
  error text
);
CREATE INDEX delivery_attempts_delivery_idx ON delivery_attempts (delivery_id);

CREATE TABLE onchain_addresses (
  address text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  txn_id text,
  kind text NOT NULL CHECK (kind IN ('static', 'txn')),
  derivation_index integer NOT NULL UNIQUE,
  expires_at bigint,
  next_check_at bigint,
  created_at bigint NOT NULL
);
CREATE UNIQUE INDEX onchain_addresses_static_idx ON onchain_addresses (account_id) WHERE kind = 'static';
CREATE INDEX onchain_addresses_check_idx ON onchain_addresses (next_check_at) WHERE next_check_at IS NOT NULL;
CREATE SEQUENCE onchain_address_index;

CREATE TABLE onchain_deposits (
  txid text NOT NULL,
  vout integer NOT NULL,
  address text NOT NULL,
  amount_sats bigint NOT NULL,
  txn_id text NOT NULL,
  created_at bigint NOT NULL,
  PRIMARY KEY (txid, vout)
);
