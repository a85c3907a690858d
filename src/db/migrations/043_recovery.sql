-- Recovery after a restore (issue 32): a restored database does not know the sends the rails made
-- after its backup was taken. While a recovery period is open no rail call that moves money is made
-- (src/reconcile/recovery.ts); it is opened by `svcpay restore` (or `svcpay recovery begin` after a
-- PostgreSQL restore) and ended once every rail is matched, or by an operator (audited).
CREATE TABLE recovery_periods (
  id bigserial PRIMARY KEY,
  -- 'restore' (svcpay restore), 'operator' (svcpay recovery begin / POST /admin/recovery/begin).
  reason text NOT NULL,
  began_at int8 NOT NULL,
  -- When the restored copy was taken, epoch ms; null when not known.
  backup_taken_at int8,
  -- What the last recovery check found (JSON: matched, adopted, orphans, rails not read).
  last_check jsonb,
  last_check_at int8,
  ended_at int8,
  -- 'automatic' or the operator's e-mail.
  ended_by text,
  end_note text
);
-- At most one period open at a time.
CREATE UNIQUE INDEX recovery_periods_one_open ON recovery_periods ((true)) WHERE ended_at IS NULL;
