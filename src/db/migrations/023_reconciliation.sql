-- Reconciliation (issue 18). Money the sandbox networks moved outside the service: an operator's
-- withdrawal from the node, a top-up of the hot wallet, or drift made on purpose by the sandbox
-- control POST /admin/sandbox/drift/move. The sandbox rails count these rows in what they report
-- they hold (their reserves()); the ledger never sees them. Empty and unused with real rails.
CREATE TABLE sandbox_rail_movements (
  id bigserial PRIMARY KEY,
  rail text NOT NULL CHECK (rail IN ('lightning', 'onchain', 'tron', 'bank')),
  ccy text NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor <> 0),
  note text NOT NULL DEFAULT '',
  created_at bigint NOT NULL
);
CREATE INDEX sandbox_rail_movements_rail_idx ON sandbox_rail_movements (rail, ccy);
