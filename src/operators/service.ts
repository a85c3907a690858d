import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Db, Queryable } from '../db/db.js'
import type { SecretBox } from '../shared/secret-box.js'
import { ApiError } from '../shared/errors.js'
import { clientNet } from '../shared/client-net.js'
import { ConfigError } from '../config/config.js'
import { newId } from '../shared/ids.js'
import { writeAudit } from '../admin/audit.js'
import type { Role } from '../admin/permissions.js'
import {
  DECOY_HASH,
  hashPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  verifyPassword,
} from './password.js'
import { fromBase32, matchTotp, newTotpSecret, base32, otpauthUri } from './totp.js'

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

export interface OperatorsConfig {
  sessionIdleMs: number
  sessionMaxMs: number
  setupTtlMs: number
  /** Failed sign-ins before the first lock, the first lock's length, and the longest lock. */
  lockAfterFailures: number
  lockBaseMs: number
  lockMaxMs: number
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

export interface OperatorsService {
  create(input: {
    email: string
    role: Role
  }): Promise<{ operator: Operator; setupSecret: string; setupExpiresAt: number }>
  list(): Promise<Operator[]>
  get(operatorId: string): Promise<Operator | undefined>
  setupBegin(
    setupSecret: string,
    ctx: RequestContext,
  ): Promise<{ operatorId: string; email: string; totpSecret: string; otpauthUri: string }>
  setupFinish(
    input: { setupSecret: string; password: string; code: string },
    ctx: RequestContext,
  ): Promise<Operator>
  signIn(input: { email: string; password: string; code: string }, ctx: RequestContext): Promise<SignedIn>
  /** The actor of a live session cookie, or undefined; a use moves the idle time-out on. */
  session(sessionToken: string): Promise<Actor | undefined>
  signOut(sessionHash: string): Promise<boolean>
  /** Ends every session of an operator; returns how many were live. */
  revokeAll(operatorId: string): Promise<number>
  disable(operatorId: string): Promise<{ before: Operator; after: Operator } | undefined>
  /** A new role, in force from the operator's next request; the last active admin keeps its role. */
  setRole(operatorId: string, role: Role): Promise<{ before: Operator; after: Operator } | undefined>
  /** A disabled operator back: active if it had finished its set-up, else pending (reset it then). */
  enable(operatorId: string): Promise<{ before: Operator; after: Operator } | undefined>
  /**
   * Forgets an active or pending operator's password and second factor, ends its sessions and
   * issues a new set-up secret: the operator sets both up again, as a new one does.
   */
  reset(
    operatorId: string,
  ): Promise<{ before: Operator; after: Operator; setupSecret: string; setupExpiresAt: number } | undefined>
}

export const SYSTEM_OPERATOR_ID = 'system'
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{1,63}$/
// last_seen_at is written at most this often, so that a busy console does not write on every read.
const TOUCH_EVERY_MS = 15_000
const SECRET_BYTES = 32
const FAILED = 'Email, password or code not accepted'
// Failed sign-ins of an email from an address are counted afresh after this long without one.
const FAILURES_FORGOTTEN_AFTER_MS = 24 * 3600_000

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** The CSRF token of a session: derived from its cookie, so it needs no storage of its own. */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('svcpay admin csrf v1').digest('base64url')
}

export function sameSecret(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest()
  const y = createHash('sha256').update(b).digest()
  return timingSafeEqual(x, y)
}

export function operatorsConfigFromEnv(env: Record<string, string | undefined>): OperatorsConfig {
  const seconds = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback * 1000
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(`${name}: expected a whole number of seconds from ${min} to ${max}, got "${raw}"`)
    return n * 1000
  }
  return {
    sessionIdleMs: seconds('ADMIN_SESSION_IDLE_S', 30 * 60, 60, 24 * 3600),
    sessionMaxMs: seconds('ADMIN_SESSION_MAX_S', 12 * 3600, 300, 7 * 24 * 3600),
    setupTtlMs: seconds('OPERATOR_SETUP_TTL_S', 24 * 3600, 300, 7 * 24 * 3600),
    lockAfterFailures: 5,
    lockBaseMs: 30_000,
    lockMaxMs: 3600_000,
  }
}

/** How long an operator is locked out after `failures` failed sign-ins in a row (0: not locked). */
export function lockoutMs(failures: number, config: OperatorsConfig): number {
  if (failures < config.lockAfterFailures) return 0
  const doublings = Math.min(failures - config.lockAfterFailures, 20)
  return Math.min(config.lockBaseMs * 2 ** doublings, config.lockMaxMs)
}

function toOperator(r: any): Operator {
  return {
    id: r.id,
    email: r.email,
    role: r.role,
    status: r.status,
    createdAt: Number(r.created_at),
    disabledAt: r.disabled_at === null ? null : Number(r.disabled_at),
  }
}

export function createOperatorsService(deps: {
  db: Db
  box: SecretBox
  config: OperatorsConfig
  now?: () => number
}): OperatorsService {
  const { db, box, config } = deps
  const now = deps.now ?? Date.now

  const audit = (
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
      now(),
    )

  /**
   * One more failed sign-in for this email from this address (counted afresh after a day without
   * one), and the lock it earns. The same statements run whether the email is an operator's or not;
   * only a known operator's lock is written to the audit trail.
   */
  async function countFailure(
    q: Queryable,
    email: string,
    net: string,
    at: number,
    operator: { id: string; email: string } | undefined,
    ctx: RequestContext,
  ): Promise<void> {
    const { rows } = await q.query(
      `INSERT INTO operator_sign_in_failures (email, client_net, failed_attempts, locked_until, updated_at)
       VALUES ($1, $2, 1, NULL, $3)
       ON CONFLICT (email, client_net) DO UPDATE SET
         failed_attempts = CASE WHEN operator_sign_in_failures.updated_at < $4 THEN 1
                                ELSE operator_sign_in_failures.failed_attempts + 1 END,
         updated_at = $3
       RETURNING failed_attempts`,
      [email, net, at, at - FAILURES_FORGOTTEN_AFTER_MS],
    )
    const failures = Number(rows[0].failed_attempts)
    const lockMs = lockoutMs(failures, config)
    await q.query(
      'UPDATE operator_sign_in_failures SET locked_until = $3 WHERE email = $1 AND client_net = $2',
      [email, net, lockMs > 0 ? at + lockMs : null],
    )
    // Rows of addresses quiet for a day go, so the table does not grow with every address tried.
    await q.query('DELETE FROM operator_sign_in_failures WHERE updated_at < $1', [
      at - FAILURES_FORGOTTEN_AFTER_MS,
    ])
    if (lockMs > 0 && operator)
      await audit(q, operator, 'operator.locked', ctx, { failedAttempts: failures, lockedUntil: at + lockMs })
  }

  /** Every address's failed sign-ins of this email are forgotten (enable, reset, a finished set-up). */
  async function forgetFailures(q: Queryable, email: string): Promise<void> {
    await q.query('DELETE FROM operator_sign_in_failures WHERE email = $1', [email])
  }

  async function lockOperator(q: Queryable, operatorId: string): Promise<Operator | undefined> {
    const { rows } = await q.query('SELECT * FROM operators WHERE id = $1 FOR UPDATE', [operatorId])
    return rows[0] ? toOperator(rows[0]) : undefined
  }

  /**
   * Refuses a change that would leave no active admin able to sign in (the admin token remains,
   * but the team would have lost its console). Every admin row is locked, so that two such changes
   * at once cannot each see the other's admin as the one that remains.
   */
  async function keepAnAdmin(q: Queryable, operatorId: string): Promise<void> {
    const { rows } = await q.query(
      "SELECT id FROM operators WHERE role = 'admin' AND status = 'active' AND id <> $1 ORDER BY id FOR UPDATE",
      [operatorId],
    )
    if (rows.length === 0)
      throw new ApiError('invalid_state', 'This is the last active admin: make another operator admin first')
  }

  async function pendingBySetup(q: Queryable, setupSecret: string, lock: boolean): Promise<any> {
    const { rows } = await q.query(
      `SELECT * FROM operators WHERE setup_hash = $1 AND status = 'pending' AND setup_expires_at > $2 ${lock ? 'FOR UPDATE' : ''}`,
      [sha256(setupSecret), now()],
    )
    if (!rows[0]) throw new ApiError('unauthorized', 'The set-up secret is unknown, used or expired')
    return rows[0]
  }

  return {
    async create({ email, role }) {
      const address = email.trim().toLowerCase()
      if (!EMAIL.test(address)) throw new ApiError('invalid_request', 'A valid email address is required')
      const id = newId('opr')
      const setupSecret = 'setup_' + randomBytes(SECRET_BYTES).toString('base64url')
      const at = now()
      const setupExpiresAt = at + config.setupTtlMs
      const { rows } = await db.query(
        `INSERT INTO operators (id, email, role, status, setup_hash, setup_expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, 'pending', $4, $5, $6, $6) ON CONFLICT (email) DO NOTHING RETURNING *`,
        [id, address, role, sha256(setupSecret), setupExpiresAt, at],
      )
      if (!rows[0]) throw new ApiError('invalid_state', 'An operator with this email already exists')
      return { operator: toOperator(rows[0]), setupSecret, setupExpiresAt }
    },

    async list() {
      const { rows } = await db.query('SELECT * FROM operators ORDER BY created_at, id LIMIT 1000')
      return rows.map(toOperator)
    },

    async get(operatorId) {
      const { rows } = await db.query('SELECT * FROM operators WHERE id = $1', [operatorId])
      return rows[0] ? toOperator(rows[0]) : undefined
    },

    async setupBegin(setupSecret, ctx) {
      const secret = newTotpSecret()
      return db.tx(async (q) => {
        const row = await pendingBySetup(q, setupSecret, true)
        // A new secret each time: only the last one shown is enrolled.
        await q.query('UPDATE operators SET totp_secret_enc = $2, updated_at = $3 WHERE id = $1', [
          row.id,
          box.seal(base32(secret)),
          now(),
        ])
        await audit(q, row, 'operator.setup_begin', ctx, { totpEnrolment: 'new secret issued' })
        return {
          operatorId: row.id,
          email: row.email,
          totpSecret: base32(secret),
          otpauthUri: otpauthUri(secret, row.email),
        }
      })
    },

    async setupFinish({ setupSecret, password, code }, ctx) {
      if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH)
        throw new ApiError(
          'invalid_request',
          `The password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`,
        )
      const passwordHash = await hashPassword(password)
      return db.tx(async (q) => {
        const row = await pendingBySetup(q, setupSecret, true)
        if (!row.totp_secret_enc)
          throw new ApiError('invalid_state', 'Begin the set-up first to receive the TOTP secret')
        const step = matchTotp(fromBase32(box.open(row.totp_secret_enc)), code, now())
        if (step === undefined)
          throw new ApiError(
            'unauthorized',
            'The TOTP code is wrong: check the authenticator app and the clock',
          )
        const { rows } = await q.query(
          `UPDATE operators SET status = 'active', password_hash = $2, totp_last_step = $3, setup_hash = NULL,
                  setup_expires_at = NULL, updated_at = $4
            WHERE id = $1 RETURNING *`,
          [row.id, passwordHash, step, now()],
        )
        await forgetFailures(q, row.email)
        const operator = toOperator(rows[0])
        await audit(q, operator, 'operator.setup', ctx, { status: 'active' }, { status: 'pending' })
        return operator
      })
    },

    async signIn({ email, password, code }, ctx) {
      const address = email.trim().toLowerCase()
      const net = clientNet(ctx.clientIp)
      const { rows: found } = await db.query('SELECT * FROM operators WHERE email = $1', [address])
      const row = found[0]
      // The password is checked whatever happens next, so that an unknown email takes as long.
      const passwordOk = await verifyPassword(password, row?.password_hash ?? DECOY_HASH)
      const usable = row?.status === 'active' && row.totp_secret_enc ? row : undefined
      const step =
        usable && passwordOk
          ? matchTotp(fromBase32(box.open(usable.totp_secret_enc)), code, now())
          : undefined
      // Known or not, active or not, every sign-in runs the same statements from here: the lock and
      // the count are kept per email typed and client address, not per operator.
      const result = await db.tx(async (q) => {
        const at = now()
        const { rows } = await q.query('SELECT * FROM operators WHERE email = $1 FOR UPDATE', [address])
        const current = rows[0]
        const { rows: failed } = await q.query(
          'SELECT locked_until FROM operator_sign_in_failures WHERE email = $1 AND client_net = $2',
          [address, net],
        )
        // While this address is locked for this email, nothing is checked and nothing is counted.
        if (failed[0]?.locked_until != null && Number(failed[0].locked_until) > at) return undefined
        // A code of a step already used (or older) is a replay, and fails like a wrong code.
        const admitted =
          usable !== undefined &&
          current?.id === usable.id &&
          current.status === 'active' &&
          passwordOk &&
          step !== undefined &&
          (current.totp_last_step === null || step > BigInt(current.totp_last_step))
        if (!admitted) {
          await countFailure(q, address, net, at, current, ctx)
          return undefined
        }
        await q.query('UPDATE operators SET totp_last_step = $2, updated_at = $3 WHERE id = $1', [
          current.id,
          step,
          at,
        ])
        // A success forgets this address's failures; other addresses keep theirs.
        await q.query('DELETE FROM operator_sign_in_failures WHERE email = $1 AND client_net = $2', [
          address,
          net,
        ])
        const sessionToken = randomBytes(SECRET_BYTES).toString('base64url')
        const expiresAt = at + config.sessionMaxMs
        await q.query(
          `INSERT INTO operator_sessions (id_hash, operator_id, created_at, last_seen_at, expires_at, client_ip)
           VALUES ($1, $2, $3, $3, $4, $5)`,
          [sha256(sessionToken), current.id, at, expiresAt, ctx.clientIp],
        )
        const operator = toOperator(current)
        await audit(q, operator, 'operator.sign_in', ctx, { expiresAt })
        return { sessionToken, csrfToken: csrfTokenFor(sessionToken), operator, expiresAt }
      })
      if (!result) throw new ApiError('unauthorized', FAILED)
      return result
    },

    async session(sessionToken) {
      if (!/^[A-Za-z0-9_-]{43}$/.test(sessionToken)) return undefined
      const idHash = sha256(sessionToken)
      const at = now()
      // The operator's status is read with the session every time: disabling stops it at once.
      const { rows } = await db.query(
        `SELECT s.last_seen_at, o.id, o.email, o.role FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
          WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND o.status = 'active'
            AND s.expires_at > $2 AND s.last_seen_at > $3`,
        [idHash, at, at - config.sessionIdleMs],
      )
      const r = rows[0]
      if (!r) return undefined
      if (at - Number(r.last_seen_at) >= TOUCH_EVERY_MS) {
        await db.query(
          'UPDATE operator_sessions SET last_seen_at = $2 WHERE id_hash = $1 AND last_seen_at < $2',
          [idHash, at],
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
    },

    async signOut(sessionHash) {
      const r = await db.query(
        'UPDATE operator_sessions SET revoked_at = $2 WHERE id_hash = $1 AND revoked_at IS NULL',
        [sessionHash, now()],
      )
      return r.rowCount > 0
    },

    async revokeAll(operatorId) {
      const r = await db.query(
        'UPDATE operator_sessions SET revoked_at = $2 WHERE operator_id = $1 AND revoked_at IS NULL',
        [operatorId, now()],
      )
      return r.rowCount
    },

    async setRole(operatorId, role) {
      return db.tx(async (q) => {
        const before = await lockOperator(q, operatorId)
        if (!before) return undefined
        if (before.role === 'admin' && role !== 'admin' && before.status === 'active')
          await keepAnAdmin(q, operatorId)
        const { rows } = await q.query(
          'UPDATE operators SET role = $2, updated_at = $3 WHERE id = $1 RETURNING *',
          [operatorId, role, now()],
        )
        return { before, after: toOperator(rows[0]) }
      })
    },

    async enable(operatorId) {
      return db.tx(async (q) => {
        const before = await lockOperator(q, operatorId)
        if (!before) return undefined
        if (before.status !== 'disabled') throw new ApiError('invalid_state', 'The operator is not disabled')
        // The lockout starts afresh: whatever was tried while disabled does not count.
        const { rows } = await q.query(
          `UPDATE operators SET status = CASE WHEN password_hash IS NOT NULL AND totp_secret_enc IS NOT NULL
                                             THEN 'active' ELSE 'pending' END,
                  disabled_at = NULL, updated_at = $2
            WHERE id = $1 RETURNING *`,
          [operatorId, now()],
        )
        await forgetFailures(q, before.email)
        return { before, after: toOperator(rows[0]) }
      })
    },

    async reset(operatorId) {
      const setupSecret = 'setup_' + randomBytes(SECRET_BYTES).toString('base64url')
      return db.tx(async (q) => {
        const before = await lockOperator(q, operatorId)
        if (!before) return undefined
        if (before.status === 'disabled')
          throw new ApiError('invalid_state', 'The operator is disabled: enable it first')
        if (before.role === 'admin' && before.status === 'active') await keepAnAdmin(q, operatorId)
        const at = now()
        const setupExpiresAt = at + config.setupTtlMs
        const { rows } = await q.query(
          `UPDATE operators SET status = 'pending', password_hash = NULL, totp_secret_enc = NULL,
                  setup_hash = $2, setup_expires_at = $3, updated_at = $4
            WHERE id = $1 RETURNING *`,
          [operatorId, sha256(setupSecret), setupExpiresAt, at],
        )
        await forgetFailures(q, before.email)
        await q.query(
          'UPDATE operator_sessions SET revoked_at = $2 WHERE operator_id = $1 AND revoked_at IS NULL',
          [operatorId, at],
        )
        return { before, after: toOperator(rows[0]), setupSecret, setupExpiresAt }
      })
    },

    async disable(operatorId) {
      return db.tx(async (q) => {
        const { rows } = await q.query('SELECT * FROM operators WHERE id = $1 FOR UPDATE', [operatorId])
        if (!rows[0]) return undefined
        if (rows[0].role === 'admin' && rows[0].status === 'active') await keepAnAdmin(q, operatorId)
        const at = now()
        const { rows: updated } = await q.query(
          `UPDATE operators SET status = 'disabled', disabled_at = COALESCE(disabled_at, $2), setup_hash = NULL, updated_at = $2
            WHERE id = $1 RETURNING *`,
          [operatorId, at],
        )
        await q.query(
          'UPDATE operator_sessions SET revoked_at = $2 WHERE operator_id = $1 AND revoked_at IS NULL',
          [operatorId, at],
        )
        return { before: toOperator(rows[0]), after: toOperator(updated[0]) }
      })
    },
  }
}
