-- Lightning Addresses (issue 21, src/lightning/address/): an account claims one username, paid as
-- username@host over LNURL-pay (LUD-06, LUD-16). Payments land in the account's wallet of
-- credit_ccy. The username is stored as LUD-16 allows it (lower case a-z, 0-9, '-', '_', '.').
CREATE TABLE lightning_addresses (
  username text PRIMARY KEY CHECK (username ~ '^[a-z0-9._-]{1,64}$'),
  account_id text NOT NULL UNIQUE REFERENCES accounts (id),
  credit_ccy text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
