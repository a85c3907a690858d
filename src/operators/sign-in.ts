import { sql } from '../db/sql.js'
import { ApiError } from '../shared/errors.js'
import { clientNet } from '../shared/client-net.js'
import { DECOY_HASH, verifyPassword } from './password.js'
import { fromBase32, matchTotp } from './totp.js'
import { countFailure, forgetFailuresFrom, lockedUntil } from './lockout.js'
import { openSession } from './sessions.js'
import {
  auditOperator,
  csrfTokenFor,
  toOperator,
  type OperatorRow,
  type OperatorsDeps,
  type RequestContext,
  type SignedIn,
} from './operator.js'

const FAILED = 'Email, password or code not accepted'

/**
 * A sign-in with email, password and TOTP code. Every refusal is the same 401, and an unknown
 * email costs the same work and statements as a known one with a wrong password.
 */
export async function signIn(
  deps: OperatorsDeps,
  { email, password, code }: { email: string; password: string; code: string },
  ctx: RequestContext,
): Promise<SignedIn> {
  const { db, box } = deps
  const address = email.trim().toLowerCase()
  const net = clientNet(ctx.clientIp)
  const { rows: found } = await db.query<OperatorRow>(sql`SELECT * FROM operators WHERE email = ${address}`)
  const row = found[0]
  // The password is checked whatever happens next, so that an unknown email takes as long.
  const passwordOk = await verifyPassword(password, row?.password_hash ?? DECOY_HASH)
  const usable = row?.status === 'active' && row.totp_secret_enc ? row : undefined
  const step =
    usable && passwordOk
      ? matchTotp(fromBase32(box.open(usable.totp_secret_enc!)), code, deps.now())
      : undefined
  // Known or not, active or not, every sign-in runs the same statements from here: the lock and
  // the count are kept per email typed and client address, not per operator.
  const result = await db.tx(async (q) => {
    const at = deps.now()
    const { rows } = await q.query<OperatorRow>(
      sql`SELECT * FROM operators WHERE email = ${address} FOR UPDATE`,
    )
    const current = rows[0]
    const locked = await lockedUntil(q, address, net)
    // While this address is locked for this email, nothing is checked and nothing is counted.
    if (locked !== null && locked > at) return undefined
    // A code of a step already used (or older) is a replay, and fails like a wrong code.
    const admitted =
      usable !== undefined &&
      current?.id === usable.id &&
      current.status === 'active' &&
      passwordOk &&
      step !== undefined &&
      (current.totp_last_step === null || step > BigInt(current.totp_last_step))
    if (!admitted) {
      await countFailure(deps, q, address, net, at, current, ctx)
      return undefined
    }
    await q.query(
      sql`UPDATE operators SET totp_last_step = ${step}, updated_at = ${at} WHERE id = ${current.id}`,
    )
    // A success forgets this address's failures; other addresses keep theirs.
    await forgetFailuresFrom(q, address, net)
    const { sessionToken, expiresAt } = await openSession(deps, q, current.id, at, ctx.clientIp)
    const operator = toOperator(current)
    await auditOperator(deps, q, operator, 'operator.sign_in', ctx, { expiresAt })
    return { sessionToken, csrfToken: csrfTokenFor(sessionToken), operator, expiresAt }
  })
  if (!result) throw new ApiError('unauthorized', FAILED)
  return result
}
