-- Statements that write several things at once (a journal entry and its wallets, or a state change
-- together with its entry) check their own invariants with this function: a false condition raises,
-- and the error undoes the whole statement, as a failed check undoes a database transaction.
CREATE FUNCTION ledger_require(ok boolean, message text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'ledger invariant broken: %', message;
  END IF;
  RETURN true;
END
$$;
