-- The sandbox Bitcoin networks: a Lightning node and a chain, kept in the service's own database so
-- that every instance sees the same simulated network and it survives restarts. Empty and unused
-- when real rails are configured.

-- Invoices the sandbox knows: ours (issued by our node for a receive) and outside ones (issued by
-- another node, for sends to pay). amount_msat is NULL for a zero-amount invoice.
CREATE TABLE sandbox_ln_invoices (
  payment_hash text PRIMARY KEY,
  payment_request text NOT NULL,
  preimage text NOT NULL,
  amount_msat bigint,
  ours boolean NOT NULL,
  outcome text NOT NULL DEFAULT 'succeed' CHECK (outcome IN ('succeed', 'fail')),
  state text NOT NULL CHECK (state IN ('open', 'settled', 'canceled')),
  amount_paid_msat bigint NOT NULL DEFAULT 0,
  expires_at bigint NOT NULL,
  settled_at bigint,
  created_at bigint NOT NULL
);

-- Payments our node made, one per payment hash: that is what makes a payment idempotent.
CREATE TABLE sandbox_ln_payments (
  payment_hash text PRIMARY KEY,
  payment_request text NOT NULL,
  amount_msat bigint NOT NULL,
  fee_msat bigint NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  preimage text,
  reason text,
  created_at bigint NOT NULL
);

-- The chain tip: one row.
CREATE TABLE sandbox_chain (
  id integer PRIMARY KEY CHECK (id = 1),
  height bigint NOT NULL
);
INSERT INTO sandbox_chain (id, height) VALUES (1, 100);

-- Chain transactions; block_height is NULL while in the mempool. request_id is set on sends from
-- our hot wallet, which are idempotent by it.
CREATE TABLE sandbox_chain_txs (
  txid text PRIMARY KEY,
  block_height bigint,
  request_id text UNIQUE,
  fee_sats bigint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL
);
CREATE INDEX sandbox_chain_txs_mempool_idx ON sandbox_chain_txs (created_at) WHERE block_height IS NULL;

CREATE TABLE sandbox_chain_outputs (
  txid text NOT NULL REFERENCES sandbox_chain_txs (txid),
  vout integer NOT NULL,
  address text NOT NULL,
  amount_sats bigint NOT NULL CHECK (amount_sats > 0),
  PRIMARY KEY (txid, vout)
);
CREATE INDEX sandbox_chain_outputs_address_idx ON sandbox_chain_outputs (address);

-- For the deposit watcher (all rails): a transaction's address and deposits are found by its id.
CREATE INDEX onchain_addresses_txn_idx ON onchain_addresses (txn_id) WHERE txn_id IS NOT NULL;
CREATE INDEX onchain_deposits_txn_idx ON onchain_deposits (txn_id);
CREATE INDEX onchain_deposits_address_idx ON onchain_deposits (address);
