-- Named operators of the console and the operator API (issue 19). An operator is created by an
-- admin with a one-time set-up secret (only its sha256 is kept); the operator then chooses a
-- password (kept as scrypt with its own salt and parameters) and enrols a TOTP secret (sealed with
-- the master key, as API secrets are). Nothing here can sign anyone in by being read.
CREATE TABLE operators (
  id text PRIMARY KEY,
  email text NOT NULL UNIQUE,
  role text NOT NULL CHECK (role IN ('viewer', 'support', 'finance', 'compliance', 'admin')),
  status text NOT NULL CHECK (status IN ('pending', 'active', 'disabled')),
  password_hash text,
  totp_secret_enc text,
  -- The last TOTP time step accepted: a code of that step or an earlier one is never accepted again.
  totp_last_step bigint,
  setup_hash text,
  setup_expires_at bigint,
  failed_attempts integer NOT NULL DEFAULT 0,
  locked_until bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  disabled_at bigint
);

-- Sessions are found by the sha256 of the cookie's value; the value itself is never stored.
CREATE TABLE operator_sessions (
  id_hash text PRIMARY KEY,
  operator_id text NOT NULL REFERENCES operators (id),
  created_at bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  revoked_at bigint,
  client_ip text
);
CREATE INDEX operator_sessions_live ON operator_sessions (operator_id) WHERE revoked_at IS NULL;

-- The audit trail of every state-changing admin action, written in the same database transaction
-- as the change it records. `operator_id` is 'system' for the ADMIN_TOKEN.
CREATE TABLE admin_audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at bigint NOT NULL,
  operator_id text NOT NULL,
  operator_email text NOT NULL,
  action text NOT NULL,
  target text,
  before jsonb,
  after jsonb,
  client_ip text,
  request_id text
);
CREATE INDEX admin_audit_at ON admin_audit (at, id);
CREATE INDEX admin_audit_operator ON admin_audit (operator_id, id);
CREATE INDEX admin_audit_action ON admin_audit (action, id);
CREATE INDEX admin_audit_target ON admin_audit (target, id);

-- Append-only, enforced by the database as the ledger's tables are (013): a row once written is
-- never changed or removed, whoever asks.
CREATE FUNCTION admin_audit_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rows of % are never changed or deleted: the audit trail only grows', TG_TABLE_NAME;
END
$$;

CREATE TRIGGER admin_audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON admin_audit
  FOR EACH STATEMENT EXECUTE FUNCTION admin_audit_is_append_only();
