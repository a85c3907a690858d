-- The result of a console form, shown once on the page its 303 See Other leads to
-- (src/console/flash.ts): sealed with a key derived from the operator's credential, which the
-- database never holds, bound to that credential, and kept a few minutes at most.
CREATE TABLE console_flashes (
  id text PRIMARY KEY,
  owner_hash text NOT NULL,
  sealed text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX console_flashes_owner_idx ON console_flashes (owner_hash, created_at);
CREATE INDEX console_flashes_expiry_idx ON console_flashes (expires_at);
