import { randomBytes } from 'node:crypto'
import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import type { Role } from './permissions.js'
import { csrfTokenFor, SECRET_BYTES, sha256, type Actor, type OperatorsDeps } from './operator.js'

// last_seen_at is written at most this often, so that a busy console does not write on every read.
const TOUCH_EVERY_MS = 15_000

/** A new session of an operator, from `at`; its cookie is returned and only its hash kept. */
export async function openSession(
  deps: Pick<OperatorsDeps, 'config'>,
  q: Queryable,
  operatorId: string,
  at: number,
  clientIp: string | null,
): Promise<{ sessionToken: string; expiresAt: number }> {
  const sessionToken = randomBytes(SECRET_BYTES).toString('base64url')
  const expiresAt = at + deps.config.sessionMaxMs
  const stamp = sql.param(at)
  await q.query(
    sql`INSERT INTO operator_sessions (id_hash, operator_id, created_at, last_seen_at, expires_at, client_ip)
        VALUES (${sha256(sessionToken)}, ${operatorId}, ${stamp}, ${stamp}, ${expiresAt}, ${clientIp})`,
  )
  return { sessionToken, expiresAt }
}

/** The actor of a live session cookie, or undefined; a use moves the idle time-out on. */
export async function session(deps: OperatorsDeps, sessionToken: string): Promise<Actor | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(sessionToken)) return undefined
  const idHash = sha256(sessionToken)
  const at = deps.now()
  // The operator's status is read with the session every time: disabling stops it at once.
  const { rows } = await deps.db.query<{
    last_seen_at: string | number
    id: string
    email: string
    role: Role
  }>(
    sql`SELECT s.last_seen_at, o.id, o.email, o.role FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
         WHERE s.id_hash = ${idHash} AND s.revoked_at IS NULL AND o.status = 'active'
           AND s.expires_at > ${at} AND s.last_seen_at > ${at - deps.config.sessionIdleMs}`,
  )
  const r = rows[0]
  if (!r) return undefined
  if (at - Number(r.last_seen_at) >= TOUCH_EVERY_MS) {
    const stamp = sql.param(at)
    await deps.db.query(
      sql`UPDATE operator_sessions SET last_seen_at = ${stamp} WHERE id_hash = ${idHash} AND last_seen_at < ${stamp}`,
    )
  }
  return {
    operatorId: r.id,
    email: r.email,
    role: r.role,
    via: 'session',
    sessionHash: idHash,
    csrfToken: csrfTokenFor(sessionToken),
  }
}

export async function signOut(deps: OperatorsDeps, sessionHash: string): Promise<boolean> {
  const r = await deps.db.query(
    sql`UPDATE operator_sessions SET revoked_at = ${deps.now()} WHERE id_hash = ${sessionHash} AND revoked_at IS NULL`,
  )
  return r.rowCount > 0
}

/** Ends every live session of an operator at `at`; returns how many there were. */
export async function revokeSessions(q: Queryable, operatorId: string, at: number): Promise<number> {
  const r = await q.query(
    sql`UPDATE operator_sessions SET revoked_at = ${at} WHERE operator_id = ${operatorId} AND revoked_at IS NULL`,
  )
  return r.rowCount
}

/** Ends every session of an operator; returns how many were live. */
export const revokeAll = (deps: OperatorsDeps, operatorId: string): Promise<number> =>
  revokeSessions(deps.db, operatorId, deps.now())
