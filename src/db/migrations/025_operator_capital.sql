-- Operator capital (issue 18): money the operator puts on a rail (funding the TRON hot wallet, the
-- float with the bank partner, a Lightning node's channels) or takes off it. Each row is booked as
-- one journal entry (kind 'operator_capital') between the rail's system account and the equity
-- account sys:capital:<ccy>; `reference` makes a repeated request book nothing twice.
CREATE TABLE operator_capital (
  id bigserial PRIMARY KEY,
  reference text NOT NULL UNIQUE,
  rail text NOT NULL,
  ccy text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('in', 'out')),
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  note text NOT NULL,
  operator_id text NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX operator_capital_created_idx ON operator_capital (created_at);
