import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import { lockoutMs } from './config.js'
import { auditOperator, type OperatorsDeps, type RequestContext } from './operator.js'

// Failed sign-ins of an email from an address are counted afresh after this long without one.
const FAILURES_FORGOTTEN_AFTER_MS = 24 * 3600_000

/** Until when sign-ins of this email from this client network are refused (null: not locked). */
export async function lockedUntil(q: Queryable, email: string, net: string): Promise<number | null> {
  const { rows } = await q.query<{ locked_until: string | number | null }>(
    sql`SELECT locked_until FROM operator_sign_in_failures WHERE email = ${email} AND client_net = ${net}`,
  )
  const until = rows[0]?.locked_until
  return until == null ? null : Number(until)
}

/**
 * One more failed sign-in for this email from this address (counted afresh after a day without
 * one), and the lock it earns. The same statements run whether the email is an operator's or not;
 * only a known operator's lock is written to the audit trail.
 */
export async function countFailure(
  deps: Pick<OperatorsDeps, 'config' | 'now'>,
  q: Queryable,
  email: string,
  net: string,
  at: number,
  operator: { id: string; email: string } | undefined,
  ctx: RequestContext,
): Promise<void> {
  const stamp = sql.param(at)
  const { rows } = await q.query<{ failed_attempts: string | number }>(
    sql`INSERT INTO operator_sign_in_failures (email, client_net, failed_attempts, locked_until, updated_at)
       VALUES (${email}, ${net}, 1, NULL, ${stamp})
       ON CONFLICT (email, client_net) DO UPDATE SET
         failed_attempts = CASE WHEN operator_sign_in_failures.updated_at < ${at - FAILURES_FORGOTTEN_AFTER_MS} THEN 1
                                ELSE operator_sign_in_failures.failed_attempts + 1 END,
         updated_at = ${stamp}
       RETURNING failed_attempts`,
  )
  const failures = Number(rows[0]!.failed_attempts)
  const lockMs = lockoutMs(failures, deps.config)
  await q.query(
    sql`UPDATE operator_sign_in_failures SET locked_until = ${lockMs > 0 ? at + lockMs : null}
         WHERE email = ${email} AND client_net = ${net}`,
  )
  // Rows of addresses quiet for a day go, so the table does not grow with every address tried.
  await q.query(
    sql`DELETE FROM operator_sign_in_failures WHERE updated_at < ${at - FAILURES_FORGOTTEN_AFTER_MS}`,
  )
  if (lockMs > 0 && operator)
    await auditOperator(deps, q, operator, 'operator.locked', ctx, {
      failedAttempts: failures,
      lockedUntil: at + lockMs,
    })
}

/** This address's failed sign-ins of this email are forgotten (a successful sign-in from it). */
export async function forgetFailuresFrom(q: Queryable, email: string, net: string): Promise<void> {
  await q.query(sql`DELETE FROM operator_sign_in_failures WHERE email = ${email} AND client_net = ${net}`)
}

/** Every address's failed sign-ins of this email are forgotten (enable, reset, a finished set-up). */
export async function forgetFailures(q: Queryable, email: string): Promise<void> {
  await q.query(sql`DELETE FROM operator_sign_in_failures WHERE email = ${email}`)
}
