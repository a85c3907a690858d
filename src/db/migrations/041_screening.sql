-- Screening of destinations and deposits (issue 31; src/screening). The deny lists an operator
-- loads, each under a source name (`ofac`, `internal`, ...), replaced as a whole by each load; the
-- hits found at quote, at confirm and on deposits, kept for operators (the console's screening
-- page and attention list); and the screening provider's answer for a quote, recorded at quote so
-- that its confirm does not ask again.
CREATE TABLE screening_lists (
  source text PRIMARY KEY,
  entries integer NOT NULL,
  loaded_at bigint NOT NULL,
  loaded_by text NOT NULL
);
CREATE TABLE screening_entries (
  source text NOT NULL REFERENCES screening_lists (source) ON DELETE CASCADE,
  -- bitcoin | lightning_node | lightning | tron | bank | ethereum (src/screening/normalise.ts)
  dest_type text NOT NULL,
  -- The destination in its one normal spelling for its type.
  value text NOT NULL,
  PRIMARY KEY (source, dest_type, value)
);
CREATE INDEX screening_entries_value ON screening_entries (dest_type, value);
CREATE TABLE screening_hits (
  id bigserial PRIMARY KEY,
  at bigint NOT NULL,
  account_id text NOT NULL,
  txn_id text NOT NULL,
  kind text NOT NULL,
  stage text NOT NULL CHECK (stage IN ('quote', 'confirm', 'deposit')),
  dest_type text NOT NULL,
  value text NOT NULL,
  -- The list (or `provider`) that matched, and its entry; for operators only.
  source text NOT NULL,
  entry text NOT NULL,
  -- refused: the request was refused; held: the send waits for an operator's approval, or the
  -- deposit's credit waits; released: an operator let a held deposit be credited.
  outcome text NOT NULL CHECK (outcome IN ('refused', 'held', 'released')),
  reviewed_at bigint,
  reviewed_by text
);
CREATE UNIQUE INDEX screening_hits_once ON screening_hits (txn_id, stage, dest_type, value, source);
CREATE INDEX screening_hits_unreviewed ON screening_hits (at) WHERE reviewed_at IS NULL;
CREATE TABLE screening_checks (
  txn_id text PRIMARY KEY,
  at bigint NOT NULL,
  -- clear | hit | error: the provider's answer for the quote's destinations.
  verdict text NOT NULL CHECK (verdict IN ('clear', 'hit', 'error')),
  detail text NOT NULL DEFAULT ''
);
-- The sandbox chain names who paid (src/onchain/sandbox.ts), as a node's spending inputs would.
ALTER TABLE sandbox_chain_txs ADD COLUMN from_address text;
