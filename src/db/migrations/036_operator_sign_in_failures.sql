-- Failed operator sign-ins counted per email and client address (issue 28): five failures from one
-- address lock that email for that address only, so that knowing an operator's email is not enough
-- to keep the operator out from elsewhere. The email is the one typed, known or not, so that an
-- unknown email costs the same work as a known one. IPv6 addresses are kept as their /64.
-- operators.failed_attempts and operators.locked_until are no longer read or written.
CREATE TABLE operator_sign_in_failures (
  email text NOT NULL,
  client_net text NOT NULL,
  failed_attempts integer NOT NULL,
  locked_until bigint,
  updated_at bigint NOT NULL,
  PRIMARY KEY (email, client_net)
);
-- Rows quiet for a day are forgotten (src/operators/service.ts), found by this index.
CREATE INDEX operator_sign_in_failures_updated ON operator_sign_in_failures (updated_at);
