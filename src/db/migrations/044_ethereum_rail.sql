-- USDT over Ethereum (issue 33): the rail `ethereum` joins the tables that name every rail, and the
-- sandbox Ethereum network keeps its payouts in sandbox_payouts beside TRON's and the bank's
-- (kind 'ethereum', the rail's name). Nothing else is needed: the payout itself is a transaction like any other.
ALTER TABLE sandbox_payouts DROP CONSTRAINT sandbox_payouts_kind_check;
ALTER TABLE sandbox_payouts ADD CONSTRAINT sandbox_payouts_kind_check CHECK (kind IN ('tron', 'bank', 'ethereum'));

ALTER TABLE reconcile_brake DROP CONSTRAINT reconcile_brake_rail_check;
ALTER TABLE reconcile_brake ADD CONSTRAINT reconcile_brake_rail_check
  CHECK (rail IN ('lightning', 'onchain', 'tron', 'bank', 'ethereum'));

ALTER TABLE sandbox_rail_movements DROP CONSTRAINT sandbox_rail_movements_rail_check;
ALTER TABLE sandbox_rail_movements ADD CONSTRAINT sandbox_rail_movements_rail_check
  CHECK (rail IN ('lightning', 'onchain', 'tron', 'bank', 'ethereum'));
