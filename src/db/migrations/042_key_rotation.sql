-- Keys that rotate without downtime (issue 32).
--
-- The token signing keys, by the `kid` of the tokens they sign. The current key is the newest one
-- not superseded; a superseded key keeps verifying until `verify_until` (the longest token it can
-- have signed has expired by then) and is then retired (its row deleted) automatically.
-- The key of before key ids (settings `jwt_secret`, sealed as it was) becomes the key `legacy`,
-- which verifies the tokens that carry no kid; the setting stays for instances not yet upgraded.
CREATE TABLE jwt_keys (
  id text PRIMARY KEY,
  secret_enc text NOT NULL,
  created_at bigint NOT NULL,
  superseded_at bigint,
  verify_until bigint
);
CREATE UNIQUE INDEX jwt_keys_one_current ON jwt_keys ((true)) WHERE superseded_at IS NULL;
INSERT INTO jwt_keys (id, secret_enc, created_at)
  SELECT 'legacy', value, 0 FROM settings WHERE name = 'jwt_secret';

-- A webhook secret rotated by its customer: the old secret keeps signing (a second signature on
-- each delivery) until `previous_secret_until`, an overlap the customer chose.
ALTER TABLE webhooks ADD COLUMN previous_secret_enc text;
ALTER TABLE webhooks ADD COLUMN previous_secret_until bigint;
