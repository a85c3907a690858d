-- The TronGrid adapter keeps the signed transaction and its expiration with each send, written
-- before the first broadcast: after a restart the same transaction is broadcast again (it can be
-- included at most once), and one that never reached a block is known to have expired. Rows from
-- before have neither and keep the old behaviour: they answer with their hash.
ALTER TABLE tron_sends ADD COLUMN signed_tx text, ADD COLUMN expires_at bigint;
