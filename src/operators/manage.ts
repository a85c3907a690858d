import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import { ApiError } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import type { Role } from './permissions.js'
import { forgetFailures } from './lockout.js'
import { revokeSessions } from './sessions.js'
import {
  lockOperator,
  newSetupSecret,
  sha256,
  toOperator,
  type Operator,
  type OperatorRow,
  type OperatorsDeps,
} from './operator.js'

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{1,63}$/

type Change = { before: Operator; after: Operator } | undefined

/**
 * Refuses a change that would leave no active admin able to sign in (the admin token remains,
 * but the team would have lost its console). Every admin row is locked, so that two such changes
 * at once cannot each see the other's admin as the one that remains.
 */
async function keepAnAdmin(q: Queryable, operatorId: string): Promise<void> {
  const { rows } = await q.query(
    sql`SELECT id FROM operators WHERE role = 'admin' AND status = 'active' AND id <> ${operatorId} ORDER BY id FOR UPDATE`,
  )
  if (rows.length === 0)
    throw new ApiError('invalid_state', 'This is the last active admin: make another operator admin first')
}

/** A new operator, pending until it uses the set-up secret returned (shown once). */
export async function create(
  deps: OperatorsDeps,
  { email, role }: { email: string; role: Role },
): Promise<{ operator: Operator; setupSecret: string; setupExpiresAt: number }> {
  const address = email.trim().toLowerCase()
  if (!EMAIL.test(address)) throw new ApiError('invalid_request', 'A valid email address is required')
  const id = newId('opr')
  const setupSecret = newSetupSecret()
  const createdAt = deps.now()
  const at = sql.param(createdAt)
  const setupExpiresAt = createdAt + deps.config.setupTtlMs
  const { rows } = await deps.db.query<OperatorRow>(
    sql`INSERT INTO operators (id, email, role, status, setup_hash, setup_expires_at, created_at, updated_at)
        VALUES (${id}, ${address}, ${role}, 'pending', ${sha256(setupSecret)}, ${setupExpiresAt}, ${at}, ${at})
        ON CONFLICT (email) DO NOTHING RETURNING *`,
  )
  if (!rows[0]) throw new ApiError('invalid_state', 'An operator with this email already exists')
  return { operator: toOperator(rows[0]), setupSecret, setupExpiresAt }
}

export async function list(deps: OperatorsDeps): Promise<Operator[]> {
  const { rows } = await deps.db.query<OperatorRow>(
    sql`SELECT * FROM operators ORDER BY created_at, id LIMIT 1000`,
  )
  return rows.map(toOperator)
}

export async function get(deps: OperatorsDeps, operatorId: string): Promise<Operator | undefined> {
  const { rows } = await deps.db.query<OperatorRow>(sql`SELECT * FROM operators WHERE id = ${operatorId}`)
  return rows[0] ? toOperator(rows[0]) : undefined
}

/** A new role, in force from the operator's next request; the last active admin keeps its role. */
export async function setRole(deps: OperatorsDeps, operatorId: string, role: Role): Promise<Change> {
  return deps.db.tx(async (q) => {
    const locked = await lockOperator(q, operatorId)
    if (!locked) return undefined
    const before = toOperator(locked)
    if (before.role === 'admin' && role !== 'admin' && before.status === 'active')
      await keepAnAdmin(q, operatorId)
    const { rows } = await q.query<OperatorRow>(
      sql`UPDATE operators SET role = ${role}, updated_at = ${deps.now()} WHERE id = ${operatorId} RETURNING *`,
    )
    return { before, after: toOperator(rows[0]!) }
  })
}

/** A disabled operator back: active if it had finished its set-up, else pending (reset it then). */
export async function enable(deps: OperatorsDeps, operatorId: string): Promise<Change> {
  return deps.db.tx(async (q) => {
    const locked = await lockOperator(q, operatorId)
    if (!locked) return undefined
    const before = toOperator(locked)
    if (before.status !== 'disabled') throw new ApiError('invalid_state', 'The operator is not disabled')
    // The lockout starts afresh: whatever was tried while disabled does not count.
    const { rows } = await q.query<OperatorRow>(
      sql`UPDATE operators SET status = CASE WHEN password_hash IS NOT NULL AND totp_secret_enc IS NOT NULL
                                            THEN 'active' ELSE 'pending' END,
                 disabled_at = NULL, updated_at = ${deps.now()}
           WHERE id = ${operatorId} RETURNING *`,
    )
    await forgetFailures(q, before.email)
    return { before, after: toOperator(rows[0]!) }
  })
}

/**
 * Forgets an active or pending operator's password and second factor, ends its sessions and
 * issues a new set-up secret: the operator sets both up again, as a new one does.
 */
export async function reset(
  deps: OperatorsDeps,
  operatorId: string,
): Promise<{ before: Operator; after: Operator; setupSecret: string; setupExpiresAt: number } | undefined> {
  const setupSecret = newSetupSecret()
  return deps.db.tx(async (q) => {
    const locked = await lockOperator(q, operatorId)
    if (!locked) return undefined
    const before = toOperator(locked)
    if (before.status === 'disabled')
      throw new ApiError('invalid_state', 'The operator is disabled: enable it first')
    if (before.role === 'admin' && before.status === 'active') await keepAnAdmin(q, operatorId)
    const at = deps.now()
    const setupExpiresAt = at + deps.config.setupTtlMs
    const { rows } = await q.query<OperatorRow>(
      sql`UPDATE operators SET status = 'pending', password_hash = NULL, totp_secret_enc = NULL,
                 setup_hash = ${sha256(setupSecret)}, setup_expires_at = ${setupExpiresAt}, updated_at = ${at}
           WHERE id = ${operatorId} RETURNING *`,
    )
    await forgetFailures(q, before.email)
    await revokeSessions(q, operatorId, at)
    return { before, after: toOperator(rows[0]!), setupSecret, setupExpiresAt }
  })
}

/** Disables an operator at once: its sessions end and its set-up secret, if any, is void. */
export async function disable(deps: OperatorsDeps, operatorId: string): Promise<Change> {
  return deps.db.tx(async (q) => {
    const locked = await lockOperator(q, operatorId)
    if (!locked) return undefined
    if (locked.role === 'admin' && locked.status === 'active') await keepAnAdmin(q, operatorId)
    const disabledAt = deps.now()
    const at = sql.param(disabledAt)
    const { rows: updated } = await q.query<OperatorRow>(
      sql`UPDATE operators SET status = 'disabled', disabled_at = COALESCE(disabled_at, ${at}), setup_hash = NULL,
                 updated_at = ${at}
           WHERE id = ${operatorId} RETURNING *`,
    )
    await revokeSessions(q, operatorId, disabledAt)
    return { before: toOperator(locked), after: toOperator(updated[0]!) }
  })
}
