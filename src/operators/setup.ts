import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import { ApiError } from '../shared/errors.js'
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './password.js'
import { base32, fromBase32, matchTotp, newTotpSecret, otpauthUri } from './totp.js'
import { forgetFailures } from './lockout.js'
import {
  auditOperator,
  sha256,
  toOperator,
  type Operator,
  type OperatorRow,
  type OperatorsDeps,
  type RequestContext,
} from './operator.js'

/** The pending operator a set-up secret belongs to, while it is valid; else a 401. */
async function pendingBySetup(
  deps: Pick<OperatorsDeps, 'now'>,
  q: Queryable,
  setupSecret: string,
  lock: boolean,
): Promise<OperatorRow> {
  const { rows } = await q.query<OperatorRow>(
    sql`SELECT * FROM operators WHERE setup_hash = ${sha256(setupSecret)} AND status = 'pending'
         AND setup_expires_at > ${deps.now()} ${lock ? sql`FOR UPDATE` : sql.empty}`,
  )
  if (!rows[0]) throw new ApiError('unauthorized', 'The set-up secret is unknown, used or expired')
  return rows[0]
}

/** The first step of a set-up: a new TOTP secret for the operator's authenticator. */
export async function setupBegin(
  deps: OperatorsDeps,
  setupSecret: string,
  ctx: RequestContext,
): Promise<{ operatorId: string; email: string; totpSecret: string; otpauthUri: string }> {
  const secret = newTotpSecret()
  return deps.db.tx(async (q) => {
    const row = await pendingBySetup(deps, q, setupSecret, true)
    // A new secret each time: only the last one shown is enrolled.
    await q.query(
      sql`UPDATE operators SET totp_secret_enc = ${deps.box.seal(base32(secret))}, updated_at = ${deps.now()}
           WHERE id = ${row.id}`,
    )
    await auditOperator(deps, q, row, 'operator.setup_begin', ctx, { totpEnrolment: 'new secret issued' })
    return {
      operatorId: row.id,
      email: row.email,
      totpSecret: base32(secret),
      otpauthUri: otpauthUri(secret, row.email),
    }
  })
}

/** The last step of a set-up: a password and a first TOTP code make the operator active. */
export async function setupFinish(
  deps: OperatorsDeps,
  { setupSecret, password, code }: { setupSecret: string; password: string; code: string },
  ctx: RequestContext,
): Promise<Operator> {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH)
    throw new ApiError(
      'invalid_request',
      `The password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`,
    )
  const passwordHash = await hashPassword(password)
  return deps.db.tx(async (q) => {
    const row = await pendingBySetup(deps, q, setupSecret, true)
    if (!row.totp_secret_enc)
      throw new ApiError('invalid_state', 'Begin the set-up first to receive the TOTP secret')
    const step = matchTotp(fromBase32(deps.box.open(row.totp_secret_enc)), code, deps.now())
    if (step === undefined)
      throw new ApiError('unauthorized', 'The TOTP code is wrong: check the authenticator app and the clock')
    const { rows } = await q.query<OperatorRow>(
      sql`UPDATE operators SET status = 'active', password_hash = ${passwordHash}, totp_last_step = ${step},
                setup_hash = NULL, setup_expires_at = NULL, updated_at = ${deps.now()}
           WHERE id = ${row.id} RETURNING *`,
    )
    await forgetFailures(q, row.email)
    const operator = toOperator(rows[0]!)
    await auditOperator(deps, q, operator, 'operator.setup', ctx, { status: 'active' }, { status: 'pending' })
    return operator
  })
}
