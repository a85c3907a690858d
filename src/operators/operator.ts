import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Db, Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import type { SecretBox } from '../shared/secret-box.js'
import { writeAudit } from './audit.js'
import type { Role } from './permissions.js'
import type { OperatorsConfig } from './config.js'

/** Named operators: set-up, sign-in with password and TOTP, lockout, sessions, disabling. */
export interface Operator {
  id: string
  email: string
  role: Role
  status: 'pending' | 'active' | 'disabled'
  createdAt: number
  disabledAt: number | null
}

/** Who is acting: a signed-in operator, or `system` for the ADMIN_TOKEN. */
export interface Actor {
  operatorId: string
  email: string
  role: Role
  via: 'session' | 'token'
  /** sha256 of the session cookie (sessions only). */
  sessionHash?: string
  /** The session's CSRF token, derived from the cookie (sessions only). */
  csrfToken?: string
}

export interface RequestContext {
  clientIp: string | null
  requestId: string | null
}

export interface SignedIn {
  sessionToken: string
  csrfToken: string
  operator: Operator
  expiresAt: number
}

/** What every operation of the operators service is given; `create…` fills in the clock once. */
export interface OperatorsDeps {
  db: Db
  box: SecretBox
  config: OperatorsConfig
  now: () => number
}

/** A row of `operators` as the engines return it (bigint columns as numbers or text). */
export interface OperatorRow {
  id: string
  email: string
  role: Role
  status: Operator['status']
  password_hash: string | null
  totp_secret_enc: string | null
  totp_last_step: string | number | bigint | null
  setup_hash: string | null
  setup_expires_at: string | number | null
  created_at: string | number
  updated_at: string | number
  disabled_at: string | number | null
}

export const SYSTEM_OPERATOR_ID = 'system'
export const SECRET_BYTES = 32

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** A set-up secret: shown once, kept only as its sha256. */
export const newSetupSecret = (): string => 'setup_' + randomBytes(SECRET_BYTES).toString('base64url')

/** The CSRF token of a session: derived from its cookie, so it needs no storage of its own. */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('svcpay admin csrf v1').digest('base64url')
}

export function sameSecret(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest()
  const y = createHash('sha256').update(b).digest()
  return timingSafeEqual(x, y)
}

export function toOperator(r: OperatorRow): Operator {
  return {
    id: r.id,
    email: r.email,
    role: r.role,
    status: r.status,
    createdAt: Number(r.created_at),
    disabledAt: r.disabled_at === null ? null : Number(r.disabled_at),
  }
}

/** An audit record of a change to an operator, by that operator (its set-up, sign-in, lock). */
export const auditOperator = (
  deps: Pick<OperatorsDeps, 'now'>,
  q: Queryable,
  op: { id: string; email: string },
  action: string,
  ctx: RequestContext,
  after: unknown,
  before: unknown = null,
) =>
  writeAudit(
    q,
    {
      operatorId: op.id,
      operatorEmail: op.email,
      action,
      target: `operator:${op.id}`,
      before,
      after,
      ...ctx,
    },
    deps.now(),
  )

/** The operator's row, locked for the rest of the caller's transaction. */
export async function lockOperator(q: Queryable, operatorId: string): Promise<OperatorRow | undefined> {
  const { rows } = await q.query<OperatorRow>(
    sql`SELECT * FROM operators WHERE id = ${operatorId} FOR UPDATE`,
  )
  return rows[0]
}
