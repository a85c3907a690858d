-- VND pay-in over VietQR (issue 20, src/payins/).
--
-- The transfer memo of every VND receive, unique for ever (not only among open receives), so that a
-- transfer that arrives after its receive expired or completed still names one receive, and its
-- account, without doubt. Stored already normalised (upper-case A-Z and 0-9), as matched.
CREATE TABLE vnd_receive_memos (
  memo text PRIMARY KEY CHECK (memo ~ '^SVP[0-9A-Z]{7}$'),
  txn_id text NOT NULL UNIQUE,
  account_id text NOT NULL,
  created_at bigint NOT NULL
);

-- Every incoming bank transfer we were told about (the partner's notification, its statement, or
-- the sandbox bank), once per partner reference. `status` says where its money went:
--   matched     credited to the receive its memo names (txn_id: that receive)
--   deposit     credited to the memo's account as a deposit of its own (txn_id: the deposit)
--   unassigned  no receive matched: the money waits in sys:suspense:VND for an operator
--   assigned    an operator moved it from suspense to an account (txn_id: the deposit or receive)
-- `payer` is personal data (the payer's bank, account and name, when the partner gives them).
CREATE TABLE bank_credits (
  id text PRIMARY KEY,
  bank_ref text NOT NULL UNIQUE,
  ccy text NOT NULL DEFAULT 'VND',
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  memo text NOT NULL,
  memo_token text,
  booked_at bigint NOT NULL,
  payer jsonb,
  status text NOT NULL CHECK (status IN ('matched', 'deposit', 'unassigned', 'assigned')),
  outcome text NOT NULL,
  txn_id text,
  assigned_by text,
  assigned_reason text,
  assigned_at bigint,
  created_at bigint NOT NULL
);
CREATE INDEX bank_credits_unassigned_idx ON bank_credits (booked_at) WHERE status = 'unassigned';

-- The sandbox bank's incoming transfers (POST /admin/sandbox/vnd/transfer): what a customer paid
-- into our collecting account, under the bank reference the sandbox gave it. The sandbox bank counts
-- them in what it holds and lists them among its payments, for reconciliation.
CREATE TABLE sandbox_bank_transfers_in (
  bank_ref text PRIMARY KEY,
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  created_at bigint NOT NULL
);
