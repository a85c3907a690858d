-- Item matching (issue 18): the orphans each rail showed at the last reconciliation that could match
-- it, so that the operator alert is sent when orphans appear and when they clear, not at every run.
ALTER TABLE reconcile_brake ADD COLUMN orphans integer NOT NULL DEFAULT 0;
