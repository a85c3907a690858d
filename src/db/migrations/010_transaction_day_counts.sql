-- The list's pagination.total counts every match, and a long history made that count as slow as
-- the history was long. This table keeps how many transactions each account has per UTC day of
-- created_at, state, source method and destination method, so that a count over a window sums
-- at most one row per day and combination, plus the rows of the window's partial first and last
-- days read from the index (src/transactions/list.ts).
CREATE TABLE transaction_day_counts (
  account_id text NOT NULL,
  -- UTC days since the epoch: created_at / 86400000.
  day integer NOT NULL,
  state text NOT NULL,
  src_method text NOT NULL,
  dest_method text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (account_id, day, state, src_method, dest_method)
);

-- Kept by a trigger, so that every writer of transactions (flows, watchers, bulk imports) is
-- counted. The trigger is deferred to commit: its row locks on the counts are taken after every
-- wallet lock of the transaction (no lock-order cycles with the ledger), only for work that
-- commits, and held for the commit alone.
CREATE FUNCTION transaction_day_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE transaction_day_counts SET n = n - 1
     WHERE account_id = OLD.account_id AND day = (OLD.created_at / 86400000)::integer
       AND state = OLD.state AND src_method = OLD.src_method AND dest_method = OLD.dest_method;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO transaction_day_counts (account_id, day, state, src_method, dest_method, n)
    VALUES (NEW.account_id, (NEW.created_at / 86400000)::integer, NEW.state, NEW.src_method, NEW.dest_method, 1)
    ON CONFLICT (account_id, day, state, src_method, dest_method)
    DO UPDATE SET n = transaction_day_counts.n + 1;
  END IF;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER transaction_day_counts_track
  AFTER INSERT OR DELETE OR UPDATE OF account_id, created_at, state, src_method, dest_method ON transactions
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION transaction_day_counts_track();

-- Recounts one account's days from its transactions: for rows written with triggers off (a bulk
-- import under session_replication_role = replica), or to check the counts.
CREATE FUNCTION transaction_day_counts_refresh(p_account_id text) RETURNS void LANGUAGE sql AS $$
  DELETE FROM transaction_day_counts WHERE account_id = p_account_id;
  INSERT INTO transaction_day_counts (account_id, day, state, src_method, dest_method, n)
  SELECT account_id, (created_at / 86400000)::integer, state, src_method, dest_method, count(*)
    FROM transactions WHERE account_id = p_account_id
   GROUP BY 1, 2, 3, 4, 5;
$$;

-- The history written before this migration. The trigger above already exists, and this
-- migration's transaction holds the table lock it took, so no row is counted twice or missed.
INSERT INTO transaction_day_counts (account_id, day, state, src_method, dest_method, n)
SELECT account_id, (created_at / 86400000)::integer, state, src_method, dest_method, count(*)
  FROM transactions
 GROUP BY 1, 2, 3, 4, 5;
