-- Every transaction begins as a quote, and keeping the per-day counts of quotes cost each quote
-- two counting statements (one when it was made, one when it left the state) for a state that lasts
-- minutes. The counts now leave quotes out, and the triggers do not even fire for a row that is and
-- stays quoted; the list counts its quotes from the rows through this partial index, which holds
-- only the quotes not yet confirmed, cancelled or expired (src/transactions/list.ts).
CREATE INDEX transactions_quoted_idx ON transactions (account_id, created_at) WHERE state = 'quoted';

CREATE OR REPLACE FUNCTION transaction_day_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state <> 'quoted' THEN
    UPDATE transaction_day_counts SET n = n - 1
     WHERE account_id = OLD.account_id AND day = (OLD.created_at / 86400000)::integer
       AND state = OLD.state AND src_method = OLD.src_method AND dest_method = OLD.dest_method;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state <> 'quoted' THEN
    INSERT INTO transaction_day_counts (account_id, day, state, src_method, dest_method, n)
    VALUES (NEW.account_id, (NEW.created_at / 86400000)::integer, NEW.state, NEW.src_method, NEW.dest_method, 1)
    ON CONFLICT (account_id, day, state, src_method, dest_method)
    DO UPDATE SET n = transaction_day_counts.n + 1;
  END IF;
  RETURN NULL;
END
$$;

-- One trigger per kind of change, so that each can say when it has nothing to do.
DROP TRIGGER transaction_day_counts_track ON transactions;
CREATE CONSTRAINT TRIGGER transaction_day_counts_insert
  AFTER INSERT ON transactions
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.state <> 'quoted') EXECUTE FUNCTION transaction_day_counts_track();
CREATE CONSTRAINT TRIGGER transaction_day_counts_update
  AFTER UPDATE OF account_id, created_at, state, src_method, dest_method ON transactions
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (OLD.state <> 'quoted' OR NEW.state <> 'quoted') EXECUTE FUNCTION transaction_day_counts_track();
CREATE CONSTRAINT TRIGGER transaction_day_counts_delete
  AFTER DELETE ON transactions
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (OLD.state <> 'quoted') EXECUTE FUNCTION transaction_day_counts_track();

CREATE OR REPLACE FUNCTION transaction_day_counts_refresh(p_account_id text) RETURNS void LANGUAGE sql AS $$
  DELETE FROM transaction_day_counts WHERE account_id = p_account_id;
  INSERT INTO transaction_day_counts (account_id, day, state, src_method, dest_method, n)
  SELECT account_id, (created_at / 86400000)::integer, state, src_method, dest_method, count(*)
    FROM transactions WHERE account_id = p_account_id AND state <> 'quoted'
   GROUP BY 1, 2, 3, 4, 5;
$$;

DELETE FROM transaction_day_counts WHERE state = 'quoted';
