-- The reconciliation brake (issue 18, RECONCILE_HALT_SENDS): per rail, how many reconciliations in a
-- row found a deficit, and since when sends on it are paused. Shared by every instance: the one
-- that reconciles writes it, the ones that take send requests read it.
CREATE TABLE reconcile_brake (
  rail text PRIMARY KEY CHECK (rail IN ('lightning', 'onchain', 'tron', 'bank')),
  deficit_readings integer NOT NULL DEFAULT 0,
  paused_at bigint,
  updated_at bigint NOT NULL
);
