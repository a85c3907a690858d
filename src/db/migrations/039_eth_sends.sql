-- The Ethereum JSON-RPC rail's own records (issue 33; src/payouts/eth/jsonrpc-sends.ts owns them).
--
-- eth_nonces: the next nonce of each hot-wallet address. A send locks its row FOR UPDATE, takes the
-- nonce and records it with its request in the same transaction, so any number of workers never
-- reuse or skip one.
CREATE TABLE eth_nonces (
  address text PRIMARY KEY CHECK (address ~ '^0x[0-9a-f]{40}$'),
  next_nonce bigint NOT NULL CHECK (next_nonce >= 0)
);

-- eth_sends: one per payout request, with the nonce it holds for ever (replacements reuse it).
-- `stuck` says why the rail cannot bring it further (fee cap reached), for the operators.
CREATE TABLE eth_sends (
  request_id text PRIMARY KEY,
  address text NOT NULL,
  nonce bigint NOT NULL CHECK (nonce >= 0),
  to_address text NOT NULL CHECK (to_address ~ '^0x[0-9a-f]{40}$'),
  amount_minor numeric(78, 0) NOT NULL CHECK (amount_minor > 0),
  max_fee_wei numeric(78, 0) NOT NULL CHECK (max_fee_wei > 0),
  stuck text,
  created_at bigint NOT NULL,
  UNIQUE (address, nonce)
);
CREATE INDEX eth_sends_created ON eth_sends (address, created_at);

-- eth_send_txs: every signed transaction of a send (attempt 0, then its replacements, same
-- nonce), written before it is broadcast: a lost answer is answered by broadcasting the same bytes.
CREATE TABLE eth_send_txs (
  tx_hash text PRIMARY KEY CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  request_id text NOT NULL REFERENCES eth_sends (request_id),
  attempt integer NOT NULL CHECK (attempt >= 0),
  raw_tx text NOT NULL,
  max_fee_per_gas numeric(78, 0) NOT NULL,
  max_priority_fee_per_gas numeric(78, 0) NOT NULL,
  gas_limit bigint NOT NULL,
  signed_at bigint NOT NULL,
  UNIQUE (request_id, attempt)
);
